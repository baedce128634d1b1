package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"atrium/app"
	"atrium/web/ui"
)

// sessionAuth lets the web app's own pages call the REST API and the TUS
// upload endpoint with the session cookie they already hold, instead of a
// token in the page: a request to /api/v1/ without an Authorization header
// whose session cookie is valid acts as that person. A state-changing request
// made that way must come from this origin and carry the session's
// anti-forgery token in X-CSRF-Token (else 403), so another site cannot use
// the cookie. An expired or revoked session is no credential: the operation
// answers 401 as without one. The file mount and DAV keep Basic and bearer
// credentials only.
func (s *Server) sessionAuth(c *gin.Context) (*app.Principal, *Problem, bool) {
	path := c.Request.URL.Path
	if s.cfg.Identity == nil || !strings.HasPrefix(path, "/api/v1/") || hasAnyPrefix(path, basicAuthPrefixes) {
		return nil, nil, false
	}
	ck, err := c.Request.Cookie(s.sessionCookie)
	if err != nil || ck.Value == "" {
		return nil, nil, false
	}
	p, err := s.cfg.Identity.AuthenticateSession(c.Request.Context(), ck.Value)
	if err != nil {
		return nil, nil, false
	}
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return p, nil, true
	}
	if s.crossOrigin.Check(c.Request) != nil {
		return nil, s.problems.make(http.StatusForbidden, app.EForbidden, "This request did not come from a page of this server."), true
	}
	if !s.cfg.Identity.CheckSessionCSRF(ck.Value, c.GetHeader(ui.CSRFHeader)) {
		return nil, s.problems.make(http.StatusForbidden, app.EForbidden,
			"A request made with the session cookie must carry the session's anti-forgery token in "+ui.CSRFHeader+"."), true
	}
	return p, nil, true
}

// newCrossOrigin is net/http's cross-origin protection trusting the public
// URL's origin (a reverse proxy may change the Host).
func newCrossOrigin(publicURL string) *http.CrossOriginProtection {
	cop := http.NewCrossOriginProtection()
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		_ = cop.AddTrustedOrigin(u.Scheme + "://" + u.Host)
	}
	return cop
}
