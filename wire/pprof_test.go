package wire

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// TestProfilerOnTheMetricsListenerOnly: with [metrics] pprof the profiler is
// served on the private metrics listener and never on the public one; without
// a metrics listener the setting is refused.
func TestProfilerOnTheMetricsListenerOnly(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ATRIUM_DATA": t.TempDir(), "ATRIUM_LISTEN": "127.0.0.1:0",
		"ATRIUM_METRICS_LISTEN": "127.0.0.1:0", "ATRIUM_METRICS_PPROF": "true"}
	cfg, err := LoadConfig("", func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m, err := Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	addr, err := m.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
		m.Close()
	})
	get := func(url string) int {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if st := get("http://" + m.MetricsAddr().String() + "/debug/pprof/heap?debug=1"); st != 200 {
		t.Errorf("profiler on the metrics listener: %d", st)
	}
	if st := get("http://" + addr.String() + "/debug/pprof/heap?debug=1"); st != 404 {
		t.Errorf("profiler on the public listener: %d", st)
	}

	delete(env, "ATRIUM_METRICS_LISTEN")
	if _, err := LoadConfig("", func(k string) string { return env[k] }, nil); err == nil {
		t.Error("pprof without a metrics listener was accepted")
	}
}
