package web

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"atrium/web/ui"
)

// The web app (package ui) mounted on the router, and the seam through which
// its sign-ins count toward the failed sign-in limits.

// mountWebApp routes the web app's pages and assets.
func (s *Server) mountWebApp(e *gin.Engine) {
	if s.cfg.Identity == nil || s.cfg.Partner == nil {
		return
	}
	app := ui.New(ui.Config{PublicURL: s.cfg.PublicURL, Identity: s.cfg.Identity, Partner: s.cfg.Partner, Drive: s.cfg.Drive, Contacts: s.cfg.Contacts,
		Log: s.log, Limiter: signInLimits{s}, ClientIP: s.clientIP,
		Webhooks: s.cfg.Webhooks, WriteProblem: s.writeProblem,
		RequestID: func(r *http.Request) string { return requestIDFrom(r.Context()) }, StoreOrigin: s.cfg.StoreOrigin})
	h := gin.WrapH(app)
	for _, rt := range app.Routes() {
		e.Handle(rt.Method, rt.Path, h)
	}
}

// writeProblem answers err as a problem of the REST API, for the web app.
func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	s.problems.fromError(err).write(w, requestIDFrom(r.Context()))
}

// signInLimits counts the web app's failed sign-ins like those of the other
// doors (web/middleware.go): per account and client address, with a growing
// wait, so that nobody can lock the owner out from elsewhere; and per address,
// sparing the accounts that signed in from it before.
type signInLimits struct{ s *Server }

func (l signInLimits) Blocked(r *http.Request, account string) time.Duration {
	ip := l.s.limitKey(r)
	key := accountKey(account)
	wait := l.s.accountFails.blocked(r.Context(), pairKey(key, ip))
	if !l.s.knownClients.has(r.Context(), ip, key) {
		wait = max(wait, l.s.ipFails.blocked(r.Context(), "ip:"+ip), l.s.accountWide.blocked(r.Context(), key))
	}
	return wait
}

func (l signInLimits) Failed(r *http.Request, account string) {
	ip := l.s.limitKey(r)
	key := accountKey(account)
	l.s.accountFails.fail(r.Context(), pairKey(key, ip))
	l.s.ipFails.fail(r.Context(), "ip:"+ip)
	l.s.accountWide.fail(r.Context(), key)
}

func (l signInLimits) Succeeded(r *http.Request, account string) {
	ip := l.s.limitKey(r)
	l.s.accountFails.forget(r.Context(), pairKey(accountKey(account), ip))
	l.s.knownClients.add(r.Context(), ip, accountKey(account))
}

// LinkTokenBlocked is how long the address must wait after too many unknown
// tokens of e-mailed links (the limit of the accept operations).
func (l signInLimits) LinkTokenBlocked(r *http.Request) time.Duration { return l.s.linkTokenBlocked(r) }

// LinkTokenFailed counts an unknown token of an e-mailed link.
func (l signInLimits) LinkTokenFailed(r *http.Request) { l.s.linkTokenFailed(r) }

// CodeBlocked is Blocked of the code step, with the account's wrong codes
// from every address.
func (l signInLimits) CodeBlocked(r *http.Request, account string) time.Duration {
	return max(l.Blocked(r, account), l.s.codeFails.blocked(r.Context(), accountKey(account)))
}

// CodeFailed counts a wrong code of the account, from this address and in all.
func (l signInLimits) CodeFailed(r *http.Request, account string) {
	ip := l.s.limitKey(r)
	key := accountKey(account)
	l.s.accountFails.fail(r.Context(), pairKey(key, ip))
	l.s.ipFails.fail(r.Context(), "ip:"+ip)
	l.s.codeFails.fail(r.Context(), key)
}
