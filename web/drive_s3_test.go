package web_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"atrium/storage/s3blob"
	"atrium/webtest"
)

// With the test store set (ATRIUM_TEST_S3_ENDPOINT), a server keeps the bytes
// of an uploaded file in its bucket, nothing under the data directory's
// blobs/, and serves ranges of them; every other drive test runs on the
// bucket too.
func TestDriveBytesInTheBucket(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	if !webtest.S3(s.Data) {
		t.Skip(s3blob.TestEndpointEnv + " not set (scripts/s3-server.sh starts a store)")
	}
	cr := s.Bootstrap("Bucket Org", "ann@bucket.test", "admin")
	c := driveClient{t: t, s: s, tok: cr.Token}
	content := bytes.Repeat([]byte("0123456789abcdef"), 10000) // past the 64 KiB kept in the database
	f := c.upload("big.bin", "", "application/octet-stream", content)

	// The bucket holds it, seen from outside the server.
	b := webtest.Blob(s.Data)
	store, err := s3blob.Open(context.Background(), s3blob.Config{Endpoint: b.S3Endpoint, Bucket: b.S3Bucket,
		AccessKey: b.S3AccessKey, SecretKey: b.S3SecretKey, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	hash := hashOf(f)
	if n, err := store.Stat(context.Background(), hash); err != nil || n != int64(len(content)) {
		t.Fatalf("bucket object %s: %d bytes, %v", hash, n, err)
	}
	if _, err := os.Stat(filepath.Join(s.Data, "blobs")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the data directory has blobs/ with the bytes in a bucket: %v", err)
	}
	if left, _ := os.ReadDir(filepath.Join(s.Data, "s3-scratch")); len(left) != 0 {
		t.Fatalf("scratch files left: %v", left)
	}

	// A client reads a range of it.
	var l struct {
		URL string `json:"url"`
	}
	c.ok(200, "GET", "/api/v1/drive/"+f.ID+"/download", nil, &l)
	req, _ := http.NewRequest("GET", l.URL, nil)
	req.Header.Set("Range", "bytes=100000-100015")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusPartialContent || string(got) != string(content[100000:100016]) ||
		res.Header.Get("Content-Range") != "bytes 100000-100015/160000" {
		t.Fatalf("range: %d %q (%s)", res.StatusCode, got, res.Header.Get("Content-Range"))
	}
	if got := c.download(f.ID); !bytes.Equal(got, content) {
		t.Fatalf("download: %d bytes differ", len(got))
	}
}

// Drive maintenance aborts the bucket's multipart uploads that a process
// began and died in the middle of, once a day old.
func TestDriveMaintenanceAbortsAbandonedMultipart(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	if !webtest.S3(s.Data) {
		t.Skip(s3blob.TestEndpointEnv + " not set (scripts/s3-server.sh starts a store)")
	}
	b := webtest.Blob(s.Data)
	host, secure, err := s3blob.ParseEndpoint(b.S3Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := minio.NewCore(host, &minio.Options{Creds: credentials.NewStaticV4(b.S3AccessKey, b.S3SecretKey, ""), Secure: secure,
		Region: s3blob.DefaultRegion, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cl.NewMultipartUpload(ctx, b.S3Bucket, "blobs/died-mid-upload", minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if done, err := s.Main.Drive.Maintain(ctx); err != nil || done["store_swept"] != 0 {
		t.Fatalf("a young upload: %v %v", done, err)
	}
	s.Clock.Advance(25 * time.Hour)
	if done, err := s.Main.Drive.Maintain(ctx); err != nil || done["store_swept"] != 1 {
		t.Fatalf("a day later: %v %v", done, err)
	}
	for u := range cl.ListIncompleteUploads(ctx, b.S3Bucket, "", true) {
		t.Fatalf("left in the bucket: %+v", u)
	}
}
