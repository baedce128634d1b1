package web_test

import (
	"strings"
	"testing"

	"atrium/web"
	"atrium/webtest"
)

// TestProblemBodies checks every error shape a client can meet over HTTP.
func TestProblemBodies(t *testing.T) {
	t.Parallel()
	s := webtest.Shared(t)
	admin := s.Bootstrap("Operator", "admin@example.test", "admin")
	big := `{"name":"` + strings.Repeat("x", 1<<20+10) + `","scopes":["contacts:read"]}`
	s.Run(t, []webtest.Scenario{
		{Name: "unknown route", Request: webtest.Request{Method: "GET", Path: "/api/v1/nope"}, Status: 404, Problem: "not_found"},
		{Name: "method not allowed", Request: webtest.Request{Method: "PATCH", Path: "/api/v1/me"}, Status: 405, Problem: "method_not_allowed"},
		{Name: "malformed JSON", Request: webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals", Token: admin.Token, Body: "{nope"},
			Status: 400, Problem: "bad_request"},
		{Name: "validation", Request: webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals", Token: admin.Token,
			Body: map[string]any{"name": "", "scopes": []string{}}}, Status: 422, Problem: "validation_failed",
			Contains: []string{`"errors":[`, `"location":"body.name"`, `"location":"body.scopes"`}},
		{Name: "service-level validation", Request: webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals", Token: admin.Token,
			Body: map[string]any{"name": "x", "scopes": []string{"no:such"}}}, Status: 422, Problem: "validation_failed",
			Contains: []string{`"location":"body.scopes[0]"`, `"value":"no:such"`}},
		{Name: "body over 1 MiB", Request: webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals", Token: admin.Token, Body: big},
			Status: 413, Problem: "payload_too_large"},
		{Name: "not found", Request: webtest.Request{Method: "GET", Path: "/api/v1/developer/service-principals/0190c0de-0000-7000-8000-000000000000", Token: admin.Token},
			Status: 404, Problem: "not_found"},
		{Name: "request id echoed in instance", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Header: map[string]string{"X-Request-Id": "abc-123"}},
			Status: 401, Problem: "unauthorized", Contains: []string{`"instance":"urn:request:abc-123"`}, Headers: map[string]string{"X-Request-Id": "abc-123"}},
	})
	// Every code has a documentation page under problems_url.
	for code := range web.ProblemCodes() {
		if r := s.Do(webtest.Request{Method: "GET", Path: "/problems/" + code}); r.StatusCode != 200 || !strings.Contains(string(r.Body), code) {
			t.Errorf("problem page %s: %d", code, r.StatusCode)
		}
	}
}

func TestOperationalEndpoints(t *testing.T) {
	t.Parallel()
	s := webtest.Shared(t)
	s.Run(t, []webtest.Scenario{
		{Name: "healthz", Request: webtest.Request{Method: "GET", Path: "/healthz"}, Status: 200},
		{Name: "readyz", Request: webtest.Request{Method: "GET", Path: "/readyz"}, Status: 200, Contains: []string{"ready"}},
		{Name: "metrics", Request: webtest.Request{Method: "GET", Path: "/metrics"}, Status: 200, Contains: []string{"atrium_http_requests_total", "go_goroutines"}},
	})
}
