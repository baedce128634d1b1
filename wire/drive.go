package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"atrium/app/drive"
	"atrium/storage/blob"
	"atrium/storage/s3blob"
	"atrium/storage/sqldb"
	"atrium/web/presign"
	"atrium/web/tus"
	"atrium/web/webdav"
)

// contents is the drive's byte store (drive.Blobs) of two tiers: objects of
// the blob store, one file (or key) each, and small contents in the database
// (sqldb.SmallBlobs), written in the transaction of their reference. A
// content may be in both (stored whole, then again as a small one), and then
// it is the same bytes, so reads may look in either first: in the blob store
// when it is the local disk (a stat is cheaper than a query), in the database
// when it is a bucket (a query is cheaper than a request to the store, and
// most contents are small).
type contents struct {
	files blob.Objects
	small sqldb.SmallBlobs
	// smallFirst: look in the database first (the blob store is remote).
	smallFirst bool
}

func (c contents) Put(ctx context.Context, r io.Reader, limit int64) (string, int64, error) {
	o, err := c.files.Put(ctx, r, limit)
	if errors.Is(err, blob.ErrTooLarge) {
		return "", 0, fmt.Errorf("%w: %w", drive.ErrTooLarge, err)
	}
	return o.Hash, o.Size, err
}

func (c contents) PutSmall(ctx context.Context, hash string, data []byte) error {
	if err := blob.ValidHash(hash); err != nil {
		return fmt.Errorf("small content: %w", err)
	}
	return c.small.Put(ctx, hash, data, time.Now())
}

func (c contents) Exists(ctx context.Context, hash string) bool {
	small := func() bool {
		ok, err := c.small.Exists(ctx, hash)
		return err == nil && ok
	}
	if c.smallFirst {
		return small() || c.files.Exists(ctx, hash)
	}
	return c.files.Exists(ctx, hash) || small()
}

// Open opens hash; a content in neither tier is blob.ErrNotFound.
func (c contents) Open(ctx context.Context, hash string) (io.ReadSeekCloser, error) {
	if c.smallFirst {
		if r, err := c.openSmall(ctx, hash); err == nil || !errors.Is(err, sqldb.ErrNoSmallBlob) {
			return r, err
		}
		return c.files.Open(ctx, hash)
	}
	f, err := c.files.Open(ctx, hash)
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, blob.ErrNotFound) {
		return nil, err
	}
	r, serr := c.openSmall(ctx, hash)
	if errors.Is(serr, sqldb.ErrNoSmallBlob) {
		return nil, err
	}
	return r, serr
}

// openSmall opens the small content hash (sqldb.ErrNoSmallBlob: none).
func (c contents) openSmall(ctx context.Context, hash string) (io.ReadSeekCloser, error) {
	data, err := c.small.Data(ctx, hash)
	if err != nil {
		return nil, err
	}
	return nopCloser{bytes.NewReader(data)}, nil
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// Delete removes hash from both tiers.
func (c contents) Delete(ctx context.Context, hash string) error {
	if err := c.files.Delete(ctx, hash); err != nil {
		return err
	}
	return c.small.Delete(ctx, hash)
}

// Walk walks the blob store's objects, then the small contents.
func (c contents) Walk(ctx context.Context, fn func(string, time.Time) error) error {
	if err := c.files.Walk(ctx, fn); err != nil {
		return err
	}
	return c.small.Walk(ctx, fn)
}

// abandonedMultipart is how old a multipart upload of the bucket must be to
// be taken for one whose process died in the middle (no upload under way
// began that long ago).
const abandonedMultipart = 24 * time.Hour

// Sweep (drive.Sweeper) aborts the bucket's multipart uploads begun over
// abandonedMultipart ago; the local disk has none.
func (c contents) Sweep(ctx context.Context, now time.Time) (int, error) {
	if m, ok := c.files.(interface {
		SweepMultipart(ctx context.Context, before time.Time) (int, error)
	}); ok {
		return m.SweepMultipart(ctx, now.Add(-abandonedMultipart))
	}
	return 0, nil
}

// driveURLs adapts the presigned URL signer to drive.URLs.
type driveURLs struct{ signer *presign.Signer }

func (u driveURLs) Download(hash, name, mimeType string, inline bool, ttl time.Duration) string {
	p := url.Values{presign.ParamContentType: {mimeType}, presign.ParamFilename: {name}}
	if inline {
		p.Set(presign.ParamInline, "1")
	}
	return u.signer.URL("GET", presign.ObjectPath(hash), p, ttl)
}

func (u driveURLs) Upload(ref string, ttl time.Duration) string {
	return u.signer.URL("PUT", presign.UploadPath(ref), nil, ttl)
}

// directTransfers is the rule of where clients send and fetch the bytes of
// the drive, in one place: straight to the bucket when [blob]
// s3_public_endpoint names the clients' address of the object store (it may
// be the nodes' address, s3_endpoint, written again); through the nodes
// (driveURLs) otherwise — on the local disk, or with a store that only the
// nodes reach. nil: through the nodes. origin is the store's origin, which
// the web app's pages may then load URLs of ("" with nil).
func directTransfers(objects blob.Objects, cfg BlobConfig) (d drive.Direct, origin string) {
	s, ok := objects.(*s3blob.Store)
	if !ok || cfg.S3PublicEndpoint == "" {
		return nil, ""
	}
	return bucketDirect{s}, strings.TrimRight(cfg.S3PublicEndpoint, "/")
}

// bucketDirect is the bucket as the drive's direct store (drive.Direct):
// presigned URLs of the store at its public endpoint, and the three-step
// upload's bytes staged under uploads/<ref>.
type bucketDirect struct{ store *s3blob.Store }

// DownloadURL presigns a GET of the object that makes the store answer with
// the file's type and a Content-Disposition built as the node's own download
// door builds it (presign.ContentDisposition).
func (d bucketDirect) DownloadURL(ctx context.Context, hash, name, mimeType string, inline bool, ttl time.Duration) (string, error) {
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	p := url.Values{"response-content-type": {mimeType},
		"response-content-disposition": {presign.ContentDisposition(name, inline)}}
	u, err := d.store.PresignGet(ctx, hash, ttl, p)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

func (d bucketDirect) UploadURL(ctx context.Context, ref string, ttl time.Duration) (string, error) {
	u, err := d.store.PresignPut(ctx, ref, ttl)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

func (d bucketDirect) Staged(ctx context.Context, ref string) (drive.StagedBytes, error) {
	st, err := d.store.StatStaged(ctx, ref)
	if err != nil {
		return drive.StagedBytes{}, stagedError(err)
	}
	return drive.StagedBytes{Size: st.Size, Tag: st.ETag}, nil
}

func (d bucketDirect) OpenStaged(ctx context.Context, ref, tag string) (io.ReadCloser, error) {
	r, err := d.store.OpenStaged(ctx, ref, tag)
	if err != nil {
		return nil, stagedError(err)
	}
	return stagedReader{r}, nil
}

func (d bucketDirect) Promote(ctx context.Context, ref, tag, hash string, size int64) error {
	return stagedError(d.store.Promote(ctx, ref, tag, hash, size))
}

func (d bucketDirect) DropStaged(ctx context.Context, ref string) error {
	return d.store.DeleteStaged(ctx, ref)
}

func (d bucketDirect) SweepStaged(ctx context.Context, before time.Time) (int, error) {
	return d.store.SweepStaged(ctx, before)
}

func (bucketDirect) MaxPut() int64 { return s3blob.MaxPutBytes }

// stagedError adds the drive's sentinels to the bucket's errors about
// staged bytes.
func stagedError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, s3blob.ErrStagedChanged):
		return fmt.Errorf("%w: %w", drive.ErrStagedChanged, err)
	case errors.Is(err, blob.ErrNotFound):
		return fmt.Errorf("%w: %w", drive.ErrNotStaged, err)
	}
	return err
}

// stagedReader is a staged object whose read errors carry the drive's
// sentinels.
type stagedReader struct{ r io.ReadCloser }

func (s stagedReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		err = stagedError(err)
	}
	return n, err
}

func (s stagedReader) Close() error { return s.r.Close() }

// tusParts is where the tus door keeps the bytes of uploads in progress: with
// the bytes in a bucket, its parts go there too (any node takes an upload's
// next PATCH); nil, on the local disk, for one file per upload under
// --data/tus.
func tusParts(objects blob.Objects) tus.Parts {
	if s, ok := objects.(*s3blob.Store); ok {
		return s.TusParts()
	}
	return nil
}

var _ tus.Parts = s3blob.TusParts{}

// chunkStore is where the sync clients' chunked uploads wait for their MOVE:
// the bucket when the bytes are there (any node takes the next chunk), else
// --data/chunks.
func chunkStore(objects blob.Objects, data string) (webdav.ChunkStore, error) {
	if s, ok := objects.(*s3blob.Store); ok {
		return bucketChunks{s.Chunks()}, nil
	}
	return webdav.NewDirChunks(filepath.Join(data, "chunks"))
}

// bucketChunks is the bucket's s3blob.Chunks as a webdav.ChunkStore.
type bucketChunks struct{ s3blob.Chunks }

func (b bucketChunks) List(ctx context.Context, user, transfer string) ([]webdav.StoredChunk, error) {
	list, err := b.Chunks.List(ctx, user, transfer)
	if err != nil {
		return nil, err
	}
	out := make([]webdav.StoredChunk, len(list))
	for i, c := range list {
		out[i] = webdav.StoredChunk{Name: c.Name, Size: c.Size, ModTime: c.ModTime}
	}
	return out, nil
}

func (b bucketChunks) Put(ctx context.Context, user, transfer, name string, r io.Reader, size, limit int64) error {
	err := b.Chunks.Put(ctx, user, transfer, name, r, size, limit)
	if errors.Is(err, s3blob.ErrChunkTooLarge) {
		return fmt.Errorf("%w: %w", webdav.ErrChunkTooLarge, err)
	}
	return err
}

var _ webdav.ChunkStore = bucketChunks{}

// tusBlobs is the blob store as the tus door needs it (tus.Blobs): a
// finished upload's file is moved into the disk store, or uploaded to the
// bucket and removed.
type tusBlobs struct{ objects blob.Objects }

func (b tusBlobs) Adopt(path, hash string, size int64) error {
	_, err := b.objects.Adopt(context.Background(), path, hash, size)
	return err
}

func (b tusBlobs) Stat(hash string) (int64, error) {
	return b.objects.Stat(context.Background(), hash)
}
