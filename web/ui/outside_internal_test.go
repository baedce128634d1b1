package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A page opened from an e-mailed link has no header of the app (its only link
// to / is the one its script adds after the password is set), is not indexed,
// sends no Referer (its URL holds the token) and may not be framed or post a
// form anywhere.
func TestInvitationPageIsOutside(t *testing.T) {
	t.Parallel()
	u := New(Config{PublicURL: "http://127.0.0.1:8080"})
	rec := httptest.NewRecorder()
	u.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/invite/t%3Cb%3E", nil))
	body, h := rec.Body.String(), rec.Header()
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, body)
	}
	for _, want := range []string{`<meta name="robots" content="noindex, nofollow">`, `<meta name="referrer" content="no-referrer">`,
		`data-action="/api/v1/invitations/t%3Cb%3E/accept"`, `<script src="/assets/app.js" defer></script>`, `<script src="/assets/account.js" defer></script>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(body, `<header`) || strings.Contains(body, `href="/"`) || strings.Contains(body, "<b>") {
		t.Errorf("the page has the app's header or an unescaped token:\n%s", body)
	}
	for k, want := range map[string]string{"Content-Security-Policy": "form-action 'none'", "X-Frame-Options": "DENY",
		"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
		if !strings.Contains(h.Get(k), want) {
			t.Errorf("%s %q, want %q", k, h.Get(k), want)
		}
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
	// The script is served at its old address too.
	rec = httptest.NewRecorder()
	u.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/account.js", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Type"), "javascript") || !strings.Contains(rec.Body.String(), `a.href = "/"`) {
		t.Errorf("/account.js: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// The problem type pages: the list, one type, and an unknown one as a problem.
func TestProblemTypePages(t *testing.T) {
	t.Parallel()
	u := New(Config{PublicURL: "http://127.0.0.1:8080"})
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		u.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	if r := get("/problems"); r.Code != http.StatusOK || !strings.Contains(r.Body.String(), `<a href="problems/not_found"><code>not_found</code></a>`) {
		t.Errorf("/problems: %d", r.Code)
	}
	if r := get("/problems/rate_limited"); r.Code != http.StatusOK || !strings.Contains(r.Body.String(), "HTTP status 429") {
		t.Errorf("/problems/rate_limited: %d %s", r.Code, r.Body)
	}
	r := get("/problems/no_such_thing")
	if r.Code != http.StatusNotFound || r.Header().Get("Content-Type") != "application/problem+json" || !strings.Contains(r.Body.String(), `"code":"not_found"`) {
		t.Errorf("an unknown type: %d %s %s", r.Code, r.Header().Get("Content-Type"), r.Body)
	}
}
