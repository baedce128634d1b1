package indexer

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"atrium/app/drive"
)

// TestBurstGate: a background batch waits while the writer takes more than
// burstWrites write transactions a second, but never longer than maxDefer
// after the index last caught up; without a write counter it never waits.
func TestBurstGate(t *testing.T) {
	t.Parallel()
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

// eventCounter is a store whose outbox is empty; it counts the reads of it.
type eventCounter struct {
	Store
	reads atomic.Int32
}

func (s *eventCounter) DriveEventsAfter(_ context.Context, seq int64, _ int) (drive.SearchChanges, int64, error) {
	s.reads.Add(1)
	return drive.SearchChanges{}, seq, nil
}

// emptyIndex is an index that has applied nothing.
type emptyIndex struct{ drive.SearchIndex }

func (emptyIndex) Cursor() (int64, error) { return 0, nil }

// TestRunWaitsOutABurst: Run's background batches do not read the outbox
// while the writer takes a burst of writes, and do once the burst is over.
// Not parallel: the burst is paced in real time, against the gate's ticks.
func TestRunWaitsOutABurst(t *testing.T) {
	store := &eventCounter{}
	x := New(store, nil, nil, nil, nil)
	x.idx = emptyIndex{}
	var writes atomic.Uint64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		x.Run(ctx, 100*time.Millisecond, writes.Load)
	}()
	// A burst: some 20,000 write transactions a second for 600 ms (six ticks,
	// each far above burstWrites, even if this loop is held up a while).
	for range 600 {
		writes.Add(20)
		time.Sleep(time.Millisecond)
	}
	if n := store.reads.Load(); n != 0 {
		t.Errorf("the indexer read the outbox %d times during the burst", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for store.reads.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the indexer did not read the outbox in the 5 s after the burst")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}
