package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"atrium/cmd/atrium/wire"
	"atrium/web/webtest"
)

// /metrics does not answer anyone: by default only a local client (a loopback
// connection forwarding no one's request); with [metrics] token, a request
// bearing it; with [metrics] listen, only that listener.
func TestMetricsAccess(t *testing.T) {
	t.Parallel()
	get := func(s *webtest.Server, header map[string]string) *webtest.Response {
		return s.Do(webtest.Request{Method: http.MethodGet, Path: "/metrics", Header: header})
	}
	ok := webtest.Scenario{Status: 200, Contains: []string{"go_goroutines"}}

	t.Run("default: local clients only", func(t *testing.T) {
		t.Parallel()
		s := webtest.New(t)
		webtest.Check(t, get(s, nil), ok)
		// What a reverse proxy on the same host forwards is not local.
		for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-IP"} {
			webtest.Check(t, get(s, map[string]string{h: "203.0.113.9"}), webtest.Scenario{Status: 403, Problem: "forbidden", Contains: []string{"[metrics] token"}})
		}
	})
	t.Run("token", func(t *testing.T) {
		t.Parallel()
		const token = "metrics-secret-0123456789"
		s := webtest.New(t, func(c *wire.Config) { c.Metrics.Token = token })
		ann := s.Bootstrap("Metrics Org", "ann@example.test", "admin")
		for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong-token"}, {"Authorization": "Bearer " + ann.Token}} {
			res := get(s, h)
			webtest.Check(t, res, webtest.Scenario{Status: 401, Problem: "unauthorized"})
			if res.Header.Get("WWW-Authenticate") == "" {
				t.Error("no WWW-Authenticate")
			}
		}
		webtest.Check(t, get(s, map[string]string{"Authorization": "Bearer " + token}), ok)
		webtest.Check(t, get(s, map[string]string{"Authorization": "Bearer " + token, "X-Forwarded-For": "203.0.113.9"}), ok)
	})
	t.Run("listen", func(t *testing.T) {
		t.Parallel()
		s := webtest.New(t, func(c *wire.Config) { c.Metrics.Listen = "127.0.0.1:0" })
		webtest.Check(t, get(s, nil), webtest.Scenario{Status: 404, Problem: "not_found", Contains: []string{"[metrics] listen"}})
		// The listener of its own (see wire.Main.Listen) serves them with no credential.
		ms := httptest.NewServer(s.Main.Server.MetricsHandler())
		defer ms.Close()
		res, err := http.Get(ms.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(b), "go_goroutines") {
			t.Fatalf("metrics listener: %d %.200s", res.StatusCode, b)
		}
	})
}
