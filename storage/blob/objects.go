package blob

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// Objects is a content-addressed object store as the drive's byte paths use
// it: the Store on local disk (through Local) or an S3-compatible bucket
// (package s3blob). Objects are named by the hex SHA-256 of their content;
// every implementation wraps the same sentinels (ErrNotFound, ErrInvalidHash,
// ErrTooLarge), so callers behave the same whichever holds the bytes.
type Objects interface {
	// Put streams r into the store, at most limit bytes when limit > 0 (a
	// longer stream fails wrapping ErrTooLarge), and returns the object it
	// holds; the bytes are durable on return. Content already held is reused.
	Put(ctx context.Context, r io.Reader, limit int64) (Object, error)
	// Adopt takes the finished local file at path as the object hash of size
	// bytes (hash is trusted: the caller computed it while writing the file).
	// The file is gone on success and left for the caller on failure; a
	// missing file is an error wrapping fs.ErrNotExist.
	Adopt(ctx context.Context, path, hash string, size int64) (Object, error)
	// Open opens the object hash for reading and seeking; the reader lives
	// until Close, whatever becomes of ctx.
	Open(ctx context.Context, hash string) (io.ReadSeekCloser, error)
	// Stat returns the size of the object hash.
	Stat(ctx context.Context, hash string) (int64, error)
	// Exists reports whether the store holds hash; an invalid hash is never held.
	Exists(ctx context.Context, hash string) bool
	// Delete removes the object hash; a missing object is not an error.
	Delete(ctx context.Context, hash string) error
	// Walk calls fn with every object's hash and modification time, until fn
	// returns an error (which Walk returns) or ctx ends.
	Walk(ctx context.Context, fn func(hash string, modTime time.Time) error) error
	// Ready returns an error when the store cannot take writes now.
	Ready(ctx context.Context) error
}

// Cold is the archive tier as the drive uses it (drive.Archive): compressed
// copies named by the hex SHA-256 of their uncompressed content. Archive keeps
// them on local disk, package s3blob in a bucket.
type Cold interface {
	Put(hash string, from io.Reader) error
	Open(hash string) (io.ReadCloser, error)
	Delete(hash string) error
	Exists(hash string) bool
}

var (
	_ Objects = Local{}
	_ Cold    = (*Archive)(nil)
)

// Local is a Store on local disk as Objects.
type Local struct{ Store *Store }

// Put stores r (Store.Put).
func (l Local) Put(ctx context.Context, r io.Reader, limit int64) (Object, error) {
	return l.Store.Put(ctx, r, limit)
}

// Adopt moves the file at path into the store (Store.Adopt).
func (l Local) Adopt(_ context.Context, path, hash string, size int64) (Object, error) {
	return l.Store.Adopt(path, hash, size)
}

// Open opens the object's file.
func (l Local) Open(_ context.Context, hash string) (io.ReadSeekCloser, error) {
	f, err := l.Store.Open(hash)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Stat returns the object's size.
func (l Local) Stat(_ context.Context, hash string) (int64, error) { return l.Store.Stat(hash) }

// Exists reports whether the store holds hash.
func (l Local) Exists(_ context.Context, hash string) bool { return l.Store.Exists(hash) }

// Delete removes the object's file.
func (l Local) Delete(_ context.Context, hash string) error { return l.Store.Delete(hash) }

// Walk walks the objects (Store.Walk).
func (l Local) Walk(ctx context.Context, fn func(hash string, modTime time.Time) error) error {
	return l.Store.Walk(ctx, fn)
}

// Ready checks that a file can be made in the store's scratch directory.
func (l Local) Ready(context.Context) error {
	f, err := os.CreateTemp(l.Store.TempDir(), "ready-*")
	if err != nil {
		return fmt.Errorf("blob store not writable: %w", err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
