package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"atrium/app"
	"atrium/web/problem"
)

// TestEveryCodeMakesAProblem renders every domain code the way a client sees it.
func TestEveryCodeMakesAProblem(t *testing.T) {
	t.Parallel()
	pb := problems{base: "https://atrium.example/problems"}
	want := map[string]int{
		"unauthorized": 401, "forbidden": 403, "insufficient_scope": 403, "feature_not_in_plan": 403, "no_bound_user": 403,
		"org_suspended": 403, "read_only": 403, "not_found": 404, "conflict": 409, "idempotency_key_reused": 409, "seat_floor": 409,
		"precondition_failed": 412, "payload_too_large": 413, "validation_failed": 422, "locked": 423, "cursor_expired": 400,
		"invalid_cursor": 400, "idempotency_in_flight": 503, "quota_exceeded": 507, "editor_unavailable": 501,
	}
	for code, status := range want {
		t.Run(code, func(t *testing.T) {
			err := fmt.Errorf("wrapped: %w", app.Errorf(code, "Something about %s.", code))
			p := pb.fromError(err)
			rec := httptest.NewRecorder()
			p.write(rec, "rid")
			if rec.Code != status || p.Code != code || p.Type != pb.base+"/"+code || p.Title != http.StatusText(status) || p.Detail == "" {
				t.Fatalf("%d %+v", rec.Code, p)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("content type %q", ct)
			}
			body := rec.Body.String()
			for _, f := range []string{`"type"`, `"title"`, `"status"`, `"detail"`, `"code"`, `"instance":"urn:request:rid"`} {
				if !strings.Contains(body, f) {
					t.Fatalf("body lacks %s: %s", f, body)
				}
			}
			if status == 503 && rec.Header().Get("Retry-After") == "" {
				t.Fatal("503 without Retry-After")
			}
			if problem.Doc(code) == "" {
				t.Fatal("no documentation page text")
			}
		})
	}
	// An unknown error never leaks its text.
	p := pb.fromError(errors.New("disk on fire at /var/secret"))
	if p.Status != 500 || p.Code != "internal" || strings.Contains(p.Detail, "secret") {
		t.Fatalf("%+v", p)
	}
}
