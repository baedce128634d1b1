package rest

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/identity"
)

// The caller's own credentials (/me/...): app passwords for DAV and file mount
// clients, personal access tokens, and the web app's sessions. A web session,
// or a token of a user acting for itself (not a service principal) that holds
// credentials:manage, may use them; each acts on the caller's own user only. Creating a credential is not idempotent on purpose:
// a replayed response would have to store the secret.

// AppPasswordCreate is the body of a new app password.
type AppPasswordCreate struct {
	Label string `json:"label,omitempty" maxLength:"200" doc:"A name for the device or program, e.g. \"Laptop Finder\"; absent: one with the date."`
}

// AppPasswordCreated is a new app password with its secret, shown once.
type AppPasswordCreated struct {
	identity.AppPassword
	Password string `json:"password" doc:"The app password; shown only in this response. Use it with the e-mail address as user name."`
	Username string `json:"username" doc:"The user name DAV and file mount clients sign in with: the e-mail address."`
	WebDAV   string `json:"webdav_url" doc:"The address of the file mount (WebDAV)."`
	DAV      string `json:"dav_url" doc:"The address of CardDAV and CalDAV."`
}

// TokenCreate is the body of a new personal access token.
type TokenCreate struct {
	Name       string   `json:"name" minLength:"1" maxLength:"200" doc:"A name people recognise."`
	Scopes     []string `json:"scopes,omitempty" doc:"Scopes of the token, each held by the caller (a token makes only narrower tokens); absent: every scope the caller holds."`
	TTLSeconds int64    `json:"ttl_seconds,omitempty" minimum:"0" maximum:"31622400" doc:"Lifetime in seconds, at most 366 days; 0 or absent: no expiry (made by a token that expires: that token's expiry)."`
}

// TokenCreated is a new personal access token with its secret, shown once.
type TokenCreated struct {
	identity.Token
	Secret string `json:"token" doc:"The secret (atr_pat_…); shown only in this response."`
}

// MeIDPath names one of the caller's credentials.
type MeIDPath struct {
	ID string `path:"id" doc:"The credential's id."`
}

func registerMe(api huma.API, d Deps, publicURL string) {
	const tag = "Identity"
	huma.Register(api, status(op(http.MethodGet, "/me/app-passwords", "listMyAppPasswords", "List my app passwords", tag), http.StatusOK),
		func(ctx context.Context, in *CursorQuery) (*body[app.Page[identity.AppPassword]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "me-app-passwords:"+p.UserID, *in, func(pr app.PageRequest) ([]identity.AppPassword, error) {
				return d.Identity.MyAppPasswords(ctx, p, pr)
			}, func(a identity.AppPassword) string { return a.ID })
			return out(pg), err
		})
	o := op(http.MethodPost, "/me/app-passwords", "createMyAppPassword", "Create an app password", tag)
	o.Description = "Creates an app password for WebDAV, CardDAV and CalDAV clients (user name: the e-mail address). It grants every scope of the user's role, so the caller must hold all of them (a web session or a full token, with `credentials:manage`); an app password does not expire, so a token that does cannot make one (403). A web session that signed in more than 10 minutes ago gives the account password again first (403 `reauthentication_required`). The secret is in this response only."
	huma.Register(api, o,
		func(ctx context.Context, in *struct{ Body AppPasswordCreate }) (*body[AppPasswordCreated], error) {
			p := principal(ctx)
			secret, a, err := d.Identity.CreateMyAppPassword(ctx, p, in.Body.Label)
			if err != nil {
				return nil, err
			}
			return out(AppPasswordCreated{AppPassword: a, Password: secret, Username: p.Email,
				WebDAV: publicURL + "/webdav/", DAV: publicURL + "/dav/"}), nil
		})
	huma.Register(api, errs(op(http.MethodDelete, "/me/app-passwords/{id}", "revokeMyAppPassword", "Revoke an app password", tag), http.StatusNotFound),
		func(ctx context.Context, in *MeIDPath) (*struct{}, error) {
			return nil, d.Identity.RevokeAppPassword(ctx, principal(ctx), in.ID)
		})

	huma.Register(api, status(op(http.MethodGet, "/me/tokens", "listMyTokens", "List my personal access tokens", tag), http.StatusOK),
		func(ctx context.Context, in *CursorQuery) (*body[app.Page[identity.Token]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "me-tokens:"+p.UserID, *in, func(pr app.PageRequest) ([]identity.Token, error) {
				return d.Identity.MyTokens(ctx, p, pr)
			}, func(t identity.Token) string { return t.ID })
			return out(pg), err
		})
	o = op(http.MethodPost, "/me/tokens", "createMyToken", "Create a personal access token", tag)
	o.Description = "Creates a personal access token for the caller with scopes the caller holds (a token makes only narrower tokens, and needs `credentials:manage`). A token made by a token never outlives it: `ttl_seconds` beyond the maker's expiry → 422, and without `ttl_seconds` the new token expires with its maker. A web session that signed in more than 10 minutes ago gives the account password again first (403 `reauthentication_required`). The secret is in this response only."
	huma.Register(api, o,
		func(ctx context.Context, in *struct{ Body TokenCreate }) (*body[TokenCreated], error) {
			secret, t, err := d.Identity.CreateMyToken(ctx, principal(ctx), identity.CreateMyTokenInput{Name: in.Body.Name,
				Scopes: in.Body.Scopes, TTL: time.Duration(in.Body.TTLSeconds) * time.Second})
			if err != nil {
				return nil, err
			}
			return out(TokenCreated{Token: t, Secret: secret}), nil
		})
	huma.Register(api, errs(op(http.MethodDelete, "/me/tokens/{id}", "revokeMyToken", "Revoke a personal access token", tag), http.StatusNotFound),
		func(ctx context.Context, in *MeIDPath) (*struct{}, error) {
			return nil, d.Identity.RevokeToken(ctx, principal(ctx), in.ID)
		})

	huma.Register(api, status(op(http.MethodGet, "/me/sessions", "listMySessions", "List my web sessions", tag), http.StatusOK),
		func(ctx context.Context, in *CursorQuery) (*body[app.Page[identity.Session]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "me-sessions:"+p.UserID, *in, func(pr app.PageRequest) ([]identity.Session, error) {
				return d.Identity.Sessions(ctx, p, pr)
			}, func(s identity.Session) string { return s.ID })
			return out(pg), err
		})
	huma.Register(api, errs(op(http.MethodDelete, "/me/sessions/{id}", "revokeMySession", "Sign a web session out", tag), http.StatusNotFound),
		func(ctx context.Context, in *MeIDPath) (*struct{}, error) {
			return nil, d.Identity.RevokeSession(ctx, principal(ctx), in.ID)
		})
}
