package sqldb

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The limits' shared counts: failures within the window, the latest keep of
// each key, forgotten on request; known clients keep their latest success;
// every request of a window counts once however many count at once; the
// prune deletes what is past its window.
func TestLimitStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := LimitStore{DB: openTest(t)}
	t0 := time.UnixMilli(1_700_000_000_000)
	for i := range 5 {
		if err := s.AddFailure(ctx, []string{"ip 10.0.0.1", "account ann"}, t0.Add(time.Duration(i)*time.Second), t0.Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Failures(ctx, []string{"ip 10.0.0.1", "account ann", "account bob"}, t0.Add(time.Second), 2)
	if err != nil {
		t.Fatal(err)
	}
	if ts := got["ip 10.0.0.1"]; len(ts) != 2 || !ts[0].Equal(t0.Add(3*time.Second)) || !ts[1].Equal(t0.Add(4*time.Second)) {
		t.Fatalf("failures of the address: %v", ts)
	}
	if len(got["account bob"]) != 0 || len(got["account ann"]) != 2 {
		t.Fatalf("failures: %v", got)
	}
	// A failure forgets the key's failures at or before its window.
	if err := s.AddFailure(ctx, []string{"account ann"}, t0.Add(10*time.Second), t0.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Failures(ctx, []string{"account ann"}, time.UnixMilli(0), 0); len(got["account ann"]) != 2 {
		t.Fatalf("after the window moved: %v", got)
	}
	if err := s.ForgetFailures(ctx, "account ann"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Failures(ctx, []string{"account ann", "ip 10.0.0.1"}, time.UnixMilli(0), 0); len(got["account ann"]) != 0 || len(got["ip 10.0.0.1"]) != 5 {
		t.Fatalf("after forgetting: %v", got)
	}

	if at, err := s.KnownClient(ctx, "10.0.0.1", "ann"); err != nil || !at.IsZero() {
		t.Fatalf("unknown client: %v %v", at, err)
	}
	for _, at := range []time.Time{t0.Add(time.Hour), t0} { // an older success does not move it back
		if err := s.AddKnownClient(ctx, "10.0.0.1", "ann", at); err != nil {
			t.Fatal(err)
		}
	}
	if at, err := s.KnownClient(ctx, "10.0.0.1", "ann"); err != nil || !at.Equal(t0.Add(time.Hour)) {
		t.Fatalf("known client: %v %v", at, err)
	}

	var wg sync.WaitGroup
	seen := make(chan int, 20)
	for range 20 {
		wg.Go(func() {
			n, err := s.CountRequests(ctx, "token pat:1", t0, 1)
			if err != nil {
				t.Error(err)
			}
			seen <- n
		})
	}
	wg.Wait()
	close(seen)
	counts := map[int]bool{}
	for n := range seen {
		counts[n] = true
	}
	if len(counts) != 20 || !counts[1] || !counts[20] {
		t.Fatalf("counts of 20 requests: %v", counts)
	}
	if n, err := s.CountRequests(ctx, "token pat:1", t0.Add(time.Second), 1); err != nil || n != 1 {
		t.Fatalf("the next window: %d %v", n, err)
	}

	n, err := s.PruneLimits(ctx, t0.Add(2*time.Second), t0.Add(time.Hour), t0)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3+1+1 { // failures at t0, +1s, +2s; the known client; the first window
		t.Fatalf("pruned %d rows, want 5", n)
	}
}
