package wopi

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"atrium/app"
)

// WOPI answers through the shared table with its protocol's overrides: 401
// for any refusal of the user, 409 with X-WOPI-Lock for a lock, 413 for quota.
func TestStatuses(t *testing.T) {
	t.Parallel()
	h := &Handler{log: slog.New(slog.DiscardHandler)}
	for code, want := range map[string]int{
		app.EForbidden: 401, app.EOrgSuspended: 401, app.EReadOnly: 401, app.ELocked: 409, app.EQuotaExceeded: 413,
		app.EValidation: 400, app.EUnavailable: 503, app.EPreconditionFailed: 412, app.EEditorUnavailable: 501,
		app.ENotImplemented: 501, app.EMethodNotAllowed: 405,
	} {
		rec := httptest.NewRecorder()
		h.fail(rec, httptest.NewRequest("POST", "/wopi/files/x/contents", nil), app.Errorf(code, "about %s", code))
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", code, rec.Code, want)
		}
		if _, ok := rec.Header()["X-Wopi-Lock"]; ok != (code == app.ELocked) {
			t.Errorf("%s: X-WOPI-Lock %v", code, rec.Header())
		}
	}
}
