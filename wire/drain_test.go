package wire

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDrainOnShutdown: when the node is told to stop (SIGTERM ends Serve's
// context), /readyz answers 503 at once while a request in flight finishes;
// then the node stops listening and Serve returns.
func TestDrainOnShutdown(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ATRIUM_DATA": t.TempDir(), "ATRIUM_LISTEN": "127.0.0.1:0"}
	cfg, err := LoadConfig("", func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	addr, err := m.Listen()
	if err != nil {
		t.Fatal(err)
	}
	// A slow request beside the server's routes, counted like them.
	started, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		io.WriteString(w, "done")
	})
	mux.Handle("/", m.Server.Handler())
	m.http.Handler = m.drain.Wrap(mux)
	served := make(chan error, 1)
	go func() { served <- m.Serve(ctx) }()

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	base := "http://" + addr.String()
	readyz := func() (int, string, error) {
		res, err := client.Get(base + "/readyz")
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), nil
	}
	if st, body, err := readyz(); err != nil || st != 200 {
		t.Fatalf("before shutdown: /readyz %d %s %v", st, body, err)
	}
	slow := make(chan string, 1)
	go func() {
		res, err := client.Get(base + "/slow")
		if err != nil {
			slow <- err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		slow <- string(b)
	}()
	<-started
	cancel() // SIGTERM
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, body, err := readyz()
		if err == nil && st == http.StatusServiceUnavailable {
			if !strings.Contains(body, "shutting down") {
				t.Errorf("/readyz while draining: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz while draining: %d %s %v, want 503", st, body, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned with a request in flight: %v", err)
	default:
	}
	close(release)
	if got := <-slow; got != "done" {
		t.Fatalf("the request in flight: %q, want done", got)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the last request")
	}
	if _, _, err := readyz(); err == nil {
		t.Fatal("the node still listens after Serve returned")
	}
}
