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
