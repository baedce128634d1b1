package indexer

import (
	"testing"
	"time"
)

// TestBurstGate: a background batch waits while the writer takes more than
// burstWrites write transactions a second, but never longer than maxDefer
// after the index last caught up; without a write counter it never waits.
func TestBurstGate(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tick := 2 * time.Second
	type step struct {
		writes uint64 // transactions during the tick
		wait   bool
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"quiet", []step{{0, false}, {10, false}, {100, false}}},                                                          // 100 in 2 s: 50/s, not more
		{"a burst waits", []step{{3000, true}, {3000, true}, {0, false}}},                                                 // then it is over
		{"at most maxDefer", []step{{3000, true}, {3000, true}, {3000, true}, {3000, true}, {3000, false}, {3000, true}}}, // 10 s, then it runs; the next waits again
		{"just over the rate", []step{{101, true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n uint64
			g := newBurstGate(func() uint64 { return n }, t0)
			now := t0
			for i, s := range c.steps {
				n += s.writes
				now = now.Add(tick)
				got := g.wait(now)
				if got != s.wait {
					t.Fatalf("tick %d (%d writes): wait %v, want %v", i+1, s.writes, got, s.wait)
				}
				if !got {
					g.caughtUp = now // Run: the batch ran and caught up
				}
			}
		})
	}
	g := newBurstGate(nil, t0)
	if g.wait(t0.Add(tick)) {
		t.Error("without a write counter the batch waited")
	}
}
