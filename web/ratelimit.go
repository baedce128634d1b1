package web

import (
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
type failLimiter struct {
	mu      sync.RWMutex
	max     int
	window  time.Duration
	backoff time.Duration
	now     func() time.Time
	fails   map[string][]time.Time
	sweep   time.Time
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
func (l *failLimiter) blocked(keys ...string) time.Duration {
	if l == nil {
		return 0
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
		ts := l.recent(k, now)
		switch {
		case len(ts) < l.max:
		case l.backoff > 0:
			wait = max(wait, ts[len(ts)-1].Add(l.delay(len(ts))).Sub(now))
		default:
			wait = max(wait, ts[len(ts)-l.max].Add(l.window).Sub(now))
		}
	}
	return wait
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
func (l *failLimiter) forget(key string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	delete(l.fails, key)
	l.mu.Unlock()
}

// knownClients remembers which accounts signed in successfully from which
// client address, for ttl after the latest success.
type knownClients struct {
	mu    sync.RWMutex
	ttl   time.Duration
	now   func() time.Time
	seen  map[clientAccount]time.Time
	sweep time.Time
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
func (k *knownClients) add(ip, account string) {
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
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.sweep) > time.Hour {
		for old, at := range k.seen {
			if now.Sub(at) >= k.ttl {
				delete(k.seen, old)
			}
		}
		k.sweep = now
	}
	k.seen[key] = now
}

// has reports whether account signed in from ip within the ttl.
func (k *knownClients) has(ip, account string) bool {
	if k == nil {
		return false
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	t, ok := k.seen[clientAccount{ip, account}]
	return ok && k.now().Sub(t) < k.ttl
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
	if wait := s.ipFails.blocked(key); wait > 0 {
		s.writeHumaProblem(ctx, s.tooManyFailures(wait))
		return
	}
	next(ctx)
	if ctx.Status() == http.StatusNotFound {
		s.ipFails.fail(key)
	}
}

// linkTokenBlocked and linkTokenFailed are the same limit for the page a
// reset link opens: how long the client must wait, and an unknown token
// counted against it.
func (s *Server) linkTokenBlocked(r *http.Request) time.Duration {
	return s.ipFails.blocked("ip:" + s.limitKey(r))
}

func (s *Server) linkTokenFailed(r *http.Request) { s.ipFails.fail("ip:" + s.limitKey(r)) }
