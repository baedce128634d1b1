package web

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// memLimitStore is a LimitStore in memory, shared by the "nodes" of a test.
type memLimitStore struct {
	mu      sync.Mutex
	fails   map[string][]time.Time
	known   map[clientAccount]time.Time
	windows map[string]int
	calls   int // CountRequests
	forgets int // ForgetFailures
}

func newMemLimitStore() *memLimitStore {
	return &memLimitStore{fails: map[string][]time.Time{}, known: map[clientAccount]time.Time{}, windows: map[string]int{}}
}

func (m *memLimitStore) Failures(_ context.Context, keys []string, since time.Time, keep int) (map[string][]time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]time.Time{}
	for _, k := range keys {
		for _, at := range m.fails[k] {
			if at.After(since) {
				out[k] = append(out[k], at)
			}
		}
		if ts := out[k]; keep > 0 && len(ts) > keep {
			out[k] = ts[len(ts)-keep:]
		}
	}
	return out, nil
}

func (m *memLimitStore) AddFailure(_ context.Context, keys []string, at, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		m.fails[k] = append(m.fails[k], at)
	}
	return nil
}

func (m *memLimitStore) ForgetFailures(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgets++
	delete(m.fails, key)
	return nil
}

func (m *memLimitStore) KnownClient(_ context.Context, ip, account string) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.known[clientAccount{ip, account}], nil
}

func (m *memLimitStore) AddKnownClient(_ context.Context, ip, account string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.known[clientAccount{ip, account}] = at
	return nil
}

func (m *memLimitStore) CountRequests(_ context.Context, key string, start time.Time, n int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := key + "@" + start.String()
	m.windows[k] += n
	m.calls++
	return m.windows[k], nil
}

// sharedTest is what the "nodes" of a shared-limit test share: the store and
// a clock the test moves.
type sharedTest struct {
	t     *testing.T
	store *memLimitStore
	now   time.Time
}

func newSharedTest(t *testing.T) *sharedTest {
	return &sharedTest{t: t, store: newMemLimitStore(), now: time.Unix(1_700_000_000, 0)}
}

func (st *sharedTest) clock() time.Time { return st.now }

func (st *sharedTest) fail(error) { st.t.Error("no store error expected") }

// sharedRateNodes are two nodes' request limiters on one shared store.
func sharedRateNodes(store LimitStore, clock func() time.Time, perSecond float64, burst int, fail func(error)) [2]*rateLimiters {
	var rates [2]*rateLimiters
	for i := range rates {
		rates[i] = newRateLimiters(perSecond, burst, clock)
		rates[i].sharedIn(store, "token", fail)
	}
	return rates
}

// With a shared store, two nodes' limiters count together: the failures of
// both block either with the same rule, a client known to one is known to
// the other, and the request rate of a key is one budget per window.
func TestSharedLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newSharedTest(t)
	var nodes [2]*failLimiter
	for i := range nodes {
		nodes[i] = newFailLimiter(4, time.Minute, 0, st.clock)
		nodes[i].sharedIn(st.store, "ip", st.fail)
	}
	for i := range 4 {
		if w := nodes[0].blocked(ctx, "ip:1"); w != 0 {
			t.Fatalf("blocked after %d failures", i)
		}
		nodes[i%2].fail(ctx, "ip:1")
	}
	// Node 0 found the key clear just before node 1's failure: it trusts
	// that for sharedClearFor, then sees the lockout.
	if w := nodes[0].blocked(ctx, "ip:1"); w != 0 {
		t.Fatalf("node 0 within %v of finding the key clear: wait %v", sharedClearFor, w)
	}
	st.now = st.now.Add(sharedClearFor)
	for i, n := range nodes {
		if w := n.blocked(ctx, "ip:1"); w != time.Minute-sharedClearFor {
			t.Fatalf("node %d after 4 failures on both: wait %v, want the rest of the window", i, w)
		}
	}
	nodes[1].forget(ctx, "ip:1")
	if w := nodes[0].blocked(ctx, "ip:1"); w != 0 {
		t.Fatalf("after a success on the other node: wait %v", w)
	}

	var known [2]*knownClients
	for i := range known {
		known[i] = newKnownClients(time.Hour, st.clock)
		known[i].shared, known[i].onErr = st.store, st.fail
	}
	known[0].add(ctx, "10.0.0.1", "account:ann")
	if !known[1].has(ctx, "10.0.0.1", "account:ann") || known[1].has(ctx, "10.0.0.2", "account:ann") {
		t.Fatal("a client known to one node is not known to the other, or another is")
	}
	st.now = st.now.Add(time.Hour)
	if known[1].has(ctx, "10.0.0.1", "account:ann") {
		t.Fatal("a known client outlived the ttl")
	}

	// Windows of 3 s, 3 requests each; st.now is 1 s into a window (they start
	// at multiples of 3 s).
	rates := sharedRateNodes(st.store, st.clock, 1, 3, st.fail)
	st.now = time.Unix(1_700_000_002, 0)
	for i := range 3 {
		if w := rates[i%2].wait(ctx, "pat:1"); w != 0 {
			t.Fatalf("request %d waits %v", i+1, w)
		}
	}
	if w := rates[1].wait(ctx, "pat:1"); w != 2*time.Second {
		t.Fatalf("the fourth request of the window on both nodes waits %v, want the rest of the window", w)
	}
	st.now = st.now.Add(2 * time.Second)
	if w := rates[0].wait(ctx, "pat:1"); w != 0 {
		t.Fatalf("the next window waits %v", w)
	}
}

// A node adds a key's requests to the shared count in batches while the
// window is below half its budget (one store call for many requests), and
// each request from there on, so that two nodes let exactly the budget
// through.
func TestSharedRateBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newSharedTest(t)
	rates := sharedRateNodes(st.store, st.clock, 10, 100, st.fail) // windows of 10 s, 100 requests each
	for i := range 30 {
		if w := rates[0].wait(ctx, "pat:1"); w != 0 {
			t.Fatalf("request %d waits %v", i+1, w)
		}
	}
	if st.store.calls != 1 {
		t.Fatalf("30 requests far below the budget made %d st.store calls, want 1 (the window's first)", st.store.calls)
	}
	st.now = st.now.Add(sharedSyncEvery)
	rates[0].wait(ctx, "pat:1")
	if st.store.calls != 2 || st.store.windows["token pat:1@"+time.Unix(1_700_000_000, 0).String()] != 31 {
		t.Fatalf("after %v: %d calls, counts %v; want the 31 added", sharedSyncEvery, st.store.calls, st.store.windows)
	}
	allowed := 31
	for i := 0; i < 200; i++ {
		if rates[i%2].wait(ctx, "pat:1") == 0 {
			allowed++
		}
	}
	if allowed != 100 {
		t.Fatalf("two nodes let %d requests of the window through, want the budget of 100", allowed)
	}
}

// A success forgets a key's failures in the shared store only when there may
// be some: right after the key was read with none, it writes nothing (every
// request signed in with a password would otherwise be a write); after a
// failure, or once the reading is older than sharedClearFor, it does.
func TestSharedSuccessWritesOnlyWhatItForgets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newSharedTest(t)
	l := newFailLimiter(4, time.Minute, 0, st.clock)
	l.sharedIn(st.store, "ip", st.fail)
	for range 3 {
		l.blocked(ctx, "ip:1")
		l.forget(ctx, "ip:1")
	}
	if st.store.forgets != 0 {
		t.Fatalf("successes with no failure wrote %d forgets, want 0", st.store.forgets)
	}
	l.fail(ctx, "ip:1")
	l.blocked(ctx, "ip:1")
	l.forget(ctx, "ip:1")
	if st.store.forgets != 1 || len(st.store.fails["ip ip:1"]) != 0 {
		t.Fatalf("a success after a failure: %d forgets, failures left %v", st.store.forgets, st.store.fails)
	}
	l.blocked(ctx, "ip:1") // none again
	st.now = st.now.Add(sharedClearFor)
	l.forget(ctx, "ip:1")
	if st.store.forgets != 2 {
		t.Fatalf("a success %v after the reading: %d forgets, want 2", sharedClearFor, st.store.forgets)
	}

	// The readings of keys no longer asked about are forgotten, once a minute.
	for i := range 100 {
		l.blocked(ctx, fmt.Sprintf("ip:10.0.0.%d", i))
	}
	st.now = st.now.Add(time.Minute)
	l.blocked(ctx, "ip:1")
	held := 0
	for _, m := range []*sync.Map{&l.clear, &l.none} {
		m.Range(func(any, any) bool { held++; return true })
	}
	if held != 2 { // ip:1's two readings, just made
		t.Fatalf("after a minute the limiter holds %d readings, want 2", held)
	}
}
