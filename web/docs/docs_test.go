package docs

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

const (
	testSpecURL = "/api/v1/openapi.json"
	mount       = "/api/v1/docs"
)

// newMux mounts the handler the way the server does.
func newMux(title string) *http.ServeMux {
	h := http.StripPrefix(mount, Handler(testSpecURL, title))
	mux := http.NewServeMux()
	mux.Handle(mount, h)
	mux.Handle(mount+"/", h)
	return mux
}

func get(t *testing.T, h http.Handler, target string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var assetRefs = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

func TestPage(t *testing.T) {
	t.Parallel()
	mux := newMux("Atrium API")
	for _, target := range []string{mount, mount + "/", mount + "/?x=1"} {
		t.Run(target, func(t *testing.T) {
			res := get(t, mux, target)
			html := body(t, res)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d", res.StatusCode)
			}
			if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if csp := res.Header.Get("Content-Security-Policy"); csp != ContentSecurityPolicy {
				t.Errorf("CSP %q", csp)
			}
			if !strings.Contains(ContentSecurityPolicy, "default-src 'self'; script-src 'self'; style-src 'self'") {
				t.Errorf("CSP is not strict: %q", ContentSecurityPolicy)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			for _, want := range []string{
				`<title>Atrium API</title>`,
				`data-spec-url="/api/v1/openapi.json"`,
				`href="/api/v1/openapi.json" download>Download OpenAPI JSON</a>`,
			} {
				if !strings.Contains(html, want) {
					t.Errorf("page lacks %q", want)
				}
			}
			if strings.Contains(html, "<script>") || strings.Contains(html, "style=") || strings.Contains(html, "<style") {
				t.Error("page has inline script or style, which the CSP blocks")
			}

			// Every script and stylesheet the page refers to must resolve,
			// relative to the address the browser used, to a same-origin
			// URL that the mux serves.
			base, _ := url.Parse("http://atrium.test" + target)
			var sawJS, sawCSS bool
			for _, m := range assetRefs.FindAllStringSubmatch(html, -1) {
				ref := m[1]
				if strings.HasPrefix(ref, "#") || strings.HasPrefix(ref, "data:") || ref == testSpecURL {
					continue
				}
				u, err := base.Parse(ref)
				if err != nil {
					t.Fatalf("bad reference %q: %v", ref, err)
				}
				if u.Host != base.Host {
					t.Errorf("reference %q is not same-origin", ref)
				}
				ares := get(t, mux, u.RequestURI())
				if ares.StatusCode != http.StatusOK {
					t.Errorf("%q (from %q) resolved to %s: status %d", ref, target, u.Path, ares.StatusCode)
				}
				switch u.Path {
				case mount + "/docs.js":
					sawJS = true
				case mount + "/docs.css":
					sawCSS = true
				default:
					t.Errorf("unexpected reference %q -> %s", ref, u.Path)
				}
			}
			if !sawJS || !sawCSS {
				t.Errorf("page does not load both assets (js %v, css %v)", sawJS, sawCSS)
			}
		})
	}
}

func TestNoExternalURLs(t *testing.T) {
	t.Parallel()
	mux := newMux("Atrium API")
	for _, target := range []string{mount, mount + "/docs.js", mount + "/docs.css"} {
		text := strings.ToLower(body(t, get(t, mux, target)))
		for _, bad := range []string{"http://", "https://"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s contains %q", target, bad)
			}
		}
	}
	// The stylesheet loads nothing (no imports, fonts or images).
	css := body(t, get(t, mux, mount+"/docs.css"))
	for _, bad := range []string{"@import", "@font-face", "url("} {
		if strings.Contains(css, bad) {
			t.Errorf("docs.css contains %q", bad)
		}
	}
	// The script must build the DOM from text nodes only.
	js := body(t, get(t, mux, mount+"/docs.js"))
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
		if strings.Contains(js, bad) {
			t.Errorf("docs.js uses %s", bad)
		}
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	mux := newMux("Atrium API")
	for name, ct := range map[string]string{
		"/docs.js":  "text/javascript; charset=utf-8",
		"/docs.css": "text/css; charset=utf-8",
	} {
		res := get(t, mux, mount+name)
		b := body(t, res)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", name, res.StatusCode)
		}
		if got := res.Header.Get("Content-Type"); got != ct {
			t.Errorf("%s: Content-Type %q, want %q", name, got, ct)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", name, got)
		}
		if res.Header.Get("Cache-Control") == "" {
			t.Errorf("%s: no Cache-Control", name)
		}
		etag := res.Header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
			t.Fatalf("%s: ETag %q", name, etag)
		}
		if len(b) < 1000 {
			t.Errorf("%s: suspiciously small (%d bytes)", name, len(b))
		}

		res = get(t, mux, mount+name, "If-None-Match", etag)
		if res.StatusCode != http.StatusNotModified {
			t.Errorf("%s: If-None-Match gave status %d, want 304", name, res.StatusCode)
		}
	}
}

func TestNotFoundAndMethods(t *testing.T) {
	t.Parallel()
	mux := newMux("Atrium API")
	for _, target := range []string{mount + "/nope", mount + "/docs.js/", mount + "/assets/docs.js", mount + "/index.html"} {
		if res := get(t, mux, target); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", target, res.StatusCode)
		}
	}

	req := httptest.NewRequest(http.MethodPost, mount+"/", strings.NewReader("x"))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}

	req = httptest.NewRequest(http.MethodHead, mount+"/docs.css", nil)
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD: status %d, %d body bytes", rec.Code, rec.Body.Len())
	}
}

func TestEscaping(t *testing.T) {
	t.Parallel()
	title := `Evil <script>alert("x")</script> & "co"`
	res := get(t, newMux(title), mount)
	html := body(t, res)
	if strings.Contains(html, "<script>alert") {
		t.Fatal("title is not escaped")
	}
	if want := `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#34;co&#34;`; !strings.Contains(html, want) {
		t.Errorf("escaped title %q not found in:\n%s", want, html)
	}

	// A spec URL with a dangerous scheme must not end up in the page.
	mux := http.StripPrefix(mount, Handler(`javascript:alert(1)`, "t"))
	html = body(t, get(t, mux, mount+"/"))
	if strings.Contains(html, "javascript:") {
		t.Errorf("javascript: URL was not filtered:\n%s", html)
	}
	// Quotes in the spec URL cannot break out of the attribute.
	mux = http.StripPrefix(mount, Handler(`/spec.json" onload="x`, "t"))
	html = body(t, get(t, mux, mount+"/"))
	if strings.Contains(html, `" onload="x`) {
		t.Errorf("spec URL is not escaped:\n%s", html)
	}
}

// Without StripPrefix the handler sees the asset paths directly.
func TestRootMount(t *testing.T) {
	t.Parallel()
	h := Handler(testSpecURL, "t")
	html := body(t, get(t, h, "/"))
	if !strings.Contains(html, `src="docs.js"`) || !strings.Contains(html, `href="docs.css"`) {
		t.Errorf("unexpected asset references:\n%s", html)
	}
	if res := get(t, h, "/docs.js"); res.StatusCode != http.StatusOK {
		t.Errorf("/docs.js: status %d", res.StatusCode)
	}
}
