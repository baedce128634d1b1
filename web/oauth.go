package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"atrium/app"
	"atrium/app/identity"
)

// oauthToken is the token endpoint of the embedded issuer (RFC 6749 §5): the
// client_credentials grant for service principals and RFC 8693 token exchange of a
// PAT for a short-lived user JWT. Errors use the OAuth error body, as OAuth
// clients expect.
func (s *Server) oauthToken(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, 64<<10)
	if err := c.Request.ParseForm(); err != nil {
		oauthError(c, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	f := c.Request.PostForm
	ip := s.limitKey(c.Request)
	ipKey := "ip:" + ip
	ipWait := s.ipFails.blocked(c.Request.Context(), ipKey)
	requested := app.ParseScopes(f.Get("scope"))
	var (
		res identity.TokenResponse
		err error
	)
	switch f.Get("grant_type") {
	case "client_credentials":
		id, secret, ok := c.Request.BasicAuth()
		if !ok {
			id, secret = f.Get("client_id"), f.Get("client_secret")
		}
		if id == "" || secret == "" {
			c.Header("WWW-Authenticate", `Basic realm="atrium"`)
			oauthError(c, http.StatusUnauthorized, "invalid_client", "client authentication is required")
			return
		}
		// A blocked address may still sign in a client it has signed in before.
		client := accountKey("client:" + id)
		if ipWait > 0 && !s.knownClients.has(c.Request.Context(), ip, client) {
			s.oauthThrottled(c, ipWait)
			return
		}
		if wait := s.accountFails.blocked(c.Request.Context(), pairKey(client, ip)); wait > 0 {
			s.oauthThrottled(c, wait)
			return
		}
		res, err = s.cfg.Identity.ClientCredentials(c.Request.Context(), id, secret, requested)
		switch {
		case app.ErrorCode(err) == app.EUnauthorized:
			s.accountFails.fail(c.Request.Context(), pairKey(client, ip))
		case err == nil:
			s.accountFails.forget(c.Request.Context(), pairKey(client, ip))
			s.knownClients.add(c.Request.Context(), ip, client)
		}
	case "urn:ietf:params:oauth:grant-type:token-exchange":
		if ipWait > 0 {
			s.oauthThrottled(c, ipWait)
			return
		}
		if f.Get("subject_token") == "" {
			oauthError(c, http.StatusBadRequest, "invalid_request", "subject_token is required")
			return
		}
		res, err = s.cfg.Identity.ExchangeToken(c.Request.Context(), f.Get("subject_token"), f.Get("subject_token_type"), requested)
	case "":
		oauthError(c, http.StatusBadRequest, "invalid_request", "grant_type is required")
		return
	default:
		oauthError(c, http.StatusBadRequest, "unsupported_grant_type", "supported: client_credentials, urn:ietf:params:oauth:grant-type:token-exchange")
		return
	}
	if err != nil {
		switch app.ErrorCode(err) {
		case app.EUnauthorized:
			s.ipFails.fail(c.Request.Context(), ipKey)
			if f.Get("grant_type") == "client_credentials" {
				oauthError(c, http.StatusUnauthorized, "invalid_client", "the client credentials are not valid")
			} else {
				oauthError(c, http.StatusBadRequest, "invalid_grant", app.ErrorMessage(err))
			}
		case app.EInsufficientScope:
			oauthError(c, http.StatusBadRequest, "invalid_scope", app.ErrorMessage(err))
		case app.EBadRequest, app.EForbidden, app.EOrgSuspended:
			oauthError(c, http.StatusBadRequest, "invalid_grant", app.ErrorMessage(err))
		default:
			s.log.Error("oauth token", "err", err)
			oauthError(c, http.StatusInternalServerError, "server_error", "an internal error occurred")
		}
		return
	}
	c.JSON(http.StatusOK, res)
}

// oauthThrottled refuses a token request of a client or address with too many
// recent failures (RFC 6585 429 with Retry-After, in the OAuth error body).
func (s *Server) oauthThrottled(c *gin.Context, wait time.Duration) {
	c.Header("Retry-After", strconv.Itoa(max(int((wait+time.Second-1)/time.Second), 1)))
	oauthError(c, http.StatusTooManyRequests, "slow_down", "too many failed attempts; retry later")
}

func oauthError(c *gin.Context, status int, code, desc string) {
	c.JSON(status, gin.H{"error": code, "error_description": desc})
}
