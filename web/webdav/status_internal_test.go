package webdav

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"atrium/app"
)

// The mount answers through the shared table, with 400 for validation.
func TestStatuses(t *testing.T) {
	t.Parallel()
	h := &Handler{log: slog.New(slog.DiscardHandler), problems: "https://a.example/problems"}
	for code, want := range map[string]int{
		app.EOrgSuspended: 403, app.EQuotaExceeded: 507, app.EUnavailable: 503, app.EValidation: 400, app.ELocked: 423,
		app.EMethodNotAllowed: 405, app.EBadGateway: 502, app.EUnsupportedMediaType: 415, app.EPayloadTooLarge: 413,
		app.ECursorExpired: 400, app.EIndexRebuilding: 503,
	} {
		rec := httptest.NewRecorder()
		h.problem(rec, httptest.NewRequest("PUT", "/api/v1/webdav/x", nil), app.Errorf(code, "about %s", code))
		if rec.Code != want || !strings.Contains(rec.Body.String(), `"code":"`+code+`"`) {
			t.Errorf("%s: %d %s, want %d", code, rec.Code, rec.Body, want)
		}
	}
}
