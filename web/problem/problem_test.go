package problem_test

import (
	"net/http"
	"testing"

	"atrium/app"
	"atrium/web/problem"
)

// Every code of app/error.go has its status in the one table; overrides win,
// an unknown code is 500.
func TestStatus(t *testing.T) {
	t.Parallel()
	every := []string{app.EUnauthorized, app.EForbidden, app.EInsufficientScope, app.EFeatureNotInPlan, app.ENoBoundUser,
		app.EOrgSuspended, app.EReadOnly, app.EReauthRequired, app.ENotFound, app.EConflict, app.EIdempotencyReused, app.ESeatFloor,
		app.EPreconditionFailed, app.EPayloadTooLarge, app.EValidation, app.ELocked, app.ECursorExpired, app.EInvalidCursor,
		app.EIdempotencyInFlight, app.EQuotaExceeded, app.EEditorUnavailable, app.ENoPreview, app.EIndexRebuilding,
		app.EBadRequest, app.EUnsupportedMediaType, app.EUnavailable, app.EInternal, app.EMethodNotAllowed,
		app.ENotAcceptable, app.ERateLimited, app.ETimeout, app.ENotImplemented, app.EBadGateway}
	for _, c := range every {
		if st, ok := problem.Status(c, nil); !ok || st < 400 {
			t.Errorf("%s: %d %v", c, st, ok)
		}
	}
	if n := len(problem.Codes()); n != len(every) {
		t.Errorf("the table has %d codes, app/error.go %d", n, len(every))
	}
	if st, ok := problem.Status(app.EValidation, map[string]int{app.EValidation: 400}); st != 400 || !ok {
		t.Errorf("override: %d", st)
	}
	if st, ok := problem.Status("no_such_code", nil); st != http.StatusInternalServerError || ok {
		t.Errorf("unknown: %d %v", st, ok)
	}
}
