package web

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Failed sign-ins are limited per account (app passwords on the file mount and
// DAV doors, OAuth client secrets) and per client address (any credential):
// after Limits.AuthFailures (per account) or Limits.AuthFailuresPerIP (per
// address) failures within the window, further attempts for that account or
// from that address are refused with 429 and Retry-After until the oldest
// failure leaves the window — a correct password included, so that guessing
// cannot go on.

// failLimiter counts failures per key in a sliding window.
type failLimiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	now    func() time.Time
	fails  map[string][]time.Time
	sweep  time.Time
}

// newFailLimiter returns a limiter of max failures per window; now nil is the
// wall clock. max 0 is no limit (a nil limiter, which blocks nothing).
func newFailLimiter(max int, window time.Duration, now func() time.Time) *failLimiter {
	if max <= 0 || window <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &failLimiter{max: max, window: window, now: now, fails: map[string][]time.Time{}}
}

// recent drops a key's failures older than the window; mu is held.
func (l *failLimiter) recent(key string, now time.Time) []time.Time {
	ts := l.fails[key]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= l.window {
		i++
	}
	if i == len(ts) {
		delete(l.fails, key)
		return nil
	}
	if i > 0 {
		ts = ts[i:]
		l.fails[key] = ts
	}
	return ts
}

// blocked returns how long until any of keys may try again; 0 when none is blocked.
func (l *failLimiter) blocked(keys ...string) time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var wait time.Duration
	for _, k := range keys {
		if ts := l.recent(k, now); len(ts) >= l.max {
			wait = max(wait, ts[len(ts)-l.max].Add(l.window).Sub(now))
		}
	}
	return wait
}

// fail records a failure for each key.
func (l *failLimiter) fail(keys ...string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.sweep) > l.window { // forget idle keys now and then
		for k := range l.fails {
			l.recent(k, now)
		}
		l.sweep = now
	}
	for _, k := range keys {
		ts := append(l.recent(k, now), now)
		if len(ts) > l.max {
			ts = ts[len(ts)-l.max:]
		}
		l.fails[k] = ts
	}
}

// accountKey is the limiter key of a sign-in name.
func accountKey(name string) string { return "account:" + strings.ToLower(strings.TrimSpace(name)) }

// tooManyFailures is the 429 problem of a blocked sign-in attempt.
func (s *Server) tooManyFailures(wait time.Duration) *Problem {
	secs := int((wait + time.Second - 1) / time.Second)
	p := s.problems.make(http.StatusTooManyRequests, "rate_limited",
		"Too many failed sign-in attempts; try again in "+strconv.Itoa(secs)+" seconds.")
	p.retryAfter = max(secs, 1)
	return p
}
