package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"atrium/app/drive"
	"atrium/storage/blob"
)

// driveBlobs adapts the blob store to drive.Blobs.
type driveBlobs struct{ store *blob.Store }

func (b driveBlobs) Put(ctx context.Context, r io.Reader, limit int64) (string, int64, error) {
	o, err := b.store.Put(ctx, r, limit)
	if errors.Is(err, blob.ErrTooLarge) {
		return "", 0, fmt.Errorf("%w: %w", drive.ErrTooLarge, err)
	}
	return o.Hash, o.Size, err
}

func (b driveBlobs) Exists(hash string) bool { return b.store.Exists(hash) }

func (b driveBlobs) Open(hash string) (io.ReadSeekCloser, error) { return b.store.Open(hash) }

func (b driveBlobs) Delete(hash string) error { return b.store.Delete(hash) }

func (b driveBlobs) Walk(ctx context.Context, fn func(string, time.Time) error) error {
	return b.store.Walk(ctx, fn)
}

// driveURLs adapts the presigned URL signer to drive.URLs.
type driveURLs struct{ signer *blob.Signer }

func (u driveURLs) Download(hash, name, mimeType string, inline bool, ttl time.Duration) string {
	p := url.Values{blob.ParamContentType: {mimeType}, blob.ParamFilename: {name}}
	if inline {
		p.Set(blob.ParamInline, "1")
	}
	return u.signer.URL("GET", blob.ObjectPath(hash), p, ttl)
}

func (u driveURLs) Upload(ref string, ttl time.Duration) string {
	return u.signer.URL("PUT", blob.UploadPath(ref), nil, ttl)
}
