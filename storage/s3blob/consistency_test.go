package s3blob_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"atrium/storage/blob"
	"atrium/storage/s3blob"
)

// A store that answers NoSuchKey for an object written a moment ago (an
// eventually consistent one: here a proxy that says so once) is asked again:
// the object opens with its bytes. A key that really is missing is still
// blob.ErrNotFound.
func TestOpenAsksAgainAfterAMissRightAfterTheWrite(t *testing.T) {
	t.Parallel()
	var lag atomic.Int32 // misses still to answer for blobs/
	var proxyURL string
	s, _ := openTestStore(t, func(c *s3blob.Config) {
		target, err := url.Parse(c.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		rp := httputil.NewSingleHostReverseProxy(target)
		p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/blobs/") && (r.Method == http.MethodHead || r.Method == http.MethodGet) && lag.Add(-1) >= 0 {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusNotFound)
				if r.Method == http.MethodGet {
					io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`)
				}
				return
			}
			rp.ServeHTTP(w, r)
		}))
		t.Cleanup(p.Close)
		proxyURL = p.URL
		c.Endpoint = proxyURL
	})
	ctx := context.Background()
	content := bytes.Repeat([]byte("written a moment ago "), 5000)
	obj, err := s.Put(ctx, bytes.NewReader(content), 0)
	if err != nil {
		t.Fatal(err)
	}
	lag.Store(1) // the store has not caught up yet
	r, err := s.Open(ctx, obj.Hash)
	if err != nil {
		t.Fatalf("open right after the write: %v", err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("read %d bytes (%v), want the %d written", len(got), err, len(content))
	}
	lag.Store(0)
	if _, err := s.Open(ctx, strings.Repeat("0", 64)); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("a key never written: %v, want ErrNotFound", err)
	}
}
