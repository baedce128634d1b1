package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A request that arrives right after its connection's previous one, itself
// quick, yields before it is served; a connection's first request, one after a
// pause, one after a request that took longer than the window, and one on
// another connection do not, and a server without the connection record (no
// ConnContext) never does. Real HTTP over loopback, each client with its own
// keep-alive connection.
func TestFairTurnsYieldBackToBack(t *testing.T) {
	t.Parallel()
	// A window far longer than a request on loopback takes, even on a busy
	// machine, and pauses and slow requests well past it.
	const window, past = 50 * time.Millisecond, 150 * time.Millisecond
	type step struct {
		client int           // which client (each has one connection)
		pause  time.Duration // before the request
		slow   time.Duration // how long the handler takes
	}
	cases := []struct {
		name        string
		window      time.Duration
		connContext bool
		steps       []step
		yields      int64
	}{
		{"a connection's first request", time.Minute, true, []step{{0, 0, 0}}, 0},
		{"requests back to back on one connection", time.Minute, true, []step{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, 2},
		{"a request after a pause longer than the window", window, true, []step{{0, 0, 0}, {0, past, 0}}, 0},
		{"a pause, then back to back again", window, true, []step{{0, 0, 0}, {0, past, 0}, {0, 0, 0}}, 1},
		{"the first request of another connection", time.Minute, true, []step{{0, 0, 0}, {1, 0, 0}}, 0},
		{"two connections, each back to back", time.Minute, true, []step{{0, 0, 0}, {1, 0, 0}, {0, 0, 0}, {1, 0, 0}}, 2},
		{"a server without the connection record", time.Minute, false, []step{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, 0},
		{"right after a request that took longer than the window", window, true, []step{{0, 0, past}, {0, 0, 0}}, 0},
		{"a slow request, then quick ones back to back", window, true, []step{{0, 0, past}, {0, 0, 0}, {0, 0, 0}}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var yields, served atomic.Int64
			var s Server
			ts := httptest.NewUnstartedServer(fairTurns(tc.window, func() { yields.Add(1) }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served.Add(1)
				if d, err := time.ParseDuration(r.Header.Get("Slow")); err == nil {
					time.Sleep(d)
				}
				_, _ = io.WriteString(w, "ok")
			})))
			if tc.connContext {
				ts.Config.ConnContext = s.ConnContext
			}
			ts.Start()
			defer ts.Close()
			clients := []*http.Client{{Transport: &http.Transport{}}, {Transport: &http.Transport{}}}
			for _, c := range clients {
				defer c.CloseIdleConnections()
			}
			for i, st := range tc.steps {
				time.Sleep(st.pause)
				req, err := http.NewRequest(http.MethodGet, ts.URL, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Slow", st.slow.String())
				res, err := clients[st.client].Do(req)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				b, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusOK || string(b) != "ok" {
					t.Fatalf("request %d: %d %q (%v), want 200 ok", i, res.StatusCode, b, err)
				}
			}
			if got := served.Load(); got != int64(len(tc.steps)) {
				t.Fatalf("served %d requests, want %d", got, len(tc.steps))
			}
			if got := yields.Load(); got != tc.yields {
				t.Fatalf("yielded %d times, want %d", got, tc.yields)
			}
		})
	}
}
