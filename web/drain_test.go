package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A draining node counts the requests in flight, not the probes, and Wait
// returns once the last one finished.
func TestDrain(t *testing.T) {
	t.Parallel()
	var d Drain
	release := make(chan struct{})
	started := make(chan struct{})
	h := d.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(started)
			<-release
		}
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/slow", nil))
	}()
	<-started
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if d.Draining() || d.InFlight() != 1 {
		t.Fatalf("draining %v, in flight %d; want false, 1", d.Draining(), d.InFlight())
	}
	d.Begin()
	if !d.Draining() {
		t.Fatal("Begin did not start draining")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := d.Wait(ctx); err == nil {
		t.Fatal("Wait returned with a request in flight")
	}
	close(release)
	<-done
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Wait(ctx); err != nil {
		t.Fatalf("Wait after the last request: %v", err)
	}
}
