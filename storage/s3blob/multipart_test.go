package s3blob_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"atrium/storage/s3blob"
)

// TestSweepMultipart: a multipart upload a process began and never finished
// is aborted once it is older than the sweep's bound, not before.
func TestSweepMultipart(t *testing.T) {
	t.Parallel()
	s, cfg := openPublicS3(t)
	ctx := context.Background()
	host, secure, err := s3blob.ParseEndpoint(cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := minio.NewCore(host, &minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""), Secure: secure,
		Region: s3blob.DefaultRegion, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	id, err := cl.NewMultipartUpload(ctx, cfg.Bucket, "blobs/abandoned", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	part := bytes.Repeat([]byte("p"), 5<<20)
	if _, err := cl.PutObjectPart(ctx, cfg.Bucket, "blobs/abandoned", id, 1, bytes.NewReader(part), int64(len(part)), minio.PutObjectPartOptions{}); err != nil {
		t.Fatal(err)
	}
	pending := func() int {
		t.Helper()
		n := 0
		for u := range cl.ListIncompleteUploads(ctx, cfg.Bucket, "", true) {
			if u.Err != nil {
				t.Fatal(u.Err)
			}
			n++
		}
		return n
	}
	if n, err := s.SweepMultipart(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 || pending() != 1 {
		t.Fatalf("a young upload: aborted %d (%v), %d left; want it kept", n, err, pending())
	}
	if n, err := s.SweepMultipart(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 || pending() != 0 {
		t.Fatalf("an old upload: aborted %d (%v), %d left; want it aborted", n, err, pending())
	}
}
