package s3blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"atrium/storage/blob"
)

// copyBufferSize is the size of the chunks Put reads and spools.
const copyBufferSize = 256 << 10

var buffers = sync.Pool{New: func() any { b := make([]byte, copyBufferSize); return &b }}

// ctxReader fails its reads once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// spool copies r, at most limit bytes when limit > 0, into a new scratch file
// while hashing it, and returns the file (at offset 0: the caller closes and
// removes it) and the object it holds.
func (s *Store) spool(ctx context.Context, r io.Reader, limit int64) (*os.File, blob.Object, error) {
	f, err := os.CreateTemp(s.scratch, "put-*")
	if err != nil {
		return nil, blob.Object{}, fmt.Errorf("create scratch file: %w", err)
	}
	fail := func(err error) (*os.File, blob.Object, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, blob.Object{}, err
	}
	h := sha256.New()
	src := io.Reader(ctxReader{ctx, r})
	if limit > 0 {
		src = io.LimitReader(src, limit+1)
	}
	buf := buffers.Get().(*[]byte)
	n, err := io.CopyBuffer(io.MultiWriter(f, h), src, *buf)
	buffers.Put(buf)
	if err != nil {
		return fail(fmt.Errorf("spool: %w", err))
	}
	if limit > 0 && n > limit {
		return fail(fmt.Errorf("%w: more than %d bytes", blob.ErrTooLarge, limit))
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(fmt.Errorf("spool: %w", err))
	}
	return f, blob.Object{Hash: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}

// Put streams r into the bucket as blobs/<sha256> (see the package doc): the
// bytes are spooled to a scratch file while hashed, then uploaded unless the
// bucket holds the content already. A returned Object is durable in the store.
func (s *Store) Put(ctx context.Context, r io.Reader, limit int64) (blob.Object, error) {
	if err := ctx.Err(); err != nil {
		return blob.Object{}, fmt.Errorf("s3 put: %w", err)
	}
	f, obj, err := s.spool(ctx, r, limit)
	if err != nil {
		return blob.Object{}, fmt.Errorf("s3 put: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := s.upload(ctx, f, obj); err != nil {
		return blob.Object{}, fmt.Errorf("s3 put: %w", err)
	}
	return obj, nil
}

// upload puts the size bytes of f as the object obj, unless the bucket
// holds it already.
func (s *Store) upload(ctx context.Context, f *os.File, obj blob.Object) error {
	size, err := s.Stat(ctx, obj.Hash)
	switch {
	case err == nil && size == obj.Size:
		return nil
	case err != nil && !errors.Is(err, blob.ErrNotFound):
		return err
	}
	// Absent (or, should it have been damaged, of the wrong size: replaced).
	_, err = s.client.PutObject(ctx, s.bucket, blobKey(obj.Hash), f, obj.Size, putOptions(obj.Size, "application/octet-stream"))
	if err != nil {
		return fmt.Errorf("upload %s: %w", obj.Hash, fault(err))
	}
	return nil
}

// putOptions are the options of an upload of size bytes. An empty one goes
// with an unsigned payload: over plain HTTP minio-go signs a body in chunks,
// and a store may answer an empty one (a single closing chunk) before reading
// it, leaving the chunk to be taken for the connection's next request.
func putOptions(size int64, contentType string) minio.PutObjectOptions {
	return minio.PutObjectOptions{ContentType: contentType, DisableContentSha256: size == 0}
}

// Adopt uploads the finished file at path as the object hash of size bytes
// (hash is trusted) and removes the file; when the bucket already holds the
// content, the file is only removed. On failure the file is left for the
// caller.
func (s *Store) Adopt(ctx context.Context, path, hash string, size int64) (blob.Object, error) {
	if err := blob.ValidHash(hash); err != nil {
		return blob.Object{}, fmt.Errorf("s3 adopt: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return blob.Object{}, fmt.Errorf("s3 adopt: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || fi.Size() != size) {
		err = fmt.Errorf("%s holds %d bytes, not %d", path, fi.Size(), size)
	}
	if err != nil {
		return blob.Object{}, fmt.Errorf("s3 adopt: %w", err)
	}
	obj := blob.Object{Hash: hash, Size: size}
	if err := s.upload(ctx, f, obj); err != nil {
		return blob.Object{}, fmt.Errorf("s3 adopt: %w", err)
	}
	f.Close()
	if err := os.Remove(path); err != nil {
		return blob.Object{}, fmt.Errorf("s3 adopt: remove uploaded file: %w", err)
	}
	return obj, nil
}

// Open opens the object hash. The reader asks the store for the bytes from
// where it is read (a Seek then a Read is a Range request); it lives until
// Close, whatever becomes of ctx.
func (s *Store) Open(ctx context.Context, hash string) (io.ReadSeekCloser, error) {
	if err := blob.ValidHash(hash); err != nil {
		return nil, fmt.Errorf("s3 open: %w", err)
	}
	o, err := s.openKey(ctx, blobKey(hash))
	if err != nil {
		return nil, fmt.Errorf("s3 open %s: %w", hash, err)
	}
	return o, nil
}

// missRetries are the pauses before openKey asks again for a key the store
// said it does not have: some stores are eventually consistent, and a key
// read is one that was written (a blob a row refers to, a chunk listed), so
// a miss right after the write may be the store's lag.
var missRetries = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond}

// openKey opens key, which must exist (a missing one is blob.ErrNotFound,
// once asked again after missRetries): the object's first request is a HEAD.
func (s *Store) openKey(ctx context.Context, key string) (*minio.Object, error) {
	for attempt := 0; ; attempt++ {
		o, err := s.client.GetObject(context.WithoutCancel(ctx), s.bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return nil, fault(err)
		}
		_, err = o.Stat()
		if err == nil {
			return o, nil
		}
		o.Close()
		if !notFound(err) {
			return nil, fault(err)
		}
		if attempt == len(missRetries) {
			return nil, blob.ErrNotFound
		}
		select {
		case <-ctx.Done():
			return nil, blob.ErrNotFound
		case <-time.After(missRetries[attempt]):
		}
	}
}

// Stat returns the size of the object hash.
func (s *Store) Stat(ctx context.Context, hash string) (int64, error) {
	if err := blob.ValidHash(hash); err != nil {
		return 0, fmt.Errorf("s3 stat: %w", err)
	}
	info, err := s.client.StatObject(ctx, s.bucket, blobKey(hash), minio.StatObjectOptions{})
	if notFound(err) {
		return 0, fmt.Errorf("s3 stat %s: %w", hash, blob.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("s3 stat %s: %w", hash, fault(err))
	}
	return info.Size, nil
}

// Exists reports whether the bucket holds hash (false also when the store
// cannot be asked).
func (s *Store) Exists(ctx context.Context, hash string) bool {
	_, err := s.Stat(ctx, hash)
	return err == nil
}

// Delete removes the object hash; a missing object is not an error.
func (s *Store) Delete(ctx context.Context, hash string) error {
	if err := blob.ValidHash(hash); err != nil {
		return fmt.Errorf("s3 delete: %w", err)
	}
	if err := s.client.RemoveObject(ctx, s.bucket, blobKey(hash), minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
		return fmt.Errorf("s3 delete %s: %w", hash, err)
	}
	return nil
}

// Walk lists blobs/ and calls fn with every object's hash and time of
// upload, until fn returns an error (which Walk returns) or ctx ends.
func (s *Store) Walk(ctx context.Context, fn func(hash string, modTime time.Time) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: blobPrefix, Recursive: true}) {
		if o.Err != nil {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fmt.Errorf("s3 walk: %w", o.Err)
		}
		hash := strings.TrimPrefix(o.Key, blobPrefix)
		if blob.ValidHash(hash) != nil {
			continue
		}
		if err := fn(hash, o.LastModified); err != nil {
			return err
		}
	}
	return ctx.Err()
}
