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
	h := gin.WrapH(ui.New(ui.Config{PublicURL: s.cfg.PublicURL, Identity: s.cfg.Identity, Partner: s.cfg.Partner,
		Log: s.log, Limiter: signInLimits{s}, ClientIP: s.clientIP}))
	for _, rt := range ui.Routes {
		e.Handle(rt.Method, rt.Path, h)
	}
}

// signInLimits counts the web app's failed sign-ins like those of the other
// doors: per account (the e-mail address) and per client address.
type signInLimits struct{ s *Server }

func (l signInLimits) Blocked(r *http.Request, account string) time.Duration {
	return max(l.s.accountFails.blocked(accountKey(account)), l.s.ipFails.blocked("ip:"+l.s.clientIP(r)))
}

func (l signInLimits) Failed(r *http.Request, account string) {
	l.s.accountFails.fail(accountKey(account))
	l.s.ipFails.fail("ip:" + l.s.clientIP(r))
}
