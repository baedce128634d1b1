package web_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"atrium/storage/s3blob"
	"atrium/webtest"
)

// tusBucket opens the bucket of the test data directory dir from outside the
// server, skipping the test when the bytes are on the local disk.
func tusBucket(t *testing.T, dir string) (*s3blob.Store, s3blob.Config) {
	t.Helper()
	if !webtest.S3(dir) {
		t.Skip(s3blob.TestEndpointEnv + " not set (scripts/s3-server.sh starts a store)")
	}
	b := webtest.Blob(dir)
	cfg := s3blob.Config{Endpoint: b.S3Endpoint, Bucket: b.S3Bucket, AccessKey: b.S3AccessKey, SecretKey: b.S3SecretKey, Scratch: t.TempDir()}
	store, err := s3blob.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return store, cfg
}

// tusPartKeys returns the keys of the parts of upload path in the bucket of cfg.
func tusPartKeys(t *testing.T, cfg s3blob.Config, path string) []string {
	t.Helper()
	keys, err := s3blob.TestKeys(context.Background(), cfg, "tusparts/"+strings.TrimPrefix(path, "/api/v1/drive/tus/")+".")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// noTusFiles fails when the data directory dir holds a byte of an upload.
func noTusFiles(t *testing.T, dir string) {
	t.Helper()
	if left, err := os.ReadDir(filepath.Join(dir, "tus")); !errors.Is(err, fs.ErrNotExist) || len(left) != 0 {
		t.Fatalf("the data directory has tus/ (%v, %v) with the parts in a bucket", left, err)
	}
}

func tusContent(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i/1000)
	}
	return b
}

// With the bytes in a bucket, an upload's parts are objects of the bucket,
// one per PATCH, and nothing of them is under the node's data directory:
// another node, with a data directory of its own on the same database and
// bucket, reports the offset, refuses a PATCH at a stale offset without a
// change, takes the next PATCH and finishes the upload; the file has the
// bytes and their SHA-256, and the parts are gone.
func TestTusPartsInTheBucketAnyNode(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	_, cfg := tusBucket(t, s.Data)
	content := tusContent(3<<20 + 4321)
	up := tc.create(tusMeta("filename", "nodes.bin"), int64(len(content)))
	webtest.Check(t, tc.patch(up, 0, content[:1<<20]), webtest.Scenario{Status: 204})
	webtest.Check(t, tc.patch(up, 1<<20, content[1<<20:2<<20]), webtest.Scenario{Status: 204})
	if keys := tusPartKeys(t, cfg, up); len(keys) != 2 {
		t.Fatalf("parts in the bucket: %v, want 2", keys)
	}
	noTusFiles(t, s.Data)

	if webtest.DatabaseURL(s.Data) == "" {
		s.Stop() // SQLite: the database moves to the other node's directory
	}
	s2 := webtest.Node(t, s.Data)
	tc2 := tusClient{t: t, s: s2, tok: c.tok}
	if off := tc2.offset(up); off != 2<<20 {
		t.Fatalf("offset on the other node %d, want %d", off, 2<<20)
	}
	// A PATCH at a stale offset is refused and changes nothing.
	webtest.Check(t, tc2.patch(up, 1<<20, content[1<<20:2<<20]), webtest.Scenario{Status: 409, Problem: "conflict"})
	if off := tc2.offset(up); off != 2<<20 {
		t.Fatalf("offset after a stale PATCH %d", off)
	}
	if keys := tusPartKeys(t, cfg, up); len(keys) != 2 {
		t.Fatalf("parts after a stale PATCH: %v, want 2", keys)
	}
	res := tc2.patch(up, 2<<20, content[2<<20:])
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
	c2 := driveClient{t: t, s: s2, tok: c.tok}
	var f driveFile
	c2.ok(200, "GET", "/api/v1/drive/"+res.Header.Get("Atrium-File-Id")+"/detail", nil, &f)
	if f.ContentHash != sha(content) || f.SizeBytes != int64(len(content)) {
		t.Fatalf("file %+v, want %s", f, sha(content))
	}
	if got := c2.download(f.ID); !bytes.Equal(got, content) {
		t.Fatalf("content differs (%d bytes)", len(got))
	}
	if keys := tusPartKeys(t, cfg, up); len(keys) != 0 {
		t.Fatalf("parts left after the upload finished: %v", keys)
	}
	noTusFiles(t, s.Data)
	noTusFiles(t, s2.Data)
}

// Two PATCHes at one offset on two nodes at once (PostgreSQL: the nodes run
// side by side): exactly one counts, the other is refused with 409 and its
// part is freed; the upload finishes with the bytes of the one that counted.
func TestTusRacingPatchesOnTwoNodes(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	_, cfg := tusBucket(t, s.Data)
	if webtest.DatabaseURL(s.Data) == "" {
		t.Skip("two nodes side by side need PostgreSQL (ATRIUM_TEST_DATABASE_URL)")
	}
	s2 := webtest.Node(t, s.Data)
	tc2 := tusClient{t: t, s: s2, tok: c.tok}
	const n = 256 << 10
	up := tc.create(tusMeta("filename", "raced.bin"), 2*n)
	mine, theirs := bytes.Repeat([]byte("a"), n), bytes.Repeat([]byte("b"), n)
	var wg sync.WaitGroup
	var r1, r2 *webtest.Response
	wg.Go(func() { r1 = tc.patch(up, 0, mine) })
	wg.Go(func() { r2 = tc2.patch(up, 0, theirs) })
	wg.Wait()
	first := mine
	switch {
	case r1.StatusCode == 204 && r2.StatusCode == 409:
	case r1.StatusCode == 409 && r2.StatusCode == 204:
		first = theirs
	default:
		t.Fatalf("racing PATCHes answered %d and %d, want one 204 and one 409", r1.StatusCode, r2.StatusCode)
	}
	if keys := tusPartKeys(t, cfg, up); len(keys) != 1 {
		t.Fatalf("parts after the race: %v, want the winner's alone", keys)
	}
	rest := bytes.Repeat([]byte("c"), n)
	res := tc2.patch(up, n, rest)
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
	want := append(append([]byte{}, first...), rest...)
	if got := c.download(res.Header.Get("Atrium-File-Id")); !bytes.Equal(got, want) {
		t.Fatalf("content is not the counted PATCH's then the last (%d bytes)", len(got))
	}
}

// Terminating an upload frees its parts; maintenance frees stray parts (of
// uploads gone) at once, and those of uploads when they expire.
func TestTusBucketPartsFreed(t *testing.T) {
	t.Parallel()
	s, _, tc := newTus(t)
	store, cfg := tusBucket(t, s.Data)
	ctx := context.Background()
	content := tusContent(200 << 10)

	terminated := tc.create(tusMeta("filename", "terminated.bin"), int64(len(content)))
	webtest.Check(t, tc.patch(terminated, 0, content[:100<<10]), webtest.Scenario{Status: 204})
	if keys := tusPartKeys(t, cfg, terminated); len(keys) != 1 {
		t.Fatalf("parts: %v", keys)
	}
	webtest.Check(t, tc.do("DELETE", terminated, nil, nil), webtest.Scenario{Status: 204})
	if keys := tusPartKeys(t, cfg, terminated); len(keys) != 0 {
		t.Fatalf("parts left after termination: %v", keys)
	}

	abandoned := tc.create(tusMeta("filename", "abandoned.bin"), int64(len(content)))
	webtest.Check(t, tc.patch(abandoned, 0, content[:100<<10]), webtest.Scenario{Status: 204})
	// A part whose upload is gone (its PATCH stored it as the upload was
	// terminated on another node, say).
	stray := "/api/v1/drive/tus/01a0000000000000000000000000000000000000stray"
	if _, _, _, err := store.TusParts().Append(ctx, strings.TrimPrefix(stray, "/api/v1/drive/tus/"), 0, nil, sha256.New(),
		bytes.NewReader([]byte("left over")), 1<<20); err != nil {
		t.Fatal(err)
	}
	// The stray goes at once; the abandoned upload, still live, stays.
	if n, err := s.Main.Tus.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v, want the stray", n, err)
	}
	if keys := tusPartKeys(t, cfg, stray); len(keys) != 0 {
		t.Fatalf("stray part left: %v", keys)
	}
	if keys := tusPartKeys(t, cfg, abandoned); len(keys) != 1 {
		t.Fatalf("a live upload's part was swept: %v", keys)
	}
	s.Clock.Advance(25 * time.Hour)
	if n, err := s.Main.Tus.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v, want the expired upload", n, err)
	}
	if keys := tusPartKeys(t, cfg, abandoned); len(keys) != 0 {
		t.Fatalf("parts of the expired upload left: %v", keys)
	}
	noTusFiles(t, s.Data)
}

// A small upload sent in pieces is read back from its parts into the
// database tier; an upload whose content the store holds already completes
// from that blob, without its parts being read again (one of them is gone
// here).
func TestTusBucketSmallAndKnownContent(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	store, cfg := tusBucket(t, s.Data)

	small := []byte(strings.Repeat("small, in two pieces. ", 500))
	up := tc.create(tusMeta("filename", "small.txt"), int64(len(small)))
	webtest.Check(t, tc.patch(up, 0, small[:4000]), webtest.Scenario{Status: 204})
	res := tc.patch(up, 4000, small[4000:])
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
	if got := c.download(res.Header.Get("Atrium-File-Id")); !bytes.Equal(got, small) {
		t.Fatalf("small content differs (%d bytes)", len(got))
	}
	if keys := tusPartKeys(t, cfg, up); len(keys) != 0 {
		t.Fatalf("parts left: %v", keys)
	}

	content := tusContent(300 << 10)
	first := c.upload("first.bin", "", "application/octet-stream", content)
	up = tc.create(tusMeta("filename", "again.bin"), int64(len(content)))
	webtest.Check(t, tc.patch(up, 0, content[:100<<10]), webtest.Scenario{Status: 204})
	if err := store.TusParts().Remove(context.Background(), strings.TrimPrefix(up, "/api/v1/drive/tus/")); err != nil {
		t.Fatal(err)
	}
	res = tc.patch(up, 100<<10, content[100<<10:])
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
	var f driveFile
	c.ok(200, "GET", "/api/v1/drive/"+res.Header.Get("Atrium-File-Id")+"/detail", nil, &f)
	if f.ContentHash != first.ContentHash || f.SizeBytes != int64(len(content)) {
		t.Fatalf("file %+v, want the content of %+v", f, first)
	}
	if got := c.download(f.ID); !bytes.Equal(got, content) {
		t.Fatalf("content differs (%d bytes)", len(got))
	}
	if keys := tusPartKeys(t, cfg, up); len(keys) != 0 {
		t.Fatalf("parts left: %v", keys)
	}
}

// An upload created on one node and sent to on another is reported by the
// first at the offset the second recorded (PostgreSQL: the nodes run side by
// side): no node answers from what it remembers of an upload it created.
func TestTusCreatedOnOneNodeResumedOnAnother(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	tusBucket(t, s.Data)
	if webtest.DatabaseURL(s.Data) == "" {
		t.Skip("two nodes side by side need PostgreSQL (ATRIUM_TEST_DATABASE_URL)")
	}
	s2 := webtest.Node(t, s.Data)
	tc2 := tusClient{t: t, s: s2, tok: c.tok}
	content := tusContent(300 << 10)
	up := tc.create(tusMeta("filename", "moved.bin"), int64(len(content)))
	webtest.Check(t, tc2.patch(up, 0, content[:100<<10]), webtest.Scenario{Status: 204})
	if off := tc.offset(up); off != 100<<10 {
		t.Fatalf("the creating node reports offset %d, want %d", off, 100<<10)
	}
	res := tc.patch(up, 100<<10, content[100<<10:])
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
	if got := c.download(res.Header.Get("Atrium-File-Id")); !bytes.Equal(got, content) {
		t.Fatalf("content differs (%d bytes)", len(got))
	}
}
