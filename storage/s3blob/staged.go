package s3blob

// Staged uploads: bytes a client PUTs straight into the bucket with a
// presigned URL, under a staging key of their own (uploads/<ref>, flat under
// its prefix like every key), until the node has checked them and made them
// an object (Promote) or given up on them (DeleteStaged, SweepStaged).
//
// A staged key stays writable by whoever holds its URL until the URL expires,
// so the bytes the node hashed could be replaced before it copies them. Every
// read and the copy are therefore conditional on the version the node looked
// at (its ETag: If-Match, x-amz-copy-source-if-match); a replaced one is
// ErrStagedChanged, never a wrong object under a content hash.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"atrium/storage/blob"
)

// stagedPrefix is the prefix of staging keys.
const stagedPrefix = "uploads/"

// ErrStagedChanged is wrapped by OpenStaged and Promote when the staged bytes
// are no longer the version asked for: the client PUT again meanwhile.
var ErrStagedChanged = errors.New("staged bytes changed")

// Staged is what a client staged for an upload.
type Staged struct {
	Size int64
	// ETag is the store's tag of this version of the bytes.
	ETag string
	// Modified is when the store received them.
	Modified time.Time
}

// maxRefLen bounds an upload ref, so that its key stays well inside the
// store's limit.
const maxRefLen = 200

// stagedKey returns the staging key of upload ref, which must be 1 to
// maxRefLen letters, digits, '-' and '_' (no '/': keys stay one level deep).
func stagedKey(ref string) (string, error) {
	if ref == "" || len(ref) > maxRefLen {
		return "", fmt.Errorf("upload ref of %d characters", len(ref))
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return "", fmt.Errorf("upload ref %q: only letters, digits, '-' and '_'", ref)
		}
	}
	return stagedPrefix + ref, nil
}

// PresignPut returns a URL by which a client (at the public endpoint) can PUT
// the bytes of upload ref under its staging key for ttl; a second PUT
// replaces the first. It is computed offline.
func (s *Store) PresignPut(ctx context.Context, ref string, ttl time.Duration) (*url.URL, error) {
	key, err := stagedKey(ref)
	if err != nil {
		return nil, fmt.Errorf("s3 presign put: %w", err)
	}
	u, err := s.public.PresignedPutObject(ctx, s.bucket, key, ttl)
	if err != nil {
		return nil, fmt.Errorf("s3 presign put: %w", err)
	}
	return u, nil
}

// StatStaged returns what is staged for ref; nothing is blob.ErrNotFound.
func (s *Store) StatStaged(ctx context.Context, ref string) (Staged, error) {
	key, err := stagedKey(ref)
	if err != nil {
		return Staged{}, fmt.Errorf("s3 stat staged: %w", err)
	}
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if notFound(err) {
		return Staged{}, fmt.Errorf("s3 stat staged %s: %w", ref, blob.ErrNotFound)
	}
	if err != nil {
		return Staged{}, fmt.Errorf("s3 stat staged %s: %w", ref, fault(err))
	}
	if info.ETag == "" {
		return Staged{}, fmt.Errorf("s3 stat staged %s: the store gave no ETag", ref)
	}
	return Staged{Size: info.Size, ETag: info.ETag, Modified: info.LastModified}, nil
}

// changed reports whether err is the store's answer to a condition on a
// version that is no longer there.
func changed(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == "PreconditionFailed" || r.StatusCode == http.StatusPreconditionFailed
}

// OpenStaged opens the bytes staged for ref in the version etag (StatStaged):
// every request for them carries If-Match, so a replaced version fails
// wrapping ErrStagedChanged, a deleted one blob.ErrNotFound, at the open or
// at a later read.
func (s *Store) OpenStaged(ctx context.Context, ref, etag string) (io.ReadCloser, error) {
	key, err := stagedKey(ref)
	if err != nil {
		return nil, fmt.Errorf("s3 open staged: %w", err)
	}
	var opts minio.GetObjectOptions
	if err := opts.SetMatchETag(etag); err != nil {
		return nil, fmt.Errorf("s3 open staged %s: %w", ref, err)
	}
	o, err := s.client.GetObject(ctx, s.bucket, key, opts)
	if err != nil {
		return nil, fmt.Errorf("s3 open staged %s: %w", ref, err)
	}
	if _, err := o.Stat(); err != nil {
		o.Close()
		return nil, fmt.Errorf("s3 open staged %s: %w", ref, stagedError(err))
	}
	return stagedReader{o, ref}, nil
}

// stagedError maps the store's answers about a staged version to the
// package's sentinels.
func stagedError(err error) error {
	switch {
	case changed(err):
		return fmt.Errorf("%w: %w", ErrStagedChanged, err)
	case notFound(err):
		return fmt.Errorf("%w: %w", blob.ErrNotFound, err)
	}
	return err
}

// stagedReader is a staged object whose read errors name the sentinels.
type stagedReader struct {
	o   *minio.Object
	ref string
}

func (r stagedReader) Read(p []byte) (int, error) {
	n, err := r.o.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("s3 read staged %s: %w", r.ref, stagedError(err))
	}
	return n, err
}

func (r stagedReader) Close() error { return r.o.Close() }

// Promote makes the bytes staged for ref, in the version etag, the object
// hash of size bytes (the caller read them back and computed hash): a copy
// within the store, conditional on the version, unless the bucket holds the
// content already. The staged key stays; DeleteStaged removes it once the
// object is referenced.
func (s *Store) Promote(ctx context.Context, ref, etag, hash string, size int64) error {
	key, err := stagedKey(ref)
	if err != nil {
		return fmt.Errorf("s3 promote: %w", err)
	}
	if err := blob.ValidHash(hash); err != nil {
		return fmt.Errorf("s3 promote: %w", err)
	}
	n, err := s.Stat(ctx, hash)
	switch {
	case err == nil && n == size:
		return nil // held already: the bytes are the same
	case err != nil && !errors.Is(err, blob.ErrNotFound):
		return fmt.Errorf("s3 promote %s: %w", ref, err)
	}
	// ComposeObject copies in one request up to 5 GiB, in parts beyond.
	dst := minio.CopyDestOptions{Bucket: s.bucket, Object: blobKey(hash), ReplaceMetadata: true,
		UserMetadata: map[string]string{"Content-Type": "application/octet-stream"}}
	src := minio.CopySrcOptions{Bucket: s.bucket, Object: key, MatchETag: `"` + strings.Trim(etag, `"`) + `"`}
	if _, err := s.client.ComposeObject(ctx, dst, src); err != nil {
		return fmt.Errorf("s3 promote %s to %s: %w", ref, hash, stagedError(err))
	}
	return nil
}

// DeleteStaged removes what is staged for ref; nothing is not an error.
func (s *Store) DeleteStaged(ctx context.Context, ref string) error {
	key, err := stagedKey(ref)
	if err != nil {
		return fmt.Errorf("s3 delete staged: %w", err)
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
		return fmt.Errorf("s3 delete staged %s: %w", ref, err)
	}
	return nil
}

// SweepStaged removes the staged bytes the store received before t (by its
// own clock) and returns how many went.
func (s *Store) SweepStaged(ctx context.Context, before time.Time) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 0
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: stagedPrefix, Recursive: true}) {
		if o.Err != nil {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			return n, fmt.Errorf("s3 sweep staged: %w", o.Err)
		}
		if !o.LastModified.Before(before) {
			continue
		}
		if err := s.client.RemoveObject(ctx, s.bucket, o.Key, minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
			return n, fmt.Errorf("s3 sweep staged %s: %w", o.Key, err)
		}
		n++
	}
	return n, ctx.Err()
}
