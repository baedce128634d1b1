package drive

// Thumbnails and previews: which types have one, the preview tokens, the
// cache of derived images and its eviction. Decoding and encoding images is
// the Imaging adapter's.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"runtime"
	"strings"
	"time"

	"atrium/app"
)

// Imaging decodes and encodes images (an adapter: package imaging).
type Imaging interface {
	// Size reads an image's width and height from its header, without
	// decoding it; ErrImageUnreadable when r is no image it can read.
	Size(r io.Reader) (width, height int, err error)
	// Thumbnail decodes r (ErrImageUnreadable when it cannot) and returns it
	// as a lossy WebP of quality (0–100) fitting a size×size square.
	Thumbnail(r io.Reader, size, quality int) ([]byte, error)
}

// ErrImageUnreadable is an Imaging's answer to content that is not an image
// it can read, or a damaged one.
var ErrImageUnreadable = errors.New("not a readable image")

// WithImaging sets the image codec of thumbnails and previews; without one,
// no file has a preview.
func (o Options) WithImaging(i Imaging) Options {
	o.Imaging = i
	return o
}

// Kinds of derived images.
const (
	KindThumb   = "thumb"
	KindPreview = "preview"
)

// Thumbnail sizes (the bounding square, in pixels), the size of previews and
// the lifetime of preview tokens.
const (
	ThumbMinSize     = 64
	ThumbMaxSize     = 512
	ThumbDefaultSize = 256
	PreviewSize      = 1280
	PreviewTokenTTL  = 5 * time.Minute
)

const (
	defaultPreviewCacheBytes = 1 << 30
	defaultPreviewMaxPixels  = 50_000_000
	// previewMaxSourceBytes caps the bytes of an image read to make a preview.
	previewMaxSourceBytes = 256 << 20
	// previewQuality is the lossy WebP quality of derived images.
	previewQuality = 80
)

// renderSlots bounds the images decoded at once in the process: a decoded
// image at the pixel limit takes hundreds of megabytes.
var renderSlots = make(chan struct{}, max(1, runtime.NumCPU()/2))

// Thumbnail is a presigned URL of a WebP thumbnail (ThumbnailUrl).
type Thumbnail struct {
	URL       string    `json:"url"`
	Size      int       `json:"size"`
	ExpiresAt time.Time `json:"expires_at"`
}

// PreviewTicket is a single-use preview token and the URL that takes it.
type PreviewTicket struct {
	Token      string    `json:"token"`
	ExpiresAt  time.Time `json:"expires_at"`
	PreviewURL string    `json:"preview_url"`
}

// Derived is a cached thumbnail or preview of the content Source ("sha256:…"):
// a WebP blob Hash of Bytes bytes fitting a Size×Size square.
type Derived struct {
	Source     string
	Kind       string
	Size       int
	Hash       string
	Bytes      int64
	CreatedAt  time.Time
	LastUsedAt time.Time
}

// PreviewToken is a stored preview token; Hash is the hex SHA-256 of the token.
type PreviewToken struct {
	Hash      string
	FileID    string
	OrgID     string
	UserID    string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// PreviewStore keeps derived images and preview tokens.
type PreviewStore interface {
	// Derived returns the cached image of source; not_found when none.
	Derived(ctx context.Context, source, kind string, size int) (Derived, error)
	AddDerived(ctx context.Context, d Derived) error
	TouchDerived(ctx context.Context, source, kind string, size int, at time.Time) error
	// DerivedBytes returns the bytes of all cached images.
	DerivedBytes(ctx context.Context) (int64, error)
	// LeastRecentDerived returns cached images, the least recently used first.
	LeastRecentDerived(ctx context.Context, limit int) ([]Derived, error)
	// StaleDerived returns cached images whose source no version refers to.
	StaleDerived(ctx context.Context, limit int) ([]Derived, error)
	DeleteDerived(ctx context.Context, d Derived) error

	CreatePreviewToken(ctx context.Context, t PreviewToken) error
	// UsePreviewToken marks the unused, unexpired token hash of fileID used, at
	// most once; unknown, used or expired → not_found.
	UsePreviewToken(ctx context.Context, hash, fileID string, now time.Time) (PreviewToken, error)
	DeleteExpiredPreviewTokens(ctx context.Context, before time.Time) (int, error)
}

// previewTypes are the mime types thumbnails and previews are made of. HEIC
// (no pure-Go decoder) and PDF (no pure-Go renderer) answer no_preview.
var previewTypes = map[string]bool{
	"image/jpeg": true, "image/pjpeg": true, "image/png": true, "image/gif": true, "image/webp": true,
	"image/tiff": true, "image/bmp": true, "image/x-ms-bmp": true,
}

// Previewable reports whether thumbnails and previews are made of mimeType.
func Previewable(mimeType string) bool {
	m, _, _ := strings.Cut(mimeType, ";")
	return previewTypes[strings.ToLower(strings.TrimSpace(m))]
}

func (s *Service) previewLimits() (cacheBytes, maxPixels int64) {
	cacheBytes, maxPixels = s.opts.PreviewCacheBytes, s.opts.PreviewMaxPixels
	if cacheBytes <= 0 {
		cacheBytes = defaultPreviewCacheBytes
	}
	if maxPixels <= 0 {
		maxPixels = defaultPreviewMaxPixels
	}
	return cacheBytes, maxPixels
}

// Thumbnail returns a presigned URL of a WebP thumbnail of an image the caller
// may read, fitting a size×size square (64–512; 0: 256). It is made on first
// request and cached by content hash. Errors: insufficient_scope (no
// drive:read), no_bound_user, feature_not_in_plan, validation_failed (a size
// outside 64–512, an image over the byte or pixel limit), not_found (no such
// item, or not shared with the caller), no_preview (a folder, a type without
// previews, no imaging on the server, an unreadable image), conflict (an
// archived file, a file not active).
func (dv *DerivedData) Thumbnail(ctx context.Context, p *app.Principal, id string, size int) (Thumbnail, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return Thumbnail{}, err
	}
	if size == 0 {
		size = ThumbDefaultSize
	}
	if size < ThumbMinSize || size > ThumbMaxSize {
		return Thumbnail{}, app.Invalid("query.size", fmt.Sprintf("must be between %d and %d", ThumbMinSize, ThumbMaxSize), size)
	}
	f, err := dv.core.access(ctx, p, id, PermView)
	if err != nil {
		return Thumbnail{}, err
	}
	hash, err := dv.derive(ctx, f, KindThumb, size)
	if err != nil {
		return Thumbnail{}, err
	}
	return Thumbnail{URL: dv.core.urls.Download(blobName(hash), webpName(f.Name), "image/webp", true, dv.core.opts.URLTTL), Size: size,
		ExpiresAt: dv.core.clock.Now().Add(dv.core.opts.URLTTL)}, nil
}

// CreatePreviewToken returns a single-use token (valid 5 minutes) that opens a
// WebP preview of an image the caller may read, without other credentials.
// Errors: insufficient_scope (no drive:read), no_bound_user,
// feature_not_in_plan, not_found (no such item, or not shared with the caller),
// no_preview (a folder, a type without previews), conflict (an archived file, a
// file not active).
func (dv *DerivedData) CreatePreviewToken(ctx context.Context, p *app.Principal, id string) (PreviewTicket, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return PreviewTicket{}, err
	}
	f, err := dv.core.access(ctx, p, id, PermView)
	if err != nil {
		return PreviewTicket{}, err
	}
	if err := previewSource(f); err != nil {
		return PreviewTicket{}, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return PreviewTicket{}, fmt.Errorf("preview token: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(raw)
	now := dv.core.clock.Now()
	t := PreviewToken{Hash: tokenHash(tok), FileID: f.ID, OrgID: f.OrgID, UserID: p.UserID, ExpiresAt: now.Add(PreviewTokenTTL), CreatedAt: now}
	if err := dv.core.store.InTx(ctx, func(ctx context.Context) error { return dv.core.store.CreatePreviewToken(ctx, t) }); err != nil {
		return PreviewTicket{}, err
	}
	u := strings.TrimRight(dv.core.opts.PublicURL, "/") + "/api/v1/drive/" + url.PathEscape(f.ID) + "/preview?token=" + url.QueryEscape(tok)
	return PreviewTicket{Token: tok, ExpiresAt: t.ExpiresAt, PreviewURL: u}, nil
}

// Preview consumes a preview token of file id and returns a presigned URL of
// the file's WebP preview. An unknown, used or expired token → not_found, as
// does a file its user can no longer see. Errors: not_found (an unknown, used
// or expired token, a file its user can no longer see), no_preview (a folder, a
// type without previews, no imaging on the server, an unreadable image),
// conflict (an archived file, a file not active), validation_failed (an image
// over the byte or pixel limit).
func (dv *DerivedData) Preview(ctx context.Context, id, token string) (PresignedURL, error) {
	gone := app.Errorf(app.ENotFound, "The preview token is unknown, already used or expired. Ask for a new one.")
	if token == "" {
		return PresignedURL{}, gone
	}
	var t PreviewToken
	err := dv.core.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		t, err = dv.core.store.UsePreviewToken(ctx, tokenHash(token), id, dv.core.clock.Now())
		return err
	})
	if app.ErrorCode(err) == app.ENotFound {
		return PresignedURL{}, gone
	}
	if err != nil {
		return PresignedURL{}, err
	}
	f, err := dv.core.store.File(ctx, id)
	if app.ErrorCode(err) == app.ENotFound || (err == nil && f.OrgID != t.OrgID) {
		return PresignedURL{}, notFound()
	}
	if err != nil {
		return PresignedURL{}, err
	}
	if f.OwnerID != t.UserID {
		if f.Status == StatusPending || f.TrashedAt != nil {
			return PresignedURL{}, notFound()
		}
		perm, err := dv.core.sharedPermission(ctx, t.UserID, f)
		if err != nil {
			return PresignedURL{}, err
		}
		if perm == "" {
			return PresignedURL{}, notFound()
		}
	}
	hash, err := dv.derive(ctx, f, KindPreview, PreviewSize)
	if err != nil {
		return PresignedURL{}, err
	}
	return PresignedURL{URL: dv.core.urls.Download(blobName(hash), webpName(f.Name), "image/webp", true, dv.core.opts.URLTTL),
		ExpiresAt: dv.core.clock.Now().Add(dv.core.opts.URLTTL)}, nil
}

func tokenHash(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// webpName is name with its extension replaced by .webp.
func webpName(name string) string {
	return strings.TrimSuffix(name, path.Ext(name)) + ".webp"
}

func noPreview(f File) error {
	return app.Errorf(app.ENoPreview, "No preview of %q: previews are made of JPEG, PNG, GIF, WebP, TIFF and BMP images.", f.Name)
}

// previewSource returns why no preview of f can be made, nil when one can.
func previewSource(f File) error {
	switch {
	case f.IsFolder:
		return app.Errorf(app.ENoPreview, "%q is a folder; folders have no preview.", f.Name)
	case isCold(f):
		return archivedConflict(f)
	case f.Status != StatusActive:
		return app.Errorf(app.EConflict, "The file is %s; its content is not available now.", f.Status)
	case !Previewable(f.MimeType):
		return noPreview(f)
	}
	return nil
}

// derive returns the hash ("sha256:…") of the cached kind/size image of f,
// making and caching it first when needed.
func (dv *DerivedData) derive(ctx context.Context, f File, kind string, size int) (string, error) {
	if err := previewSource(f); err != nil {
		return "", err
	}
	now := dv.core.clock.Now()
	d, err := dv.core.store.Derived(ctx, f.ContentHash, kind, size)
	switch {
	case err == nil && dv.core.blobs.Exists(ctx, blobName(d.Hash)):
		if err := dv.core.store.TouchDerived(ctx, d.Source, kind, size, now); err != nil {
			return "", err
		}
		return d.Hash, nil
	case err != nil && app.ErrorCode(err) != app.ENotFound:
		return "", err
	}
	data, err := dv.render(ctx, f, size)
	if err != nil {
		return "", err
	}
	hash, n, err := dv.core.blobs.Put(ctx, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", fmt.Errorf("store %s of %s: %w", kind, f.ID, err)
	}
	d = Derived{Source: f.ContentHash, Kind: kind, Size: size, Hash: FormatHash(hash), Bytes: n, CreatedAt: now, LastUsedAt: now}
	if err := dv.core.referenced(ctx, hash, func(ctx context.Context) error { return dv.core.store.AddDerived(ctx, d) }); err != nil {
		return "", err
	}
	if _, err := dv.core.evictPreviews(ctx); err != nil {
		dv.core.log.WarnContext(ctx, "drive preview eviction failed", "err", err)
	}
	return d.Hash, nil
}

// render decodes f's image (the Imaging adapter), refusing sources over the pixel limit before
// decoding them (decompression bombs), and returns a lossy WebP fitting a
// size×size square.
func (dv *DerivedData) render(ctx context.Context, f File, size int) ([]byte, error) {
	if dv.core.opts.Imaging == nil {
		return nil, app.Errorf(app.ENoPreview, "No preview of %q: this server makes no previews.", f.Name)
	}
	_, maxPixels := dv.core.previewLimits()
	if f.SizeBytes > previewMaxSourceBytes {
		return nil, app.Invalid("path.file_id", fmt.Sprintf("The image is %d bytes; previews are made of images up to %d bytes.",
			f.SizeBytes, previewMaxSourceBytes), f.ID)
	}
	rc, err := dv.core.blobs.Open(ctx, f.Hash())
	if err != nil {
		return nil, fmt.Errorf("open blob of %s: %w", f.ID, err)
	}
	defer rc.Close()
	width, height, err := dv.core.opts.Imaging.Size(io.LimitReader(rc, previewMaxSourceBytes))
	if err != nil {
		return nil, app.Errorf(app.ENoPreview, "No preview of %q: its content is not an image this server can read.", f.Name)
	}
	if px := int64(width) * int64(height); width <= 0 || height <= 0 || px > maxPixels {
		return nil, app.Invalid("path.file_id", fmt.Sprintf("The image is %d×%d pixels; previews are made of images up to %d pixels.",
			width, height, maxPixels), f.ID)
	}
	renderSlots <- struct{}{}
	defer func() { <-renderSlots }()
	if _, err := rc.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("rewind blob of %s: %w", f.ID, err)
	}
	out, err := dv.core.opts.Imaging.Thumbnail(io.LimitReader(rc, previewMaxSourceBytes), size, previewQuality)
	if errors.Is(err, ErrImageUnreadable) {
		return nil, app.Errorf(app.ENoPreview, "No preview of %q: the image is damaged (%v).", f.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("preview of %s: %w", f.ID, err)
	}
	return out, nil
}

// maintainPreviews forgets expired preview tokens and cached images of
// content that no longer exists, and evicts the least recently used images
// over the cache cap; their blobs become orphans for the collector.
func (s *Service) maintainPreviews(ctx context.Context, now time.Time) (int, error) {
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		_, err := s.store.DeleteExpiredPreviewTokens(ctx, now)
		return err
	})
	if err != nil {
		return 0, err
	}
	total := 0
	deadline := time.Now().Add(sweepTime)
	for time.Now().Before(deadline) {
		ds, err := s.store.StaleDerived(ctx, batch)
		if err != nil || len(ds) == 0 {
			break
		}
		if err := s.dropDerived(ctx, ds); err != nil {
			return total, err
		}
		total += len(ds)
	}
	n, err := s.evictPreviews(ctx)
	return total + n, err
}

func (s *Service) dropDerived(ctx context.Context, ds []Derived) error {
	return s.store.InTx(ctx, func(ctx context.Context) error {
		for _, d := range ds {
			if err := s.store.DeleteDerived(ctx, d); err != nil {
				return err
			}
			if err := s.orphan(ctx, d.Hash); err != nil {
				return err
			}
		}
		return nil
	})
}

// evictPreviews drops the least recently used cached images until their bytes
// fit the cache cap. Presigned URLs already handed out keep working: an
// orphaned blob outlives them (OrphanGrace > URLTTL).
func (s *Service) evictPreviews(ctx context.Context) (int, error) {
	limit, _ := s.previewLimits()
	total, err := s.store.DerivedBytes(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for total > limit {
		ds, err := s.store.LeastRecentDerived(ctx, 100)
		if err != nil {
			return n, err
		}
		var drop []Derived
		for _, d := range ds {
			if total <= limit {
				break
			}
			drop = append(drop, d)
			total -= d.Bytes
		}
		if len(drop) == 0 {
			break
		}
		if err := s.dropDerived(ctx, drop); err != nil {
			return n, err
		}
		n += len(drop)
	}
	return n, nil
}

// DerivedData is the part of the drive that serves what is made from the
// stored contents rather than stored by a person: thumbnails and previews of
// images, a folder as a ZIP, the contents' digests (SHA-1, MD5) that sync
// clients compare, and the full-text search. It holds the drive's core
// (Service), whose access rules every read here goes through; the caches it
// keeps (derived images, digests) are kept up by the core's maintenance.
type DerivedData struct {
	core *Service
}

// DerivedData returns the drive's derived data part. Errors: none of its own.
func (s *Service) DerivedData() *DerivedData { return s.derived }
