package ui

import (
	"errors"
	"net/http"
	"testing"

	"atrium/app"
	"atrium/web/problem"
)

func TestLocalPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"/settings", "/settings"},
		{"/drive/0190?x=1#y", "/drive/0190?x=1#y"},
		{"/%2F%2Fevil.example", "/%2F%2Fevil.example"}, // a path here, not a host
		{"", ""},
		{"settings", ""},
		{"//evil.example", ""},
		{"///evil.example", ""},
		{"/\\evil.example", ""},
		{"/x\\y", ""},
		{"https://evil.example/", ""},
		{"javascript:alert(1)", ""},
		{"/\t/evil.example", ""},
		{"/a\r\nSet-Cookie: x=y", ""},
		{"/signin?next=/x", ""},
		{"/signout", ""},
	} {
		if got := localPath(c.in); got != c.want {
			t.Errorf("localPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A page answers an app error with the status of the one table (web/problem):
// a locked file, a full quota or a rate limit as such, not as a 500.
func TestPageStatuses(t *testing.T) {
	t.Parallel()
	for code, want := range problem.Codes() {
		if code == app.EBadRequest {
			want = http.StatusUnprocessableEntity // a form that could not be read is shown again
		}
		if got := status(app.Errorf(code, "x")); got != want {
			t.Errorf("%s: %d, want %d", code, got, want)
		}
	}
	for _, c := range []struct {
		code string
		want int
	}{{app.ELocked, 423}, {app.EQuotaExceeded, 507}, {app.ERateLimited, 429}, {app.EReadOnly, 403}, {app.EPayloadTooLarge, 413}} {
		if got := status(app.Errorf(c.code, "x")); got != c.want {
			t.Errorf("%s: %d, want %d", c.code, got, c.want)
		}
	}
	if got := status(errors.New("a bug")); got != http.StatusInternalServerError {
		t.Errorf("an error without a code: %d", got)
	}
}

// The router gets the web app's routes from its one table, in gin's syntax.
func TestRoutesFromTheTable(t *testing.T) {
	t.Parallel()
	u := New(Config{PublicURL: "http://127.0.0.1:8080", Drive: nil})
	got := map[Route]bool{}
	for _, r := range u.Routes() {
		got[r] = true
	}
	for _, want := range []Route{{"GET", "/"}, {"POST", "/signin"}, {"POST", "/settings/tokens/:id/revoke"},
		{"GET", "/assets/*file"}, {"HEAD", "/assets/*file"}, {"GET", "/calendar"}, {"GET", "/partner/:id"}} {
		if !got[want] {
			t.Errorf("no route %v in %v", want, u.Routes())
		}
	}
	if got[Route{"GET", "/drive"}] {
		t.Error("the drive's pages are routed without a drive")
	}
	if len(got) != len(u.table())+1 { // the assets' HEAD
		t.Errorf("%d routes for %d table rows", len(got), len(u.table()))
	}
}
