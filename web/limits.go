package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"atrium/app"
)

// Limits protect the server from overload and abuse. The zero value of a field
// turns that protection off; DefaultLimits are what `atrium serve` runs with.
type Limits struct {
	// AuthFailures failed sign-ins of one account (app password, OAuth client
	// secret) from one client address within AuthFailureWindow make further
	// attempts for it from that address wait (429): AuthFailureBackoff after
	// the latest failure, doubled with each further failure, at most the window.
	AuthFailures       int
	AuthFailureBackoff time.Duration
	// AuthFailuresPerIP failed credentials of any kind from one client address
	// within AuthFailureWindow block that address's credentials with 429 —
	// except those of accounts that signed in from it within KnownClientTTL.
	AuthFailuresPerIP int
	AuthFailureWindow time.Duration
	KnownClientTTL    time.Duration
	// AuthFailuresPerAccount failed passwords of one account (web app
	// password, app password) from all client addresses together within
	// AuthFailureWindow make further attempts wait (429, with the backoff of
	// AuthFailures) — except from a client address the account signed in
	// from within KnownClientTTL, so that nobody can lock the owner out.
	AuthFailuresPerAccount int
	// AuthCodeFailures wrong two-factor codes of one account from all client
	// addresses together within AuthFailureWindow make its code step wait
	// (with the same backoff), known clients included: only whoever has the
	// password reaches that step.
	AuthCodeFailures int
	// RatePerToken is the sustained requests per second of one credential,
	// BurstPerToken its bucket; 0 is unlimited.
	RatePerToken  float64
	BurstPerToken int
	// RatePerIP is the sustained requests per second of one client address
	// (authenticated or not), BurstPerIP its bucket; 0 is unlimited.
	RatePerIP  float64
	BurstPerIP int
	// RequestTimeout bounds the work of a REST operation with a small body
	// (uploads and imports are bounded by IOIdleTimeout instead).
	RequestTimeout time.Duration
	// IOIdleTimeout is the longest a request body may pause between bytes, and
	// the longest a client may leave a response unread, before the connection
	// is closed.
	IOIdleTimeout time.Duration
	// TrustedProxies are the addresses of reverse proxies in front of the
	// server: a request from one of them is counted against the client address
	// its X-Forwarded-For names (the rightmost address not itself a trusted
	// proxy), not against the proxy's. Empty: the header is ignored, as any
	// client can send it.
	TrustedProxies []netip.Prefix
}

// Retention says how long a shared store (LimitStore) must keep what it
// counts: failures for the failure window, known clients for
// KnownClientTTL, and request windows for the longest window of the request
// rates (at least a minute).
func (l Limits) Retention() (failures, known, windows time.Duration) {
	windows = time.Minute
	for _, r := range []struct {
		rate  float64
		burst int
	}{{l.RatePerToken, l.BurstPerToken}, {l.RatePerIP, l.BurstPerIP}} {
		if rl := newRateLimiters(r.rate, r.burst, nil); rl != nil {
			windows = max(windows, rl.window())
		}
	}
	return l.AuthFailureWindow, l.KnownClientTTL, windows
}

// DefaultLimits: auth failures limited, request rates not (a small server's
// own clients — sync tools, mounts — burst hard and legitimately).
var DefaultLimits = Limits{
	AuthFailures:           10,
	AuthFailureBackoff:     5 * time.Second,
	AuthFailuresPerIP:      50,
	AuthFailuresPerAccount: 30,
	AuthCodeFailures:       10,
	AuthFailureWindow:      5 * time.Minute,
	KnownClientTTL:         30 * 24 * time.Hour,
	BurstPerToken:          100,
	BurstPerIP:             200,
	RequestTimeout:         60 * time.Second,
	IOIdleTimeout:          60 * time.Second,
}

// clientIP is the address the limits count a request against: the
// connection's, or, when the connection comes from a trusted proxy, the
// rightmost address of X-Forwarded-For that is not a trusted proxy (the
// entries to its left are whatever the client sent, so they are not believed).
func (s *Server) clientIP(r *http.Request) string {
	remote := remoteIP(r.RemoteAddr)
	if !remote.IsValid() {
		return r.RemoteAddr // not host:port (a Unix socket): the whole address
	}
	if len(s.limits.TrustedProxies) == 0 || !trusted(s.limits.TrustedProxies, remote) {
		return remote.String()
	}
	hops := r.Header.Values("X-Forwarded-For")
	client := remote
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return client.String() // a garbled hop: the last address vouched for
			}
			client = a.Unmap()
			if !trusted(s.limits.TrustedProxies, client) {
				return client.String()
			}
		}
	}
	return client.String()
}

// limitNet is the key of a client address in the limits: an IPv6 address's
// /64 (a host is usually given a whole /64, so each of its addresses would
// otherwise get a fresh budget), an IPv4 address as it is.
func limitNet(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if a = a.Unmap(); a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// limitKey is the key the limits count r against (limitNet of clientIP).
func (s *Server) limitKey(r *http.Request) string { return limitNet(s.clientIP(r)) }

// remoteIP is the address of a connection's host:port (zero when unparsable).
func remoteIP(hostport string) netip.Addr {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

func trusted(proxies []netip.Prefix, a netip.Addr) bool {
	for _, p := range proxies {
		if a.IsValid() && p.Contains(a) {
			return true
		}
	}
	return false
}

// rateLimiters are token buckets per key; idle keys are forgotten.
//
// With a shared store (a cluster's), every node counts a key's requests in
// the same fixed windows instead: a window lasts as long as an empty bucket
// takes to fill (burst/rate, at least a second) and lets burst requests
// through, which keeps the sustained rate (a client may send up to twice the
// burst across the boundary of two windows).
type rateLimiters struct {
	mu    sync.Mutex
	limit rate.Limit
	burst int
	now   func() time.Time
	m     map[string]*rate.Limiter
	sweep time.Time
	// shared, when set, counts the windows under name's keys; onErr hears
	// of its errors (the request is then let through).
	shared LimitStore
	name   string
	onErr  func(error)
	// counts are this node's view of the shared windows (sharedWait).
	counts map[string]*sharedCount
}

// sharedCount is a node's view of a key's shared window: the cluster's
// count when this node last added to it, and the requests it let through
// since, not yet added.
type sharedCount struct {
	start          time.Time
	known, pending int
	synced         time.Time
}

// sharedSyncEvery is how long a node counts a key's requests by itself,
// while the window's count is below half its budget, before it adds them to
// the cluster's count.
const sharedSyncEvery = 100 * time.Millisecond

// sharedIn makes l count in store under name's keys (nil store: in memory).
func (l *rateLimiters) sharedIn(store LimitStore, name string, onErr func(error)) {
	if l != nil && store != nil {
		l.shared, l.name, l.onErr = store, name, onErr
	}
}

// window is the length of a shared window: burst/rate, at least a second.
func (l *rateLimiters) window() time.Duration {
	return max(time.Duration(float64(l.burst)/float64(l.limit)*float64(time.Second)), time.Second)
}

func newRateLimiters(perSecond float64, burst int, now func() time.Time) *rateLimiters {
	if perSecond <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &rateLimiters{limit: rate.Limit(perSecond), burst: max(burst, 1), now: now, m: map[string]*rate.Limiter{}}
}

// wait takes one request for key and returns 0, or how long until one would be
// allowed (the request is then not counted).
func (l *rateLimiters) wait(ctx context.Context, key string) time.Duration {
	if l == nil {
		return 0
	}
	if l.shared != nil {
		return l.sharedWait(ctx, key)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	// A bucket that has been idle long enough to refill is the same as a new one.
	full := time.Duration(float64(l.burst)/float64(l.limit)*float64(time.Second)) + time.Second
	if now.Sub(l.sweep) > full && len(l.m) > 0 {
		for k, lim := range l.m {
			if lim.TokensAt(now) >= float64(l.burst) {
				delete(l.m, k)
			}
		}
		l.sweep = now
	}
	lim := l.m[key]
	if lim == nil {
		lim = rate.NewLimiter(l.limit, l.burst)
		l.m[key] = lim
	}
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

// sharedWait is wait with the cluster's count. A request that finds its
// window's count in the store below half the budget is counted here and
// added to the store with the others of the next sharedSyncEvery (a query
// for each request cost the database a write on every request of every
// node); from half the budget on, every request is added to the store's
// count as it comes, so the budget is kept exactly where it matters (nodes
// may let a window's first half through some requests early); once the
// store's count is over the budget, the rest of the window is refused here.
func (l *rateLimiters) sharedWait(ctx context.Context, key string) time.Duration {
	now := l.now()
	w := l.window()
	start := time.UnixMilli(now.UnixMilli() / w.Milliseconds() * w.Milliseconds())
	l.mu.Lock()
	if l.counts == nil {
		l.counts = map[string]*sharedCount{}
	}
	c := l.counts[key]
	if c == nil || !c.start.Equal(start) {
		if len(l.counts) > 10000 { // windows of idle keys
			for k, o := range l.counts {
				if o.start.Before(start) {
					delete(l.counts, k)
				}
			}
		}
		c = &sharedCount{start: start}
		l.counts[key] = c
	}
	if c.known > l.burst {
		l.mu.Unlock()
		return start.Add(w).Sub(now)
	}
	if !c.synced.IsZero() && now.Sub(c.synced) < sharedSyncEvery && (c.known+c.pending+1)*2 <= l.burst {
		c.pending++
		l.mu.Unlock()
		return 0
	}
	n := c.pending + 1
	c.pending = 0
	l.mu.Unlock()
	total, err := l.shared.CountRequests(ctx, l.name+" "+key, start, n)
	if err != nil {
		l.onErr(fmt.Errorf("count requests: %w", err))
		return 0
	}
	l.mu.Lock()
	if c.start.Equal(start) && total > c.known {
		c.known, c.synced = total, now
	}
	l.mu.Unlock()
	if total > l.burst {
		return start.Add(w).Sub(now)
	}
	return 0
}

// tooManyRequests is the 429 problem of a rate-limited request.
func (s *Server) tooManyRequests(wait time.Duration, who string) *Problem {
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	p := s.problems.make(http.StatusTooManyRequests, app.ERateLimited,
		"Too many requests from this "+who+"; try again in "+strconv.Itoa(secs)+" seconds.")
	p.retryAfter = secs
	return p
}

// unthrottled paths: probes and metrics are never limited.
func unthrottled(path string) bool {
	return path == "/healthz" || path == "/readyz" || path == "/metrics"
}

// limitIP applies the per-address request rate, before authentication.
func (s *Server) limitIP(c *gin.Context) {
	if s.ipRate != nil && !unthrottled(c.Request.URL.Path) {
		if d := s.ipRate.wait(c.Request.Context(), s.limitKey(c.Request)); d > 0 {
			s.tooManyRequests(d, "address").write(c.Writer, requestIDFrom(c.Request.Context()))
			c.Abort()
			return
		}
	}
	c.Next()
}

// limitToken applies the per-credential request rate, after authentication.
func (s *Server) limitToken(c *gin.Context) {
	if s.tokenRate != nil {
		if p := app.PrincipalFrom(c.Request.Context()); p != nil {
			key := p.Credential + ":" + p.CredentialID
			if d := s.tokenRate.wait(c.Request.Context(), key); d > 0 {
				s.tooManyRequests(d, "credential").write(c.Writer, requestIDFrom(c.Request.Context()))
				c.Abort()
				return
			}
		}
	}
	c.Next()
}

// deadline bounds a REST operation's work by the request timeout. Operations
// that take large bodies (uploads, imports) are bounded by the I/O idle timeout
// instead, so that a slow but steady client is not cut off.
func (s *Server) deadline(ctx huma.Context, next func(huma.Context)) {
	op := ctx.Operation()
	if s.limits.RequestTimeout <= 0 || op.MaxBodyBytes > defaultMaxBodyBytes {
		next(ctx)
		return
	}
	c, cancel := withLazyDeadline(ctx.Context(), time.Now().Add(s.limits.RequestTimeout))
	defer cancel()
	next(huma.WithContext(ctx, c))
}

// defaultMaxBodyBytes is huma's body limit of an operation that sets none.
const defaultMaxBodyBytes = 1 << 20

// ioDeadlines closes a connection whose client stops sending its request body,
// or stops reading the response, for longer than the idle timeout: a slow client
// cannot hold a handler (and what it holds) forever.
func ioDeadlines(idle time.Duration, next http.Handler) http.Handler {
	if idle <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		every := min(refresh, idle/4)
		iw := &idleWriter{ResponseWriter: w, rc: connDeadlines{w}, idle: idle, every: every}
		// An HTTP/1 connection's write deadline outlives its request: when
		// the connection's last request set it less than every ago, it stands
		// (as the deadline of a long response moves only every so often).
		rec := connRecordOf(r)
		if rec != nil && r.ProtoMajor == 1 {
			iw.set = rec.writeSet
		}
		iw.touch()
		if r.Body != nil && r.Body != http.NoBody {
			// A shallow copy: the server must still see its own body type on
			// the original request, to know whether the body was left unread.
			r = r.WithContext(r.Context())
			r.Body = &idleReader{ReadCloser: r.Body, rc: iw.rc, idle: idle, every: every}
		}
		next.ServeHTTP(iw, r)
		// The server writes what is still buffered (or a status-only
		// response) after the handler returns: the client has the idle
		// timeout from now to take it, however long the handler worked.
		iw.touch()
		if rec != nil && r.ProtoMajor == 1 {
			rec.writeSet = iw.set
		}
	})
}

// refresh is how stale a deadline may get before it is moved (at most a quarter
// of the idle timeout): setting one on every small read or write would cost more
// than it protects.
const refresh = time.Second

// connDeadlines sets a response's connection deadlines as
// http.ResponseController does (through writers that unwrap), without its
// allocation a request.
type connDeadlines struct{ rw http.ResponseWriter }

func (c connDeadlines) SetReadDeadline(t time.Time) error { return c.set(t, false) }

func (c connDeadlines) SetWriteDeadline(t time.Time) error { return c.set(t, true) }

func (c connDeadlines) set(t time.Time, write bool) error {
	for rw := c.rw; ; {
		if d, ok := rw.(interface{ SetWriteDeadline(time.Time) error }); ok && write {
			return d.SetWriteDeadline(t)
		}
		if d, ok := rw.(interface{ SetReadDeadline(time.Time) error }); ok && !write {
			return d.SetReadDeadline(t)
		}
		u, ok := rw.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return http.ErrNotSupported
		}
		rw = u.Unwrap()
	}
}

type idleReader struct {
	io.ReadCloser
	rc    connDeadlines
	idle  time.Duration
	every time.Duration
	set   time.Time
	done  bool
}

func (b *idleReader) Read(p []byte) (int, error) {
	if !b.done && time.Since(b.set) > b.every { // the monotonic clock alone: half the cost of time.Now
		now := time.Now()
		_ = b.rc.SetReadDeadline(now.Add(b.idle))
		b.set = now
	}
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		// The body is read: clear the deadline, or the server's background
		// read of the idle connection would time out and cancel the request
		// of a handler still working. (After a failed read the deadline stays,
		// so that the server gives up on the rest of the body and closes.)
		b.done = true
		if !b.set.IsZero() {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		b.done = true
		err = errBodyStalled
	}
	return n, err
}

// errBodyStalled is the error of a body read that hit the idle timeout.
var errBodyStalled = errors.New("request body stalled past the idle timeout")

type idleWriter struct {
	http.ResponseWriter
	rc    connDeadlines
	idle  time.Duration
	every time.Duration
	set   time.Time
}

func (w *idleWriter) touch() {
	if time.Since(w.set) > w.every { // the monotonic clock alone (a zero set: the wall clock, long past)
		now := time.Now()
		_ = w.rc.SetWriteDeadline(now.Add(w.idle))
		w.set = now
	}
}

func (w *idleWriter) WriteHeader(code int) {
	w.touch()
	w.ResponseWriter.WriteHeader(code)
}

func (w *idleWriter) Write(p []byte) (int, error) {
	w.touch()
	return w.ResponseWriter.Write(p)
}

func (w *idleWriter) Flush() {
	w.touch()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// LimitListener caps the connections being served: in all (further ones wait
// in the kernel's backlog) and per client address (further ones get a 429 and
// are closed), so that one client — a slowloris, say — cannot take every
// connection. A cap of 0 is no cap.
func LimitListener(l net.Listener, total, perIP int, exempt []netip.Prefix) net.Listener {
	ll := &limitListener{Listener: l, perIP: perIP, byIP: map[string]int{}, exempt: exempt}
	if total > 0 {
		ll.slots = make(chan struct{}, total)
	}
	return ll
}

type limitListener struct {
	net.Listener
	slots chan struct{}
	perIP int
	// exempt addresses (trusted proxies, which carry many clients) are not capped per address.
	exempt []netip.Prefix
	mu     sync.Mutex
	byIP   map[string]int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		if l.slots != nil {
			l.slots <- struct{}{}
		}
		c, err := l.Listener.Accept()
		if err != nil {
			if l.slots != nil {
				<-l.slots
			}
			return nil, err
		}
		ip := ""
		if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			ip = a.IP.String()
			if addr, ok := netip.AddrFromSlice(a.IP); ok && trusted(l.exempt, addr.Unmap()) {
				ip = ""
			}
		}
		if l.perIP > 0 && ip != "" {
			l.mu.Lock()
			n := l.byIP[ip]
			if n >= l.perIP {
				l.mu.Unlock()
				if l.slots != nil {
					<-l.slots
				}
				go refuseConn(c)
				continue
			}
			l.byIP[ip] = n + 1
			l.mu.Unlock()
		}
		return &limitConn{Conn: c, l: l, ip: ip}, nil
	}
}

// refuseConn answers a connection over its address's cap with 429 and closes it.
func refuseConn(c net.Conn) {
	defer c.Close()
	// No request was read, so the type is relative to the address the client
	// asked for (RFC 9457 allows a URI reference), which is the server's own.
	body := `{"type":"/problems/rate_limited","title":"Too Many Requests","status":429,"detail":"Too many connections from this address; retry in a moment.","code":"rate_limited","instance":"urn:request:` + newRequestID() + `"}`
	_ = c.SetWriteDeadline(time.Now().Add(2 * time.Second))
	_, _ = io.WriteString(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/problem+json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\n\r\n"+body)
}

type limitConn struct {
	net.Conn
	l    *limitListener
	ip   string
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		if c.l.perIP > 0 && c.ip != "" {
			c.l.mu.Lock()
			if c.l.byIP[c.ip]--; c.l.byIP[c.ip] <= 0 {
				delete(c.l.byIP, c.ip)
			}
			c.l.mu.Unlock()
		}
		if c.l.slots != nil {
			<-c.l.slots
		}
	})
	return err
}
