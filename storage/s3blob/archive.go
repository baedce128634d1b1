package s3blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
	"github.com/minio/minio-go/v7"

	"atrium/storage/blob"
)

// Archive is the archive tier in the bucket (blob.Cold): zstd copies at
// archive/<sha256>.zst. Its methods take no context (drive.Archive's do not);
// they run until the store answers.
type Archive struct{ s *Store }

var _ blob.Cold = Archive{}

// Archive returns the store's archive tier.
func (s *Store) Archive() Archive { return Archive{s} }

// Put compresses r into a scratch file, checks that its SHA-256 is hash and
// uploads the copy; it is durable in the store on return.
func (a Archive) Put(hash string, r io.Reader) error {
	if err := blob.ValidHash(hash); err != nil {
		return fmt.Errorf("s3 archive put: %w", err)
	}
	f, err := os.CreateTemp(a.s.scratch, "archive-*")
	if err != nil {
		return fmt.Errorf("s3 archive put: create scratch file: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	enc, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return fmt.Errorf("s3 archive put: %w", err)
	}
	h := sha256.New()
	if _, err := io.Copy(enc, io.TeeReader(r, h)); err != nil {
		enc.Close()
		return fmt.Errorf("s3 archive put: compress: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("s3 archive put: compress: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hash {
		return fmt.Errorf("s3 archive put: content hash %s, want %s", got, hash)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("s3 archive put: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("s3 archive put: %w", err)
	}
	if _, err := a.s.client.PutObject(context.Background(), a.s.bucket, archiveKey(hash), f, size, putOptions(size, "application/zstd")); err != nil {
		return fmt.Errorf("s3 archive put %s: %w", hash, err)
	}
	return nil
}

// Open returns the uncompressed content of hash; a missing copy is
// blob.ErrNotFound.
func (a Archive) Open(hash string) (io.ReadCloser, error) {
	if err := blob.ValidHash(hash); err != nil {
		return nil, fmt.Errorf("s3 archive open: %w", err)
	}
	o, err := a.s.openKey(context.Background(), archiveKey(hash))
	if err != nil {
		return nil, fmt.Errorf("s3 archive open %s: %w", hash, err)
	}
	dec, err := zstd.NewReader(o, zstd.WithDecoderConcurrency(1))
	if err != nil {
		o.Close()
		return nil, fmt.Errorf("s3 archive open %s: %w", hash, err)
	}
	return &archiveReader{dec: dec, o: o}, nil
}

type archiveReader struct {
	dec *zstd.Decoder
	o   *minio.Object
}

func (r *archiveReader) Read(p []byte) (int, error) { return r.dec.Read(p) }

func (r *archiveReader) Close() error {
	r.dec.Close()
	return r.o.Close()
}

// Exists reports whether the bucket holds a copy of hash.
func (a Archive) Exists(hash string) bool {
	if blob.ValidHash(hash) != nil {
		return false
	}
	_, err := a.s.client.StatObject(context.Background(), a.s.bucket, archiveKey(hash), minio.StatObjectOptions{})
	return err == nil
}

// Delete removes the copy of hash; a missing copy is not an error.
func (a Archive) Delete(hash string) error {
	if err := blob.ValidHash(hash); err != nil {
		return fmt.Errorf("s3 archive delete: %w", err)
	}
	if err := a.s.client.RemoveObject(context.Background(), a.s.bucket, archiveKey(hash), minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
		return fmt.Errorf("s3 archive delete %s: %w", hash, err)
	}
	return nil
}
