package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The idle timeout bounds a client that stops sending or reading, not a
// handler that takes its time: a response written after a long handler (a
// large PUT hashed and synced to disk, say) still reaches the client.
func TestIdleTimeoutSparesSlowHandlers(t *testing.T) {
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
			k.add("10.0.0.1", "account:ann@example.test")
		}
		if got := k.has("10.0.0.1", "account:ann@example.test"); got != st.wantAnn {
			t.Fatalf("step %d (%v, add %v): has = %v, want %v", i, st.at, st.add, got, st.wantAnn)
		}
		if got := k.has("10.0.0.2", "account:ann@example.test"); got != st.wantOther {
			t.Fatalf("step %d: has from another address = %v", i, got)
		}
	}
	// The hourly sweep, run by a later success, forgets those older than the ttl.
	now = start
	swept := newKnownClients(ttl, func() time.Time { return now })
	swept.add("10.0.0.3", "account:bob@example.test")
	now = start.Add(ttl + time.Hour)
	swept.add("10.0.0.4", "account:carol@example.test")
	if _, ok := swept.seen[clientAccount{"10.0.0.3", "account:bob@example.test"}]; ok || len(swept.seen) != 1 {
		t.Fatalf("after the sweep: %v", swept.seen)
	}
	if newKnownClients(0, nil) != nil {
		t.Fatal("a ttl of 0 remembers no one")
	}
	var none *knownClients
	none.add("10.0.0.1", "x")
	if none.has("10.0.0.1", "x") {
		t.Fatal("a nil knownClients knows someone")
	}
}
