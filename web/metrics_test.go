package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"atrium/webtest"
	"atrium/wire"
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

// The database writer's figures are in /metrics: writes are counted as they
// commit, several to a commit at most, and the time of each phase grows.
func TestMetricsWrites(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	if s.Main.DB.IsPostgres() {
		t.Skip("the figures of SQLite's one writer (group commit)")
	}
	scrape := func() map[string]float64 {
		res := s.Do(webtest.Request{Method: http.MethodGet, Path: "/metrics"})
		webtest.Check(t, res, webtest.Scenario{Status: 200})
		out := map[string]float64{}
		for _, line := range strings.Split(string(res.Body), "\n") {
			name, v, ok := strings.Cut(line, " ")
			if !ok || !strings.HasPrefix(name, "atrium_db_") {
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			out[name] = f
		}
		return out
	}
	before := scrape()
	ann := s.Bootstrap("Metrics Org", "ann@example.test", "admin")
	webtest.Check(t, s.Do(webtest.Request{Method: http.MethodPost, Path: "/api/v1/drive/folders", Token: ann.Token,
		Body: map[string]any{"name": "Reports"}}), webtest.Scenario{Status: 201})
	after := scrape()
	for _, name := range []string{"atrium_db_write_transactions_total", "atrium_db_commits_total",
		"atrium_db_write_wait_seconds_total", "atrium_db_write_statements_seconds_total", "atrium_db_commit_seconds_total"} {
		if _, ok := after[name]; !ok {
			t.Fatalf("/metrics has no %s", name)
		}
	}
	tx := after["atrium_db_write_transactions_total"] - before["atrium_db_write_transactions_total"]
	commits := after["atrium_db_commits_total"] - before["atrium_db_commits_total"]
	if commits < 2 || tx < commits {
		t.Errorf("%v transactions in %v commits, want at least 2 commits (the bootstrap, the folder), none shared by no transaction", tx, commits)
	}
	for _, name := range []string{"atrium_db_write_statements_seconds_total", "atrium_db_commit_seconds_total"} {
		if after[name] <= before[name] {
			t.Errorf("%s did not grow: %v then %v", name, before[name], after[name])
		}
	}
}
