package s3blob_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"atrium/storage/blob"
	"atrium/storage/s3blob"
)

// openPublicS3 is openS3 with a public endpoint: the same store under
// another host name.
func openPublicS3(t *testing.T) (*s3blob.Store, s3blob.Config) {
	return openTestStore(t, func(c *s3blob.Config) { c.PublicEndpoint = s3blob.TestPublicEndpoint(c.Endpoint) })
}

// stage PUTs body to upload ref's presigned URL, as a client does.
func stage(t *testing.T, s *s3blob.Store, ref string, body []byte) {
	t.Helper()
	u, err := s.PresignPut(context.Background(), ref, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("PUT", u.String(), bytes.NewReader(body))
	req.Header.Set("Content-Type", "text/plain")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("PUT to the presigned URL: %d %s", res.StatusCode, msg)
	}
}

// A client PUTs to the store's public address; the node reads the staged
// bytes back and promotes them to their object, then removes the staging key.
func TestStagedPromote(t *testing.T) {
	t.Parallel()
	s, cfg := openPublicS3(t)
	ctx := context.Background()
	u, err := s.PresignPut(ctx, "ref-1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := url.Parse(cfg.PublicEndpoint)
	if u.Host != pub.Host || u.Host == strings.TrimPrefix(cfg.Endpoint, "http://") {
		t.Fatalf("upload URL %s: want the public endpoint %s", u, cfg.PublicEndpoint)
	}
	if _, err := s.StatStaged(ctx, "ref-1"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("stat before the PUT: %v, want ErrNotFound", err)
	}
	body := bytes.Repeat([]byte("staged "), 20000)
	stage(t, s, "ref-1", body)
	st, err := s.StatStaged(ctx, "ref-1")
	if err != nil || st.Size != int64(len(body)) || st.ETag == "" {
		t.Fatalf("stat: %+v %v", st, err)
	}
	r, err := s.OpenStaged(ctx, "ref-1", st.ETag)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	hash := sum(body)
	if err := s.Promote(ctx, "ref-1", st.ETag, hash, st.Size); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readAll(t, s, hash), body) {
		t.Fatal("the promoted object differs")
	}
	if err := s.DeleteStaged(ctx, "ref-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StatStaged(ctx, "ref-1"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("stat after delete: %v", err)
	}
	if err := s.DeleteStaged(ctx, "ref-1"); err != nil {
		t.Fatalf("deleting nothing: %v", err)
	}
	// Staged keys are not objects.
	var walked []string
	s.Walk(ctx, func(h string, _ time.Time) error { walked = append(walked, h); return nil })
	if len(walked) != 1 || walked[0] != hash {
		t.Fatalf("walk: %v", walked)
	}
}

// Bytes replaced after the node looked at them are never copied under the
// hash of what it read: reads and the copy hold to the version it saw.
func TestStagedReplaced(t *testing.T) {
	t.Parallel()
	s, _ := openPublicS3(t)
	ctx := context.Background()
	first := bytes.Repeat([]byte("first "), 10000)
	stage(t, s, "ref-2", first)
	st, err := s.StatStaged(ctx, "ref-2")
	if err != nil {
		t.Fatal(err)
	}
	stage(t, s, "ref-2", bytes.Repeat([]byte("other "), 10000))
	if _, err := s.OpenStaged(ctx, "ref-2", st.ETag); !errors.Is(err, s3blob.ErrStagedChanged) {
		t.Fatalf("open a replaced version: %v, want ErrStagedChanged", err)
	}
	hash := sum(first)
	if err := s.Promote(ctx, "ref-2", st.ETag, hash, st.Size); !errors.Is(err, s3blob.ErrStagedChanged) {
		t.Fatalf("promote a replaced version: %v, want ErrStagedChanged", err)
	}
	if s.Exists(ctx, hash) {
		t.Fatal("an object under the hash of bytes no longer staged")
	}
	if err := s.DeleteStaged(ctx, "ref-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenStaged(ctx, "ref-2", st.ETag); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("open a deleted one: %v, want ErrNotFound", err)
	}
}

// A content the bucket holds already is not copied again (dedup): Promote
// then does not even look at the staged bytes.
func TestStagedPromoteHeld(t *testing.T) {
	t.Parallel()
	s, _ := openPublicS3(t)
	ctx := context.Background()
	body := []byte("held already")
	obj, err := s.Put(ctx, bytes.NewReader(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	stage(t, s, "ref-3", body)
	if err := s.Promote(ctx, "ref-3", "not-its-etag", obj.Hash, obj.Size); err != nil {
		t.Fatalf("promote of held content: %v", err)
	}
	if !bytes.Equal(readAll(t, s, obj.Hash), body) {
		t.Fatal("object changed")
	}
}

// SweepStaged removes what the store received before the cutoff.
func TestStagedSweep(t *testing.T) {
	t.Parallel()
	s, _ := openPublicS3(t)
	ctx := context.Background()
	stage(t, s, "old-1", []byte("a"))
	stage(t, s, "old-2", []byte("b"))
	if n, err := s.SweepStaged(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("sweep of nothing old: %d %v", n, err)
	}
	if n, err := s.SweepStaged(ctx, time.Now().Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("sweep: %d %v, want 2", n, err)
	}
	if _, err := s.StatStaged(ctx, "old-1"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("swept key: %v", err)
	}
}

// Refs are flat names: no slash, nothing empty.
func TestStagedRefs(t *testing.T) {
	t.Parallel()
	s, _ := openPublicS3(t)
	ctx := context.Background()
	for _, ref := range []string{"", "a/b", "../x", strings.Repeat("x", 201)} {
		if _, err := s.PresignPut(ctx, ref, time.Minute); err == nil {
			t.Errorf("PresignPut(%q): no error", ref)
		}
		if _, err := s.StatStaged(ctx, ref); err == nil || errors.Is(err, blob.ErrNotFound) {
			t.Errorf("StatStaged(%q): %v", ref, err)
		}
	}
}
