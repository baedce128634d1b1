package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"atrium/webtest"
	"atrium/wire"
)

// A store that goes away mid-use: with every connection to it broken (a
// proxy in front of the test's store that drops them), a WebDAV PUT and a
// GET answer 503 unavailable with Retry-After after the client's retries, the
// file that was being written is not there (no half-written file is
// visible), and once the store is back the same PUT succeeds and the bytes
// read back whole. Without a store (ATRIUM_TEST_S3_ENDPOINT) it is skipped.
func TestDriveStoreDownMidUse(t *testing.T) {
	t.Parallel()
	probe := webtest.New(t)
	if !webtest.S3(probe.Data) {
		t.Skip("needs an S3 store (ATRIUM_TEST_S3_ENDPOINT; scripts/s3-server.sh)")
	}
	probe.Stop()
	target, err := url.Parse(webtest.Blob(probe.Data).S3Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() { // the connection breaks: no answer at all
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	s := webtest.New(t, func(c *wire.Config) {
		c.Blob.S3Endpoint = proxy.URL
		c.Blob.S3PublicEndpoint = "" // the node relays: every byte passes the proxy
	})
	ann := newDavUser(t, s, "Store Down Org", "ann@example.test", "admin")
	dav := func(method, path string, body any) *webtest.Response {
		t.Helper()
		return s.Do(webtest.Request{Method: method, Path: "/webdav/" + path, BasicID: ann.creds.Email, BasicPW: ann.creds.AppPassword,
			Header: map[string]string{"Depth": "0"}, Body: body})
	}
	big := strings.Repeat("bytes in the bucket ", 10000) // 200 KB: an object of the store, not a small content
	if r := dav("PUT", "before.txt", big); r.StatusCode != 201 {
		t.Fatalf("PUT with the store up: %d %s", r.StatusCode, r.Body)
	}

	down.Store(true)
	for _, c := range []struct {
		method, path string
		body         any
	}{{"PUT", "during.txt", big + "!"}, {"GET", "before.txt", nil}} {
		r := dav(c.method, c.path, c.body)
		if r.StatusCode != 503 || r.Header.Get("Retry-After") == "" {
			t.Fatalf("%s %s with the store down: %d (Retry-After %q) %s, want 503 with Retry-After", c.method, c.path, r.StatusCode, r.Header.Get("Retry-After"), r.Body)
		}
	}
	if r := dav("PROPFIND", "during.txt", nil); r.StatusCode != 404 {
		t.Fatalf("the file whose PUT failed: PROPFIND %d, want 404", r.StatusCode)
	}

	down.Store(false)
	if r := dav("PUT", "during.txt", big+"!"); r.StatusCode != 201 {
		t.Fatalf("the PUT again with the store back: %d %s", r.StatusCode, r.Body)
	}
	for name, want := range map[string]string{"before.txt": big, "during.txt": big + "!"} {
		if r := dav("GET", name, nil); r.StatusCode != 200 || string(r.Body) != want {
			t.Fatalf("GET %s with the store back: %d, %d bytes", name, r.StatusCode, len(r.Body))
		}
	}
}
