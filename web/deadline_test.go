package web

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// done reports whether ch is closed within d (0: already).
func done(ch <-chan struct{}, d time.Duration) bool {
	if d == 0 {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// The lazy deadline behaves as context.WithDeadline does, whether or not
// anything waited on it.
func TestLazyDeadline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, parent context.Context, cancelParent context.CancelFunc)
	}{
		{"answered without waiting, then stopped", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			c, stop := withLazyDeadline(parent, time.Now().Add(time.Hour))
			if err := c.Err(); err != nil {
				t.Fatalf("Err before stop: %v", err)
			}
			if c.Value(ctxKey{}) != "v" {
				t.Fatal("the parent's values are not seen")
			}
			stop()
			if err := c.Err(); !errors.Is(err, context.Canceled) {
				t.Fatalf("Err after stop: %v", err)
			}
			if !done(c.Done(), 0) {
				t.Fatal("Done is open after stop")
			}
		}},
		{"a waiter sees the deadline pass", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			c, stop := withLazyDeadline(parent, time.Now().Add(20*time.Millisecond))
			defer stop()
			if !done(c.Done(), 2*time.Second) {
				t.Fatal("Done did not close at the deadline")
			}
			if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Err: %v", err)
			}
			if cause := context.Cause(c); !errors.Is(cause, context.DeadlineExceeded) {
				t.Fatalf("Cause: %v", cause)
			}
		}},
		{"the deadline passes with no waiter", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			c, stop := withLazyDeadline(parent, time.Now().Add(time.Millisecond))
			defer stop()
			time.Sleep(5 * time.Millisecond)
			if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Err: %v", err)
			}
			if !done(c.Done(), time.Second) {
				t.Fatal("a late Done is open")
			}
		}},
		{"the parent ends first, with no waiter", func(t *testing.T, parent context.Context, cancelParent context.CancelFunc) {
			c, stop := withLazyDeadline(parent, time.Now().Add(time.Hour))
			defer stop()
			cancelParent()
			if err := c.Err(); !errors.Is(err, context.Canceled) {
				t.Fatalf("Err: %v", err)
			}
			if !done(c.Done(), time.Second) {
				t.Fatal("Done is open")
			}
		}},
		{"the parent ends while waited on", func(t *testing.T, parent context.Context, cancelParent context.CancelFunc) {
			c, stop := withLazyDeadline(parent, time.Now().Add(time.Hour))
			defer stop()
			ch := c.Done()
			cancelParent()
			if !done(ch, time.Second) {
				t.Fatal("Done is open")
			}
			if err := c.Err(); !errors.Is(err, context.Canceled) {
				t.Fatalf("Err: %v", err)
			}
		}},
		{"a context made from it ends at its deadline", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			c, stop := withLazyDeadline(parent, time.Now().Add(20*time.Millisecond))
			defer stop()
			inner, cancel := context.WithCancel(context.WithValue(c, ctxKey{}, "inner"))
			defer cancel()
			if !done(inner.Done(), 2*time.Second) {
				t.Fatal("the inner context did not end")
			}
			if err := inner.Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("inner Err: %v", err)
			}
		}},
		{"stopped while waited on", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			c, stop := withLazyDeadline(parent, time.Now().Add(time.Hour))
			ch := c.Done()
			stop()
			if !done(ch, time.Second) {
				t.Fatal("Done is open after stop")
			}
			if err := c.Err(); !errors.Is(err, context.Canceled) {
				t.Fatalf("Err: %v", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
			defer cancel()
			tc.run(t, parent, cancel)
		})
	}
}

// The earlier of the parent's deadline and its own is the one reported.
func TestLazyDeadlineDeadline(t *testing.T) {
	t.Parallel()
	soon, late := time.Now().Add(time.Minute), time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name         string
		parent, own  time.Time
		want         time.Time
		parentHasOne bool
	}{
		{"no parent deadline", time.Time{}, late, late, false},
		{"the parent's is earlier", soon, late, soon, true},
		{"its own is earlier", late, soon, soon, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := context.Background()
			if tc.parentHasOne {
				var cancel context.CancelFunc
				parent, cancel = context.WithDeadline(parent, tc.parent)
				defer cancel()
			}
			c, stop := withLazyDeadline(parent, tc.own)
			defer stop()
			if d, ok := c.Deadline(); !ok || !d.Equal(tc.want) {
				t.Fatalf("Deadline %v %v, want %v", d, ok, tc.want)
			}
		})
	}
}
