package drive

// Direct transfers: with an object store that clients reach themselves
// (Direct), download URLs of stored objects and the three-step upload's PUT
// URL point at the store, and the bytes never pass through a node; Confirm
// then checks what the client put there before the file becomes visible.
// Without one, the node's own URLs (URLs) serve and take the bytes.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"atrium/app"
)

// Direct is an object store that clients reach themselves. The bytes of a
// three-step upload are staged there under the upload's ref, written by
// the client, until Confirm has read them back and made them a content.
type Direct interface {
	// DownloadURL returns a URL by which a client GETs (ranges too) the
	// object hash, one of Blobs.Put's — not a small content, which has none
	// — served under name with mimeType, inline or as an attachment.
	DownloadURL(ctx context.Context, hash, name, mimeType string, inline bool, ttl time.Duration) (string, error)
	// UploadURL returns a URL accepting PUTs of upload ref's bytes into the
	// store until ttl; each replaces what the previous one staged.
	UploadURL(ctx context.Context, ref string, ttl time.Duration) (string, error)
	// Staged returns what is staged for ref: ErrNotStaged when nothing is.
	Staged(ctx context.Context, ref string) (StagedBytes, error)
	// OpenStaged reads the bytes staged for ref in version tag; replaced
	// bytes fail wrapping ErrStagedChanged, removed ones ErrNotStaged.
	OpenStaged(ctx context.Context, ref, tag string) (io.ReadCloser, error)
	// Promote makes the bytes staged for ref in version tag, of SHA-256 hash
	// and size bytes, the object hash of the store (Blobs sees it), unless
	// it holds that content already; replaced bytes fail wrapping
	// ErrStagedChanged. The staged bytes stay until DropStaged.
	Promote(ctx context.Context, ref, tag, hash string, size int64) error
	// DropStaged removes what is staged for ref; nothing is not an error.
	DropStaged(ctx context.Context, ref string) error
	// SweepStaged removes the bytes staged before t and returns how many.
	SweepStaged(ctx context.Context, before time.Time) (int, error)
	// MaxPut is the most bytes one PUT to an upload URL may carry.
	MaxPut() int64
}

// StagedBytes is what a client staged for an upload: its size and the
// store's tag of that version of the bytes.
type StagedBytes struct {
	Size int64
	Tag  string
}

var (
	// ErrNotStaged is what Direct answers for an upload with no bytes.
	ErrNotStaged = errors.New("no bytes staged")
	// ErrStagedChanged is what Direct answers for staged bytes replaced
	// since they were looked at.
	ErrStagedChanged = errors.New("staged bytes changed")
)

// WithDirect sets the store that clients reach themselves; without it (nil)
// the node's URLs serve and take every byte.
func (o Options) WithDirect(d Direct) Options {
	o.direct = d
	return o
}

// maxPresignedUpload is the most bytes a three-step upload may announce:
// Options.MaxUploadBytes, and no more than the direct store takes in one PUT.
func (up *Uploads) maxPresignedUpload() int64 {
	if up.core.opts.direct == nil {
		return up.core.opts.MaxUploadBytes
	}
	return min(up.core.opts.MaxUploadBytes, up.core.opts.direct.MaxPut())
}

// uploadURL returns the URL a client PUTs the bytes of upload ref to.
func (up *Uploads) uploadURL(ctx context.Context, ref string) (string, error) {
	if up.core.opts.direct == nil {
		return up.core.urls.Upload(ref, up.core.opts.UploadTTL), nil
	}
	u, err := up.core.opts.direct.UploadURL(ctx, ref, up.core.opts.UploadTTL)
	if err != nil {
		return "", fmt.Errorf("upload url: %w", err)
	}
	return u, nil
}

// downloadURL returns a URL serving content hash of size bytes under name:
// the store's own when clients reach it and the content is an object there,
// the node's for a small content (which may be in the database alone) or
// without such a store.
func (s *Service) downloadURL(ctx context.Context, hash string, size int64, name, mimeType string, inline bool) (string, error) {
	if s.opts.direct == nil || s.SmallContent(size) {
		return s.urls.Download(hash, name, mimeType, inline, s.opts.URLTTL), nil
	}
	u, err := s.opts.direct.DownloadURL(ctx, hash, name, mimeType, inline, s.opts.URLTTL)
	if err != nil {
		return "", fmt.Errorf("download url: %w", err)
	}
	return u, nil
}

// takeStaged receives the bytes a client PUT into the direct store for the
// caller's newest upload of file fileID, as ReceiveUpload receives relayed
// ones: the upload must still take bytes (not expired, room in the quota) and
// they must be the size announced; they are read back for their SHA-256 and
// digests and become the content the upload names — a small one is kept in
// the transaction that records it, a larger one is copied within the store
// to its object (or not at all when the store holds it already) — and the
// staged copy goes. Everything else (no upload, bytes relayed already, none
// staged yet) is left for Confirm to answer as it always does.
func (up *Uploads) takeStaged(ctx context.Context, p *app.Principal, fileID string) error {
	u, err := up.core.store.LatestUpload(ctx, fileID, p.UserID)
	if app.ErrorCode(err) == app.ENotFound || (err == nil && u.ContentHash != "") {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := up.confirmable(ctx, p, fileID); err != nil {
		return err
	}
	d := up.core.opts.direct
	st, err := d.Staged(ctx, u.ID)
	if errors.Is(err, ErrNotStaged) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("staged upload %s: %w", u.ID, err)
	}
	if _, err := up.receivable(ctx, u.ID, "", st.Size); err != nil {
		return err
	}
	c, err := up.readStaged(ctx, u.ID, st)
	if errors.Is(err, ErrNotStaged) {
		return nil // removed meanwhile: nothing arrived
	}
	if err != nil {
		return err
	}
	var promote func() error
	if c.small == nil {
		promote = func() error { return d.Promote(ctx, u.ID, st.Tag, c.hash, c.size) }
	}
	err = up.core.storeReferenced(ctx, c, promote, func(ctx context.Context) error {
		return up.core.store.SetUploadReceived(ctx, u.ID, FormatHash(c.hash), up.core.clock.Now())
	})
	if errors.Is(err, ErrStagedChanged) {
		return stagedChanged()
	}
	if err != nil {
		return fmt.Errorf("staged upload %s: %w", u.ID, err)
	}
	if err := d.DropStaged(ctx, u.ID); err != nil {
		// The content is referenced; the staged copy is swept later.
		up.core.log.WarnContext(ctx, "staged upload not removed", "ref", u.ID, "err", err)
	}
	return nil
}

func stagedChanged() error {
	return app.Errorf(app.EConflict, "The bytes of the upload were replaced while they were checked; confirm again once the PUT is done.")
}

// readStaged reads the bytes staged for ref in version st back and returns
// them as a content: its SHA-256 and digests, and the bytes themselves when
// small.
func (up *Uploads) readStaged(ctx context.Context, ref string, st StagedBytes) (content, error) {
	r, err := up.core.opts.direct.OpenStaged(ctx, ref, st.Tag)
	if errors.Is(err, ErrStagedChanged) {
		return content{}, stagedChanged()
	}
	if err != nil {
		return content{}, fmt.Errorf("read staged upload %s: %w", ref, err)
	}
	defer r.Close()
	dg := newDigester(r)
	h := sha256.New()
	var small *bytes.Buffer
	w := io.Writer(h)
	if up.core.SmallContent(st.Size) {
		small = bytes.NewBuffer(make([]byte, 0, st.Size))
		w = io.MultiWriter(h, small)
	}
	n, err := io.Copy(w, io.LimitReader(dg, st.Size+1))
	if errors.Is(err, ErrStagedChanged) || (err == nil && n != st.Size) {
		return content{}, stagedChanged()
	}
	if err != nil {
		return content{}, fmt.Errorf("read staged upload %s: %w", ref, err)
	}
	c := content{hash: hex.EncodeToString(h.Sum(nil)), size: n}
	if small != nil {
		c.small = small.Bytes()
	}
	return c.withDigests(dg.sums()), nil
}

// sweepStaged removes staged bytes older than an upload lives: their URL has
// expired and so has their upload, whatever became of its row (a confirmed
// upload whose staged copy could not be removed, a process stopped between
// the copy and the removal).
func (s *Service) sweepStaged(ctx context.Context, now time.Time) (int, error) {
	if s.opts.direct == nil {
		return 0, nil
	}
	return s.opts.direct.SweepStaged(ctx, now.Add(-s.opts.UploadTTL))
}
