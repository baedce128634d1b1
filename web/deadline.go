package web

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// lazyDeadline is a context that ends at a deadline, whose timer starts only
// once something waits for it (Done). Most operations answer from memory and
// never ask: a context.WithTimeout per request was about 5% of the server's
// CPU on GET /api/v1/me (adding and removing a runtime timer under its lock).
// Err and Deadline hold without the timer; Done starts it, with the same
// absolute deadline, so a query that waits ends when it would have.
type lazyDeadline struct {
	context.Context // the parent

	at      time.Time
	started atomic.Bool // child and cancel are set

	mu      sync.Mutex
	stopped bool // stop ran before anything waited
	child   context.Context
	cancel  context.CancelFunc
}

// withLazyDeadline returns ctx bounded by at and a function that ends it,
// releasing its timer if one started: call it when the work is done, as the
// cancel function of context.WithDeadline.
func withLazyDeadline(ctx context.Context, at time.Time) (context.Context, context.CancelFunc) {
	c := &lazyDeadline{Context: ctx, at: at}
	return c, c.stop
}

func (c *lazyDeadline) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started.Load() {
		c.cancel()
		return
	}
	c.stopped = true
}

func (c *lazyDeadline) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.at) {
		return d, true
	}
	return c.at, true
}

func (c *lazyDeadline) Done() <-chan struct{} {
	if c.started.Load() {
		return c.child.Done()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return closedDone
	}
	if !c.started.Load() {
		c.child, c.cancel = context.WithDeadline(c.Context, c.at)
		c.started.Store(true)
	}
	return c.child.Done()
}

func (c *lazyDeadline) Err() error {
	if c.started.Load() {
		return c.child.Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.at) {
		return context.DeadlineExceeded
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started.Load() {
		return c.child.Err()
	}
	if c.stopped {
		return context.Canceled
	}
	return nil
}

// Value answers from the timer's context once it started, so that contexts
// made from this one (and context.Cause) find it.
func (c *lazyDeadline) Value(key any) any {
	if c.started.Load() {
		return c.child.Value(key)
	}
	return c.Context.Value(key)
}

// closedDone is the Done of a lazyDeadline stopped before anything waited.
var closedDone = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()
