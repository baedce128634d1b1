package dav

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"atrium/app"
)

// The DAV doors answer through the shared table (they answered 500 for the
// codes they did not list): their one override is 400 for validation.
func TestStatuses(t *testing.T) {
	t.Parallel()
	h := reporter{problems: "https://a.example/problems"}
	for code, want := range map[string]int{
		app.EOrgSuspended: 403, app.EQuotaExceeded: 507, app.EUnavailable: 503, app.EValidation: 400,
		app.ELocked: 423, app.ENotFound: 404, app.EPreconditionFailed: 412, app.EMethodNotAllowed: 405,
	} {
		rec := httptest.NewRecorder()
		h.problem(rec, httptest.NewRequest("PUT", "/dav/x", nil), app.Errorf(code, "about %s", code))
		if rec.Code != want || !strings.Contains(rec.Body.String(), `"code":"`+code+`"`) {
			t.Errorf("%s: %d %s, want %d", code, rec.Code, rec.Body, want)
		}
	}
	if st := statusOf(errors.New("disk on fire")); st != 500 {
		t.Errorf("unknown error: %d", st)
	}
	rec := httptest.NewRecorder()
	h.problem(rec, httptest.NewRequest("GET", "/dav/x", nil), &app.Error{Code: app.EUnavailable, Message: "later", RetryAfter: 7})
	if rec.Header().Get("Retry-After") != "7" {
		t.Errorf("Retry-After %q", rec.Header().Get("Retry-After"))
	}
}
