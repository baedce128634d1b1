package s3blob

import (
	"context"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"
)

// SweepMultipart aborts the multipart uploads of the bucket begun before
// before: minio-go sends a large object in parts and aborts the upload when
// it fails, but a process that dies in the middle leaves its parts in the
// bucket, billed and invisible to a listing of objects. The caller picks
// before far enough back that no upload still under way began then (a day).
// It returns how many it aborted.
func (s *Store) SweepMultipart(ctx context.Context, before time.Time) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing when this returns early
	core := minio.Core{Client: s.client}
	n := 0
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, "", true) {
		if u.Err != nil {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			return n, fmt.Errorf("s3 list multipart uploads: %w", u.Err)
		}
		if !u.Initiated.Before(before) {
			continue
		}
		if err := core.AbortMultipartUpload(ctx, s.bucket, u.Key, u.UploadID); err != nil && !notFound(err) {
			return n, fmt.Errorf("s3 abort multipart upload of %s: %w", u.Key, err)
		}
		n++
	}
	return n, nil
}
