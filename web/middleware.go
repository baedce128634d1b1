package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"

	"atrium/app"
	"atrium/web/rest"
)

type requestIDKey struct{}

// requestContext carries a request's id, its server and, once authenticate
// has found it, its principal: one allocation, where three context.WithValue,
// the id's boxing and a second copy of the request were five.
type requestContext struct {
	context.Context
	id string
	s  *Server
	p  *app.Principal // set by authenticate (withPrincipal), before any handler runs
}

func (c *requestContext) Value(key any) any {
	switch key.(type) {
	case requestIDKey:
		return &c.id // a pointer: a string would be boxed at every call
	case serverKey:
		return c.s
	case app.PrincipalKey:
		if c.p != nil {
			return c.p
		}
	}
	return c.Context.Value(key)
}

// withPrincipal puts p in the request's context: in its requestContext when
// that is still the request's own context, else in a copy of the request.
func withPrincipal(c *gin.Context, p *app.Principal) {
	if rc, ok := c.Request.Context().(*requestContext); ok && rc.p == nil {
		rc.p = p
		return
	}
	c.Request = c.Request.WithContext(app.WithPrincipal(c.Request.Context(), p))
}

func requestIDFrom(ctx context.Context) string {
	if id, ok := ctx.Value(requestIDKey{}).(*string); ok {
		return *id
	}
	return ""
}

// validRequestID accepts a client's X-Request-Id when it is short and plain.
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	var id [16]byte // base64 of 12 bytes, without padding
	_, _ = rand.Read(b[:])
	base64.RawURLEncoding.Encode(id[:], b[:])
	return string(id[:])
}

// requestID gives every request an id (the client's X-Request-Id when sane),
// echoes it and puts it, and the server, in the request context.
func (s *Server) requestID(c *gin.Context) {
	id := c.GetHeader("X-Request-Id")
	if !validRequestID(id) {
		id = newRequestID()
	}
	c.Header("X-Request-Id", id)
	c.Request = c.Request.WithContext(&requestContext{Context: c.Request.Context(), id: id, s: s})
	c.Next()
}

// recoverer turns a panic into a logged 500 problem.
func (s *Server) recoverer(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.log.Error("panic", "panic", fmt.Sprint(r), "stack", string(debug.Stack()), "request_id", requestIDFrom(c.Request.Context()))
			if !c.Writer.Written() {
				s.problems.make(http.StatusInternalServerError, app.EInternal, app.ErrorMessage(nil)).write(c.Writer, requestIDFrom(c.Request.Context()))
			}
			c.Abort()
		}
	}()
	c.Next()
}

// accessLog logs every request with log/slog and counts it in the metrics.
func (s *Server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	// The end from the monotonic clock alone (time.Since reads only it), half
	// the cost of a time.Now; a request's line is at most a wall clock step off.
	d := time.Since(start)
	end := start.Add(d)
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	st := c.Writer.Status()
	s.metrics.observe(c.Request.Method, route, st, d)
	if route == "/healthz" || route == "/readyz" || route == "/metrics" {
		return
	}
	// A token in the path (a shared link, an invitation, a password reset, a
	// preview) is a bearer secret: the log has its place, not its value.
	path := c.Request.URL.Path
	if tok := c.Param("token"); tok != "" {
		path = strings.Replace(path, tok, redacted, 1)
	}
	// Typed attributes in one array: no value boxed, no slice grown.
	var attrs [8]slog.Attr
	a := append(attrs[:0], slog.String("method", c.Request.Method), slog.String("path", path), slog.Int("status", st),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.Int("bytes", max(c.Writer.Size(), 0)), // gin's -1: no body written
		slog.String("request_id", requestIDFrom(c.Request.Context())))
	if p := app.PrincipalFrom(c.Request.Context()); p != nil {
		a = append(a, slog.String("org", p.OrgID), slog.String("user", p.UserID))
	}
	ctx := c.Request.Context()
	h := s.log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	if lw, ok := h.(textLineWriter); ok && writeTextLine(lw, end, a) {
		return
	}
	// A record of our own rather than LogAttrs: the line's source is always
	// here, and LogAttrs's runtime.Callers for it was a seventh of its cost.
	r := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	r.AddAttrs(a...)
	_ = h.Handle(ctx, r)
}

// safeHeaders sets what every answer needs, before any handler can forget it:
// nosniff everywhere, and, on the REST API, no-store unless the operation
// says otherwise (its answers carry secrets shown once, presigned URLs and
// people's data, none of which a shared cache or a browser's disk should
// keep). The file mount keeps its own caching.
func (s *Server) safeHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if p := c.Request.URL.Path; strings.HasPrefix(p, "/api/v1/") && !hasAnyPrefix(p, noStoreExempt) {
		h.Set("Cache-Control", "no-store")
	}
	c.Next()
}

// noStoreExempt are the paths under /api/v1/ that set their own caching: the
// file mount, and the public API description and its page.
var noStoreExempt = []string{"/api/v1/webdav", "/api/v1/openapi.json", "/api/v1/openapi-3.0.json", "/api/v1/openapi.yaml", "/api/v1/docs"}

// redacted stands for a secret left out of the access log.
const redacted = "REDACTED"

// basicAuthPrefixes are the doors where HTTP Basic with an app password is
// accepted (file mount and DAV clients).
var basicAuthPrefixes = []string{"/api/v1/webdav", "/webdav", "/dav", "/.well-known/carddav", "/.well-known/caldav",
	"/remote.php", "/ocs"}

// authenticate resolves the Authorization header to a principal in the request
// context. A presented but invalid credential is refused here with 401; whether an
// endpoint needs a credential at all is decided by the endpoint.
func (s *Server) authenticate(c *gin.Context) {
	h := c.GetHeader("Authorization")
	// The token endpoint authenticates OAuth clients itself (client_secret_basic).
	// The WOPI door authenticates with edit-session access tokens, which an
	// editor may also send as a bearer token.
	// /metrics checks its own bearer token ([metrics] token).
	if h == "" {
		if p, pr, ok := s.sessionAuth(c); ok {
			if pr != nil {
				pr.write(c.Writer, requestIDFrom(c.Request.Context()))
				c.Abort()
				return
			}
			withPrincipal(c, p)
		}
		c.Next()
		return
	}
	// status.php is public, and the sync clients send their credential with it.
	if c.Request.URL.Path == "/oauth/token" || c.Request.URL.Path == "/metrics" || c.Request.URL.Path == "/status.php" ||
		strings.HasPrefix(c.Request.URL.Path, "/wopi/") {
		c.Next()
		return
	}
	ctx := c.Request.Context()
	scheme, cred, _ := strings.Cut(h, " ")
	cred = strings.TrimSpace(cred)
	ip := s.limitKey(c.Request)
	ipKey := "ip:" + ip
	var (
		p   *app.Principal
		err error
	)
	// An address with too many failures is refused — except a correct
	// credential of an account that has signed in from it before, which is
	// checked anyway (a wrong one is refused like the rest, uncounted).
	ipWait := s.ipFails.blocked(ctx, ipKey)
	switch strings.ToLower(scheme) {
	case "":
		err = app.Errorf(app.EUnauthorized, "The Authorization header names no scheme.")
		if ipWait > 0 {
			err = s.tooManyFailures(ipWait)
		}
	case "bearer":
		p, err = s.cfg.Identity.Authenticate(ctx, cred)
		switch {
		case ipWait > 0 && (err != nil || !s.knownClients.has(ctx, ip, principalAccount(p))):
			p, err = nil, s.tooManyFailures(ipWait)
		case app.ErrorCode(err) == app.EUnauthorized:
			s.ipFails.fail(ctx, ipKey)
		case err == nil:
			s.knownClients.add(ctx, ip, principalAccount(p))
		}
	case "basic":
		user, pass, ok := c.Request.BasicAuth()
		account := accountKey(user)
		switch {
		case ipWait > 0 && (!ok || !s.knownClients.has(ctx, ip, account)):
			err = s.tooManyFailures(ipWait)
		case !hasAnyPrefix(c.Request.URL.Path, basicAuthPrefixes):
			err = app.Errorf(app.EUnauthorized, "HTTP Basic is accepted only by the file mount and DAV endpoints; use a bearer token.")
		case !ok:
			err = app.Errorf(app.EUnauthorized, "The Basic credential is malformed.")
		}
		if err != nil {
			break
		}
		known := s.knownClients.has(ctx, ip, account)
		wait := s.accountFails.blocked(ctx, pairKey(account, ip))
		if !known {
			wait = max(wait, s.accountWide.blocked(ctx, account))
		}
		if wait > 0 {
			err = s.tooManyFailures(wait)
			break
		}
		p, err = s.cfg.Identity.AuthenticateBasic(ctx, user, pass)
		switch {
		case app.ErrorCode(err) == app.EUnauthorized:
			s.accountFails.fail(ctx, pairKey(account, ip))
			s.ipFails.fail(ctx, ipKey)
			s.accountWide.fail(ctx, account)
		case err == nil:
			s.accountFails.forget(ctx, pairKey(account, ip))
			s.knownClients.add(ctx, ip, account)
		}
	default:
		err = app.Errorf(app.EUnauthorized, "Unsupported authorization scheme %q.", scheme)
		if ipWait > 0 {
			err = s.tooManyFailures(ipWait)
		}
	}
	if err != nil {
		pr := s.problems.fromError(err)
		if pr.Status >= 500 {
			s.log.Error("authenticate", "err", err, "request_id", requestIDFrom(ctx))
		}
		if pr.Status == http.StatusUnauthorized && hasAnyPrefix(c.Request.URL.Path, basicAuthPrefixes) {
			// DAV and mount clients prompt again on a Basic challenge.
			c.Header("WWW-Authenticate", `Basic realm="atrium", charset="UTF-8"`)
		}
		pr.write(c.Writer, requestIDFrom(ctx))
		c.Abort()
		return
	}
	withPrincipal(c, p)
	c.Next()
}

func hasAnyPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// authorize enforces an operation's metadata: a credential unless public, and one
// of its scopes when it names any.
func (s *Server) authorize(ctx huma.Context, next func(huma.Context)) {
	op := ctx.Operation()
	if public, _ := op.Metadata[rest.MetaPublic].(bool); public {
		next(ctx)
		return
	}
	p := app.PrincipalFrom(ctx.Context())
	if p == nil {
		s.writeHumaProblem(ctx, app.Errorf(app.EUnauthorized, "Authentication is required: send Authorization: Bearer <token>."))
		return
	}
	if scopes, _ := op.Metadata[rest.MetaScopes].([]string); len(scopes) > 0 {
		ok := false
		for _, sc := range scopes {
			if p.Scopes.Has(sc) {
				ok = true
				break
			}
		}
		if !ok {
			s.writeHumaProblem(ctx, app.Errorf(app.EInsufficientScope, "The token lacks the scope %s.", strings.Join(quoteAll(scopes), " or ")))
			return
		}
	}
	next(ctx)
}

func quoteAll(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// writeHumaProblem writes a problem from inside a huma middleware.
func (s *Server) writeHumaProblem(ctx huma.Context, err error) {
	p := s.problems.fromError(err)
	if p.Instance == "" {
		p.Instance = "urn:request:" + requestIDFrom(ctx.Context())
	}
	h := http.Header{}
	p.headers(h)
	for k, v := range h {
		ctx.SetHeader(k, v[0])
	}
	ctx.SetHeader("Content-Type", "application/problem+json")
	ctx.SetStatus(p.Status)
	_ = jsonEncode(ctx.BodyWriter(), p)
}
