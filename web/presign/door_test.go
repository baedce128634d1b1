package presign

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"atrium/app"
	"atrium/storage/blob"
	"atrium/web/problem"
)

// The tests serve objects of a real blob store (storage/blob) in a temporary
// directory.

func newStore(t testing.TB) *blob.Store {
	t.Helper()
	s, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatalf("open the blob store: %v", err)
	}
	return s
}

func randomBytes(t testing.TB, seed uint64, n int64) []byte {
	t.Helper()
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b, err := io.ReadAll(io.LimitReader(rand.NewChaCha8(key), n))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// assertObjects checks that the store holds the objects want (hashes), none
// of absent, and nothing half-written in its temp dir.
func assertObjects(t testing.TB, s *blob.Store, want []string, absent ...string) {
	t.Helper()
	if tmp, err := os.ReadDir(s.TempDir()); err != nil || len(tmp) != 0 {
		t.Errorf("temp dir not empty: %v %v", tmp, err)
	}
	for _, h := range want {
		f, err := s.Open(h)
		if err != nil {
			t.Errorf("object %s: %v", h, err)
			continue
		}
		f.Close()
	}
	for _, h := range absent {
		if f, err := s.Open(h); err == nil {
			f.Close()
			t.Errorf("object %s is stored", h)
		}
	}
}

// copyBufferSize is a size of several reads of the store's copy buffer.
const copyBufferSize = 1 << 20

// putCall records one onPut call.
type putCall struct {
	ref    string
	params url.Values
	obj    blob.Object
}

type testServer struct {
	*httptest.Server
	store  *blob.Store
	signer *Signer
	offset atomic.Int64 // clock offset from t0, in seconds
	mu     sync.Mutex
	puts   []putCall
}

// newTestServer serves NewHandler under /blob/ of a mux, as the web server
// mounts it. Its onPut stores the body with the limit of the signed param
// "limit", sets the ETag and fails when the ref says so.
func newTestServer(t *testing.T) *testServer {
	t.Helper()
	ts := &testServer{store: newStore(t)}
	mux := http.NewServeMux()
	ts.Server = httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	ts.signer = NewSigner(testKey, ts.URL, func() time.Time { return t0.Add(time.Duration(ts.offset.Load()) * time.Second) })
	onPut := func(ctx context.Context, ref string, params url.Values, r *http.Request) error {
		switch ref {
		case "quota":
			return fmt.Errorf("drive: %w", app.Errorf(app.EPayloadTooLarge, "the file exceeds your quota"))
		case "broken":
			return errors.New("database is on fire")
		}
		limit, _ := strconv.ParseInt(params.Get("limit"), 10, 64)
		obj, err := ts.store.Put(ctx, r.Body, limit)
		if errors.Is(err, blob.ErrTooLarge) {
			return app.Errorf(app.EPayloadTooLarge, "the upload is larger than announced")
		}
		if err != nil {
			return err
		}
		ResponseHeader(ctx).Set("ETag", `"`+obj.Hash+`"`)
		ts.mu.Lock()
		ts.puts = append(ts.puts, putCall{ref, params, obj})
		ts.mu.Unlock()
		return nil
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux.Handle("/blob/", NewHandler(storeObjects{ts.store}, ts.signer, onPut, log))
	return ts
}

// storeObjects serves a Store's files as the handler's Objects (a missing one
// wraps fs.ErrNotExist through blob.ErrNotFound).
type storeObjects struct{ s *blob.Store }

func (o storeObjects) Open(_ context.Context, hash string) (io.ReadSeekCloser, error) {
	return o.s.Open(hash)
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, method, rawURL string, body io.Reader, header http.Header) response {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, b}
}

// checkProblem asserts a problem+json response with status and code.
func checkProblem(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d (body %s)", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var p map[string]any
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem body %q: %v", r.body, err)
	}
	if typ, _ := p["type"].(string); !strings.HasSuffix(typ, "/problems/"+code) {
		t.Errorf("problem type = %q, want the code's page under /problems", typ)
	}
	want := map[string]any{"title": http.StatusText(status), "status": float64(status), "code": code}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("problem %s = %v, want %v", k, p[k], v)
		}
	}
	if d, _ := p["detail"].(string); d == "" {
		t.Error("problem has no detail")
	}
}

func TestHandlerGet(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	data := randomBytes(t, 21, 100)
	obj, err := ts.store.Put(context.Background(), bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	path := ObjectPath(obj.Hash)
	sign := func(method string, params url.Values, ttl time.Duration) string {
		return ts.signer.URL(method, path, params, ttl)
	}
	named := url.Values{"ct": {"text/plain; charset=utf-8"}, "fn": {"résumé.txt"}}
	etag := `"` + obj.Hash + `"`

	cases := []struct {
		name    string
		method  string
		url     string
		header  http.Header
		status  int
		body    []byte
		headers map[string]string
	}{
		{
			name: "full body with every header", method: "GET", url: sign("GET", named, 5*time.Minute),
			status: 200, body: data,
			headers: map[string]string{
				"Content-Type":           "text/plain; charset=utf-8",
				"Content-Length":         "100",
				"ETag":                   etag,
				"Content-Disposition":    `attachment; filename="r_sum_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt`,
				"Cache-Control":          "private, max-age=300",
				"X-Content-Type-Options": "nosniff",
				"Accept-Ranges":          "bytes",
				"Last-Modified":          "",
			},
		},
		{
			name: "defaults", method: "GET", url: sign("GET", nil, time.Minute),
			status: 200, body: data,
			headers: map[string]string{
				"Content-Type":        "application/octet-stream",
				"Content-Disposition": "attachment",
				"Cache-Control":       "private, max-age=60",
			},
		},
		{
			name: "inline", method: "GET", url: sign("GET", url.Values{"ct": {"image/png"}, "fn": {"a.png"}, "inline": {"1"}}, time.Minute),
			status: 200, body: data,
			headers: map[string]string{
				"Content-Type":        "image/png",
				"Content-Disposition": `inline; filename="a.png"; filename*=UTF-8''a.png`,
			},
		},
		{
			name: "malformed content type", method: "GET", url: sign("GET", url.Values{"ct": {"text/html; ;;"}}, time.Minute),
			status: 200, body: data,
			headers: map[string]string{"Content-Type": "application/octet-stream"},
		},
		{
			name: "range", method: "GET", url: sign("GET", named, time.Minute),
			header: http.Header{"Range": {"bytes=10-19"}},
			status: 206, body: data[10:20],
			headers: map[string]string{"Content-Range": "bytes 10-19/100", "Content-Length": "10", "ETag": etag},
		},
		{
			name: "range past the end", method: "GET", url: sign("GET", named, time.Minute),
			header: http.Header{"Range": {"bytes=200-"}},
			status: 416, headers: map[string]string{"Content-Range": "bytes */100"},
		},
		{
			name: "if-none-match", method: "GET", url: sign("GET", named, time.Minute),
			header: http.Header{"If-None-Match": {etag}},
			status: 304, body: []byte{},
			headers: map[string]string{"ETag": etag},
		},
		{
			name: "HEAD with a GET URL", method: "HEAD", url: sign("GET", named, time.Minute),
			status: 200, body: []byte{},
			headers: map[string]string{"Content-Length": "100", "ETag": etag, "Content-Type": "text/plain; charset=utf-8"},
		},
		{
			name: "HEAD with a HEAD URL", method: "HEAD", url: sign("HEAD", nil, time.Minute),
			status: 200, body: []byte{},
			headers: map[string]string{"Content-Length": "100"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, c.method, c.url, nil, c.header)
			if r.status != c.status {
				t.Fatalf("status = %d, want %d (body %q)", r.status, c.status, r.body)
			}
			if c.body != nil && !bytes.Equal(r.body, c.body) {
				t.Errorf("body = %x, want %x", r.body, c.body)
			}
			for k, v := range c.headers {
				if got := r.header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestHandlerGetRejects(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	obj, err := ts.store.Put(context.Background(), strings.NewReader("secret"), 0)
	if err != nil {
		t.Fatal(err)
	}
	path := ObjectPath(obj.Hash)
	good := ts.signer.URL("GET", path, url.Values{"ct": {"text/plain"}}, time.Minute)

	expired := ts.signer.URL("GET", path, nil, time.Minute)
	ts.offset.Store(61)
	t.Cleanup(func() { ts.offset.Store(0) })
	expiredNow := do(t, "GET", expired, nil, nil)
	ts.offset.Store(0)

	tampered := strings.Replace(good, "text%2Fplain", "text%2Fhtml", 1)
	if tampered == good {
		t.Fatal("tampering did not change the URL")
	}
	otherHash := sha([]byte("not stored"))

	cases := []struct {
		name   string
		res    func() response
		status int
		code   string
	}{
		{"expired", func() response { return expiredNow }, 403, "url_expired"},
		{"tampered param", func() response { return do(t, "GET", tampered, nil, nil) }, 403, "forbidden"},
		{"tampered path", func() response {
			return do(t, "GET", strings.Replace(good, obj.Hash, otherHash, 1), nil, nil)
		}, 403, "forbidden"},
		{"unsigned", func() response { return do(t, "GET", ts.URL+path, nil, nil) }, 403, "forbidden"},
		{"signed for PUT", func() response {
			return do(t, "GET", ts.signer.URL("PUT", path, nil, time.Minute), nil, nil)
		}, 403, "forbidden"},
		{"unknown object", func() response {
			return do(t, "GET", ts.signer.URL("GET", ObjectPath(otherHash), nil, time.Minute), nil, nil)
		}, 404, "not_found"},
		{"invalid hash", func() response {
			return do(t, "GET", ts.signer.URL("GET", ObjectPath("ABC"), nil, time.Minute), nil, nil)
		}, 404, "not_found"},
		{"unknown route", func() response {
			return do(t, "GET", ts.signer.URL("GET", "/blob/x/"+obj.Hash, nil, time.Minute), nil, nil)
		}, 404, "not_found"},
		{"wrong method", func() response {
			return do(t, "POST", ts.signer.URL("POST", path, nil, time.Minute), strings.NewReader("x"), nil)
		}, 405, "method_not_allowed"},
		{"PUT to an object", func() response {
			return do(t, "PUT", ts.signer.URL("PUT", path, nil, time.Minute), strings.NewReader("x"), nil)
		}, 405, "method_not_allowed"},
	}
	t.Run("HEAD tampered", func(t *testing.T) {
		r := do(t, "HEAD", tampered, nil, nil)
		if r.status != 403 || r.header.Get("Content-Type") != "application/problem+json" || len(r.body) != 0 {
			t.Errorf("HEAD tampered = %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.res()
			checkProblem(t, r, c.status, c.code)
			if r.status == 405 && r.header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q", r.header.Get("Allow"))
			}
			if r.header.Get("Content-Disposition") != "" || r.header.Get("ETag") != "" {
				t.Errorf("error response carries object headers: %v", r.header)
			}
		})
	}
}

func TestHandlerPut(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	data := randomBytes(t, 31, 3*copyBufferSize/2)
	u := ts.signer.URL("PUT", UploadPath("upl_123"), url.Values{"limit": {"10000000"}, "owner": {"u1"}}, time.Minute)
	r := do(t, "PUT", u, bytes.NewReader(data), nil)
	if r.status != 200 || len(r.body) != 0 {
		t.Fatalf("PUT = %d %q, want 200 and no body", r.status, r.body)
	}
	if got, want := r.header.Get("ETag"), `"`+sha(data)+`"`; got != want {
		t.Errorf("ETag = %q, want %q", got, want)
	}
	ts.mu.Lock()
	puts := ts.puts
	ts.mu.Unlock()
	if len(puts) != 1 {
		t.Fatalf("onPut called %d times", len(puts))
	}
	p := puts[0]
	if p.ref != "upl_123" || p.params.Get("owner") != "u1" || p.params.Has("X-Signature") || p.params.Has("X-Expires") {
		t.Errorf("onPut got ref %q params %v", p.ref, p.params)
	}
	if p.obj != (blob.Object{Hash: sha(data), Size: int64(len(data))}) {
		t.Errorf("stored %+v", p.obj)
	}
	assertObjects(t, ts.store, []string{sha(data)})
}

func TestHandlerPutRejects(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	sign := func(method, ref string, params url.Values) string {
		return ts.signer.URL(method, UploadPath(ref), params, time.Minute)
	}
	body := func() io.Reader { return strings.NewReader("some upload body") }
	cases := []struct {
		name   string
		method string
		url    string
		status int
		code   string
	}{
		{"onPut app error", "PUT", sign("PUT", "quota", nil), 413, "payload_too_large"},
		{"store limit exceeded", "PUT", sign("PUT", "small", url.Values{"limit": {"4"}}), 413, "payload_too_large"},
		{"onPut plain error", "PUT", sign("PUT", "broken", nil), 500, "internal"},
		{"GET URL used for PUT", "PUT", sign("GET", "r1", nil), 403, "forbidden"},
		{"tampered ref", "PUT", strings.Replace(sign("PUT", "r1", nil), "/r1?", "/r2?", 1), 403, "forbidden"},
		{"empty ref", "PUT", sign("PUT", "", nil), 404, "not_found"},
		{"GET on an upload", "GET", sign("GET", "r1", nil), 405, "method_not_allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, c.method, c.url, body(), nil)
			checkProblem(t, r, c.status, c.code)
			if r.header.Get("ETag") != "" {
				t.Errorf("failed PUT carries an ETag")
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		u := sign("PUT", "r1", nil)
		ts.offset.Store(3600)
		defer ts.offset.Store(0)
		checkProblem(t, do(t, "PUT", u, body(), nil), 403, "url_expired")
	})
	t.Run("detail", func(t *testing.T) {
		var p problem.Body
		json.Unmarshal(do(t, "PUT", sign("PUT", "quota", nil), body(), nil).body, &p)
		if p.Detail != "the file exceeds your quota" {
			t.Errorf("4xx detail = %q", p.Detail)
		}
		json.Unmarshal(do(t, "PUT", sign("PUT", "broken", nil), body(), nil).body, &p)
		if strings.Contains(p.Detail, "fire") {
			t.Errorf("5xx detail leaks the error: %q", p.Detail)
		}
	})
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.puts) != 0 {
		t.Errorf("onPut stored %d uploads", len(ts.puts))
	}
	assertObjects(t, ts.store, nil, sha([]byte("some upload body")))
}

func TestHandlerUploadsDisabled(t *testing.T) {
	t.Parallel()
	store := newStore(t)
	signer := NewSigner(testKey, "", fixedClock(t0))
	h := NewHandler(storeObjects{store}, signer, nil, nil)
	req := httptest.NewRequest("PUT", signer.URL("PUT", UploadPath("r"), nil, time.Minute), strings.NewReader("x"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("PUT without onPut = %d, want 405", rec.Code)
	}
}

func TestContentDisposition(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		inline bool
		want   string
	}{
		{"", false, "attachment"},
		{"", true, "inline"},
		{"report.pdf", false, `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`},
		{"report.pdf", true, `inline; filename="report.pdf"; filename*=UTF-8''report.pdf`},
		{`my "big" report 100%.pdf`, false, `attachment; filename="my _big_ report 100_.pdf"; filename*=UTF-8''my%20%22big%22%20report%20100%25.pdf`},
		{"Ελληνικά.txt", false, `attachment; filename="________.txt"; filename*=UTF-8''%CE%95%CE%BB%CE%BB%CE%B7%CE%BD%CE%B9%CE%BA%CE%AC.txt`},
		{"日本.txt", false, `attachment; filename="__.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt`},
		{"../../etc/passwd", false, `attachment; filename=".._.._etc_passwd"; filename*=UTF-8''.._.._etc_passwd`},
		{"a\r\nSet-Cookie: x=y", false, `attachment; filename="a__Set-Cookie: x=y"; filename*=UTF-8''a__Set-Cookie%3A%20x%3Dy`},
		{"back\\slash;semi,comma", false, `attachment; filename="back_slash;semi,comma"; filename*=UTF-8''back_slash%3Bsemi%2Ccomma`},
		{"bad\xffutf8", false, `attachment; filename="bad_utf8"; filename*=UTF-8''bad_utf8`},
	}
	for _, c := range cases {
		if got := ContentDisposition(c.name, c.inline); got != c.want {
			t.Errorf("ContentDisposition(%q, %v)\n got %s\nwant %s", c.name, c.inline, got, c.want)
		}
	}
}
