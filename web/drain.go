package web

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// Drain is a node's way out of a balancer's rotation: it counts the requests
// in flight (the probes aside) and, once Begin is called, readiness fails
// (the node answers /readyz with 503) while the node still serves, so that the
// balancer stops sending it requests before it stops listening.
type Drain struct {
	draining atomic.Bool
	inFlight atomic.Int64
}

// Wrap counts h's requests in flight.
func (d *Drain) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if unthrottled(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		d.inFlight.Add(1)
		defer d.inFlight.Add(-1)
		h.ServeHTTP(w, r)
	})
}

// Begin starts draining: Draining reports true from now on.
func (d *Drain) Begin() { d.draining.Store(true) }

// Draining reports whether the node is shutting down (readiness fails).
func (d *Drain) Draining() bool { return d.draining.Load() }

// InFlight is how many requests (the probes aside) are being served.
func (d *Drain) InFlight() int64 { return d.inFlight.Load() }

// Wait returns once no request is in flight, or with ctx's error when ctx
// ends first.
func (d *Drain) Wait(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for d.inFlight.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}
