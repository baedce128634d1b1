package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The idle timeout bounds a client that stops sending or reading, not a
// handler that takes its time: a response written after a long handler (a
// large PUT hashed and synced to disk, say) still reaches the client.
func TestIdleTimeoutSparesSlowHandlers(t *testing.T) {
	t.Parallel()
	const idle = 150 * time.Millisecond
	cases := []struct {
		name    string
		handler func(w http.ResponseWriter)
		body    string
	}{
		{"status only after a slow handler", func(w http.ResponseWriter) {
			time.Sleep(3 * idle)
			w.WriteHeader(http.StatusCreated)
		}, ""},
		{"body after a slow handler", func(w http.ResponseWriter) {
			time.Sleep(3 * idle)
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, "done")
		}, "done"},
		{"handler slow after its last write", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, "done")
			time.Sleep(3 * idle)
		}, "done"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(ioDeadlines(idle, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.Copy(io.Discard, r.Body); err != nil {
					t.Errorf("reading the body: %v", err)
				}
				tc.handler(w)
			})))
			defer srv.Close()
			res, err := http.Post(srv.URL, "text/plain", strings.NewReader("payload"))
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil || res.StatusCode != http.StatusCreated || string(b) != tc.body {
				t.Fatalf("got %d %q (%v), want 201 %q", res.StatusCode, b, err, tc.body)
			}
		})
	}
}

// A known client is remembered for the ttl after its latest success; a
// success within knownRefresh of the one written down is not written again,
// so the memory ends at most that much early.
func TestKnownClients(t *testing.T) {
	t.Parallel()
	const ttl = time.Hour
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		at        time.Duration // since start
		add       bool          // a success of ann from 10.0.0.1 at this time
		wantAnn   bool          // has(ann) after the step
		wantOther bool          // has(ann) from another address
	}{
		{at: 0, wantAnn: false},
		{at: 0, add: true, wantAnn: true},
		{at: 30 * time.Second, add: true, wantAnn: true}, // within knownRefresh: not written
		{at: ttl - time.Second, wantAnn: true},
		{at: ttl, wantAnn: false}, // the success at 30 s was not written down
		{at: ttl + time.Minute, add: true, wantAnn: true},
		{at: ttl + 2*time.Minute, add: true, wantAnn: true}, // past knownRefresh: written
		{at: 2*ttl + time.Minute + time.Second, wantAnn: true},
		{at: 2*ttl + 2*time.Minute, wantAnn: false},
	}
	now := start
	k := newKnownClients(ttl, func() time.Time { return now })
	for i, st := range steps {
		now = start.Add(st.at)
		if st.add {
			k.add(context.Background(), "10.0.0.1", "account:ann@example.test")
		}
		if got := k.has(context.Background(), "10.0.0.1", "account:ann@example.test"); got != st.wantAnn {
			t.Fatalf("step %d (%v, add %v): has = %v, want %v", i, st.at, st.add, got, st.wantAnn)
		}
		if got := k.has(context.Background(), "10.0.0.2", "account:ann@example.test"); got != st.wantOther {
			t.Fatalf("step %d: has from another address = %v", i, got)
		}
	}
	// The hourly sweep, run by a later success, forgets those older than the ttl.
	now = start
	swept := newKnownClients(ttl, func() time.Time { return now })
	swept.add(context.Background(), "10.0.0.3", "account:bob@example.test")
	now = start.Add(ttl + time.Hour)
	swept.add(context.Background(), "10.0.0.4", "account:carol@example.test")
	if _, ok := swept.seen[clientAccount{"10.0.0.3", "account:bob@example.test"}]; ok || len(swept.seen) != 1 {
		t.Fatalf("after the sweep: %v", swept.seen)
	}
	if newKnownClients(0, nil) != nil {
		t.Fatal("a ttl of 0 remembers no one")
	}
	var none *knownClients
	none.add(context.Background(), "10.0.0.1", "x")
	if none.has(context.Background(), "10.0.0.1", "x") {
		t.Fatal("a nil knownClients knows someone")
	}
}

// countDeadlines counts the write deadlines a handler sets through it.
type countDeadlines struct {
	http.ResponseWriter
	n *atomic.Int32
}

func (c countDeadlines) SetWriteDeadline(t time.Time) error {
	c.n.Add(1)
	return http.NewResponseController(c.ResponseWriter).SetWriteDeadline(t)
}

func (c countDeadlines) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// A keep-alive connection's write deadline outlives its request: a request
// that comes less than a quarter of the idle timeout after the connection's
// deadline was set leaves it, a later one or another connection's sets its own.
func TestIdleWriteDeadlinePerConnection(t *testing.T) {
	t.Parallel()
	const idle = 400 * time.Millisecond // set again after idle/4
	var n atomic.Int32
	h := ioDeadlines(idle, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(countDeadlines{w, &n}, r)
	}))
	srv.Config.ConnContext = (&Server{}).ConnContext
	srv.Start()
	defer srv.Close()

	get := func(c *http.Client) {
		t.Helper()
		res, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || string(b) != "ok" {
			t.Fatalf("got %d %q", res.StatusCode, b)
		}
	}
	one := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	other := &http.Client{Transport: &http.Transport{}}
	steps := []struct {
		name   string
		pause  time.Duration
		client *http.Client
		want   int32 // deadlines set by the step
	}{
		{"a connection's first request", 0, one, 1},
		{"the next, right after", 0, one, 0},
		{"and the next", 0, one, 0},
		{"another connection", 0, other, 1},
		{"after a quarter of the idle timeout", idle/4 + 50*time.Millisecond, one, 1},
		{"right after that", 0, one, 0},
	}
	for _, st := range steps {
		time.Sleep(st.pause)
		before := n.Load()
		get(st.client)
		if got := n.Load() - before; got != st.want {
			t.Errorf("%s: %d write deadlines set, want %d", st.name, got, st.want)
		}
	}
}

func TestLimitNet(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"192.0.2.1":            "192.0.2.1",
		"::ffff:192.0.2.1":     "192.0.2.1",
		"2001:db8:1:2::1":      "2001:db8:1:2::/64",
		"2001:db8:1:2:a:b:c:d": "2001:db8:1:2::/64",
		"::1":                  "::/64",
		"not an address":       "not an address",
	} {
		if got := limitNet(in); got != want {
			t.Errorf("limitNet(%q) = %q, want %q", in, got, want)
		}
	}
}
