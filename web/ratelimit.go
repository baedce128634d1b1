package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"

	"atrium/app"
	"atrium/web/rest"
)

// Failed sign-ins are limited so that guessing is slowed without letting anyone
// lock an account's owner out:
//
//   - per account and client address (app passwords on the file mount and DAV
//     doors, OAuth client secrets): after Limits.AuthFailures failures within
//     the window, that account is refused from that address with 429 and a
//     Retry-After that grows with every further failure (Limits.AuthFailureBackoff,
//     doubled each time, at most the window). Failures from one address never
//     slow the account down from another; a success clears the count.
//   - per account from every address together (passwords: web app sign-in,
//     app passwords): after Limits.AuthFailuresPerAccount failures within the
//     window, the account's attempts wait with the same growing backoff —
//     except from clients where it signed in before (Limits.KnownClientTTL),
//     so that a spread of addresses gets no fresh budgets and the owner is
//     not locked out.
//   - per account, for the second factor (two-factor codes): after
//     Limits.AuthCodeFailures wrong codes within the window from anywhere, the
//     account's code step waits; the password is known at that step, so
//     slowing it locks out no one else.
//   - per client address (any credential): after Limits.AuthFailuresPerIP
//     failures within the window, the address's credentials are refused until
//     the oldest failure leaves the window — except a correct credential of an
//     account that signed in successfully from that address within
//     Limits.KnownClientTTL, so that an address spraying many accounts is
//     stopped while the owner behind the same address keeps working.
//
// A client address is an IPv6 address's /64 or an IPv4 address (limitNet).
//
// The secrets themselves are random (160-bit app passwords, 256-bit tokens):
// the limits cut the noise and load of guessing; they are not what makes
// guessing hopeless.

// failLimiter counts failures per key in a sliding window. With a backoff, a
// key with max or more failures is blocked for backoff·2^(failures−max) (at
// most the window) after its latest failure; without one, until the oldest of
// its last max failures leaves the window.
//
// The failures are counted in the process's memory, or, with a shared store
// (LimitStore: the database of a cluster), there, so that the nodes of a
// cluster count them together; the rule is the same either way.
type failLimiter struct {
	mu      sync.RWMutex
	max     int
	window  time.Duration
	backoff time.Duration
	now     func() time.Time
	fails   map[string][]time.Time
	sweep   time.Time
	// shared, when set, keeps the failures instead of fails, under name's
	// keys; onErr hears of its errors (the limit then blocks nothing).
	shared LimitStore
	name   string
	onErr  func(error)
	// clear holds, with a shared store, when keys were last read from it
	// and found blocking nothing: for sharedClearFor the node answers them
	// itself (a query on every authenticated request cost a third of a
	// node's throughput on PostgreSQL). Its own failures drop the key.
	clear sync.Map // key → time.Time
	// none holds, with a shared store, when keys were last read from it
	// with no failure at all: a success within sharedClearFor of that has
	// nothing to forget, and writes nothing (a DELETE on every request
	// signed in with a password or an app password was a write per
	// request on PostgreSQL). Its own failures drop the key.
	none sync.Map // key → time.Time
}

// sharedClearFor is how long a node trusts a shared key it found blocking
// nothing: a lockout that other nodes' failures cause reaches it at most
// that late; its own failures count at once.
const sharedClearFor = time.Second

// LimitStore keeps what the sign-in and request limits count where every node of a
// cluster sees it (web.Config.Limiter; the database on PostgreSQL). Without
// one, a node counts in its memory.
type LimitStore interface {
	// Failures returns each of keys' failures after since, oldest first, at
	// most the latest keep of each.
	Failures(ctx context.Context, keys []string, since time.Time, keep int) (map[string][]time.Time, error)
	// AddFailure records a failure of each of keys at at, and forgets their
	// failures at or before since.
	AddFailure(ctx context.Context, keys []string, at, since time.Time) error
	// ForgetFailures forgets key's failures.
	ForgetFailures(ctx context.Context, key string) error
	// KnownClient reports when account last signed in from ip (zero: never,
	// or not remembered).
	KnownClient(ctx context.Context, ip, account string) (time.Time, error)
	// AddKnownClient records a success of account from ip at at.
	AddKnownClient(ctx context.Context, ip, account string, at time.Time) error
	// CountRequests adds n requests of key to the window that starts at
	// start and returns the window's count so far, these included.
	CountRequests(ctx context.Context, key string, start time.Time, n int) (int, error)
}

// newFailLimiter returns a limiter of max failures per window; now nil is the
// wall clock. max 0 is no limit (a nil limiter, which blocks nothing).
func newFailLimiter(max int, window, backoff time.Duration, now func() time.Time) *failLimiter {
	if max <= 0 || window <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &failLimiter{max: max, window: window, backoff: min(backoff, window), now: now, fails: map[string][]time.Time{}}
}

// sharedIn makes l count in store under name's keys (nil store: in memory).
func (l *failLimiter) sharedIn(store LimitStore, name string, onErr func(error)) {
	if l != nil && store != nil {
		l.shared, l.name, l.onErr = store, name, onErr
	}
}

// sharedKeys are keys as the shared store names them (the limiters share it).
func (l *failLimiter) sharedKeys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = l.name + " " + k
	}
	return out
}

// waitAfter is how long a key with the failures ts (oldest first, within
// the window) waits from now: the rule of either store.
func (l *failLimiter) waitAfter(ts []time.Time, now time.Time) time.Duration {
	switch {
	case len(ts) < l.max:
		return 0
	case l.backoff > 0:
		return ts[len(ts)-1].Add(l.delay(len(ts))).Sub(now)
	default:
		return ts[len(ts)-l.max].Add(l.window).Sub(now)
	}
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

// delay is how long a key with n >= max recent failures waits after its latest.
func (l *failLimiter) delay(n int) time.Duration {
	d := l.backoff
	for i := l.max; i < n && d < l.window; i++ {
		d *= 2
	}
	return min(d, l.window)
}

// blocked returns how long until any of keys may try again; 0 when none is blocked.
func (l *failLimiter) blocked(ctx context.Context, keys ...string) time.Duration {
	if l == nil {
		return 0
	}
	if l.shared != nil {
		now := l.now()
		l.pruneShared(now)
		fresh := true
		for _, k := range keys {
			at, ok := l.clear.Load(k)
			fresh = fresh && ok && now.Sub(at.(time.Time)) < sharedClearFor && !now.Before(at.(time.Time))
		}
		if fresh {
			return 0
		}
		got, err := l.shared.Failures(ctx, l.sharedKeys(keys), now.Add(-l.window), l.keep())
		if err != nil {
			l.onErr(fmt.Errorf("read the sign-in failures: %w", err))
			return 0
		}
		var wait time.Duration
		for _, ts := range got {
			wait = max(wait, l.waitAfter(ts, now))
		}
		for i, sk := range l.sharedKeys(keys) {
			if len(got[sk]) == 0 {
				l.none.Store(keys[i], now)
			} else {
				l.none.Delete(keys[i])
			}
		}
		if wait == 0 {
			for _, k := range keys {
				l.clear.Store(k, now)
			}
		}
		return wait
	}
	// Every request asks; almost every key has fewer than max failures,
	// old or new, and then waits for nothing: no clock and no write lock.
	l.mu.RLock()
	few := true
	for _, k := range keys {
		few = few && len(l.fails[k]) < l.max
	}
	l.mu.RUnlock()
	if few {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var wait time.Duration
	for _, k := range keys {
		wait = max(wait, l.waitAfter(l.recent(k, now), now))
	}
	return wait
}

// pruneShared forgets, at most once a minute, the readings of keys older
// than sharedClearFor (no longer used), so that the two maps hold the keys
// of the last moments, not every address ever seen.
func (l *failLimiter) pruneShared(now time.Time) {
	l.mu.Lock()
	due := now.Sub(l.sweep) >= time.Minute // sweep: the memory store's, unused with a shared one
	if due {
		l.sweep = now
	}
	l.mu.Unlock()
	if !due {
		return
	}
	for _, m := range []*sync.Map{&l.clear, &l.none} {
		m.Range(func(k, v any) bool {
			if now.Sub(v.(time.Time)) >= sharedClearFor {
				m.Delete(k)
			}
			return true
		})
	}
}

// keep is how many failures of a key are remembered: max without backoff; with
// it, enough for the delay to reach the window.
func (l *failLimiter) keep() int {
	if l.backoff <= 0 {
		return l.max
	}
	n := l.max
	for d := l.backoff; d < l.window; d *= 2 {
		n++
	}
	return n
}

// fail records a failure for each key.
func (l *failLimiter) fail(ctx context.Context, keys ...string) {
	if l == nil {
		return
	}
	if l.shared != nil {
		now := l.now()
		for _, k := range keys {
			l.clear.Delete(k)
			l.none.Delete(k)
		}
		if err := l.shared.AddFailure(ctx, l.sharedKeys(keys), now, now.Add(-l.window)); err != nil {
			l.onErr(fmt.Errorf("record a sign-in failure: %w", err))
		}
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
	keep := l.keep()
	for _, k := range keys {
		ts := append(l.recent(k, now), now)
		if len(ts) > keep {
			ts = ts[len(ts)-keep:]
		}
		l.fails[k] = ts
	}
}

// forget clears a key's failures (after a successful sign-in).
func (l *failLimiter) forget(ctx context.Context, key string) {
	if l == nil {
		return
	}
	if l.shared != nil {
		if at, ok := l.none.Load(key); ok {
			if d := l.now().Sub(at.(time.Time)); d >= 0 && d < sharedClearFor {
				return // read with no failure a moment ago: nothing to forget
			}
		}
		if err := l.shared.ForgetFailures(ctx, l.sharedKeys([]string{key})[0]); err != nil {
			l.onErr(fmt.Errorf("forget sign-in failures: %w", err))
		}
		return
	}
	l.mu.Lock()
	delete(l.fails, key)
	l.mu.Unlock()
}

// knownClients remembers which accounts signed in successfully from which
// client address, for ttl after the latest success.
//
// With a shared store (a cluster's), every success is also written there (at
// most once per knownRefresh from this node) and an account this node has not
// seen at an address is looked up there, so that a client known to one node
// is known to all; the memory then caches what the store answered.
type knownClients struct {
	mu    sync.RWMutex
	ttl   time.Duration
	now   func() time.Time
	seen  map[clientAccount]time.Time
	sweep time.Time
	// shared, when set, is the cluster's store; onErr hears of its errors.
	shared LimitStore
	onErr  func(error)
}

// clientAccount is an account at a client address: a struct key, so that no
// request builds a string to look itself up.
type clientAccount struct{ ip, account string }

// knownRefresh is how old a remembered success may be before the next one
// from the same client is written down again: every authenticated request
// records one, and most need only the read lock. A success is remembered up
// to this much less than ttl.
const knownRefresh = time.Minute

func newKnownClients(ttl time.Duration, now func() time.Time) *knownClients {
	if ttl <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &knownClients{ttl: ttl, now: now, seen: map[clientAccount]time.Time{}}
}

// add records a success of account from ip.
func (k *knownClients) add(ctx context.Context, ip, account string) {
	if k == nil {
		return
	}
	key := clientAccount{ip, account}
	now := k.now()
	k.mu.RLock()
	t, ok := k.seen[key]
	k.mu.RUnlock()
	if ok && now.Sub(t) < min(knownRefresh, k.ttl/2) {
		return
	}
	if k.shared != nil {
		if err := k.shared.AddKnownClient(ctx, ip, account, now); err != nil {
			k.onErr(fmt.Errorf("remember a known client: %w", err))
		}
	}
	k.remember(key, now)
}

// remember notes that account signed in from ip at at.
func (k *knownClients) remember(key clientAccount, at time.Time) {
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.sweep) > time.Hour {
		for old, t := range k.seen {
			if now.Sub(t) >= k.ttl {
				delete(k.seen, old)
			}
		}
		k.sweep = now
	}
	if at.After(k.seen[key]) {
		k.seen[key] = at
	}
}

// has reports whether account signed in from ip within the ttl.
func (k *knownClients) has(ctx context.Context, ip, account string) bool {
	if k == nil {
		return false
	}
	key := clientAccount{ip, account}
	now := k.now()
	k.mu.RLock()
	t, ok := k.seen[key]
	k.mu.RUnlock()
	if ok && now.Sub(t) < k.ttl {
		return true
	}
	if k.shared == nil {
		return false
	}
	t, err := k.shared.KnownClient(ctx, ip, account)
	if err != nil {
		k.onErr(fmt.Errorf("look up a known client: %w", err))
		return false
	}
	if t.IsZero() || now.Sub(t) >= k.ttl {
		return false
	}
	k.remember(key, t)
	return true
}

// accountKey is the limiter key of a sign-in name.
func accountKey(name string) string { return "account:" + strings.ToLower(strings.TrimSpace(name)) }

// principalAccount is the account key of a signed-in principal: its service
// principal (the OAuth client id), else its user's e-mail address (the Basic
// sign-in name).
func principalAccount(p *app.Principal) string {
	switch {
	case p.ServicePrincipalID != "":
		return accountKey("client:" + p.ServicePrincipalID)
	case p.Email != "":
		return accountKey(p.Email)
	}
	return accountKey("user:" + p.UserID)
}

// pairKey is the limiter key of an account signing in from a client address.
func pairKey(account, ip string) string { return account + "|" + ip }

// tooManyFailures is the 429 problem of a blocked sign-in attempt.
func (s *Server) tooManyFailures(wait time.Duration) *Problem {
	secs := int((wait + time.Second - 1) / time.Second)
	p := s.problems.make(http.StatusTooManyRequests, app.ERateLimited,
		"Too many failed sign-in attempts; try again in "+strconv.Itoa(secs)+" seconds.")
	p.retryAfter = max(secs, 1)
	return p
}

// limitLinkTokens counts the unknown tokens of the operations whose path
// carries an e-mailed link's token (MetaLinkToken: accepting an invitation or
// a password reset) as failed sign-ins of the client address, and refuses
// an address with too many of them (429): guessing tokens is guessing
// credentials.
func (s *Server) limitLinkTokens(ctx huma.Context, next func(huma.Context)) {
	if on, _ := ctx.Operation().Metadata[rest.MetaLinkToken].(bool); !on {
		next(ctx)
		return
	}
	key := "ip:" + s.limitKey(humagin.Unwrap(ctx).Request)
	rctx := ctx.Context()
	if wait := s.ipFails.blocked(rctx, key); wait > 0 {
		s.writeHumaProblem(ctx, s.tooManyFailures(wait))
		return
	}
	next(ctx)
	if ctx.Status() == http.StatusNotFound {
		s.ipFails.fail(rctx, key)
	}
}

// linkTokenBlocked and linkTokenFailed are the same limit for the page a
// reset link opens: how long the client must wait, and an unknown token
// counted against it.
func (s *Server) linkTokenBlocked(r *http.Request) time.Duration {
	return s.ipFails.blocked(r.Context(), "ip:"+s.limitKey(r))
}

func (s *Server) linkTokenFailed(r *http.Request) { s.ipFails.fail(r.Context(), "ip:"+s.limitKey(r)) }
