package rest

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/identity"
)

// ServicePrincipalCreate is the body of a new service principal.
type ServicePrincipalCreate struct {
	Name   string   `json:"name" minLength:"1" maxLength:"200" doc:"A name people recognise."`
	Scopes []string `json:"scopes" minItems:"1" doc:"Scopes the principal's tokens carry; no wider than the caller's."`
	UserID string   `json:"user_id,omitempty" doc:"Binds the principal to a user it acts for (needed for drive)."`
}

// SPTokenCreate is the body of a new service principal token.
type SPTokenCreate struct {
	Name       string `json:"name,omitempty" maxLength:"200"`
	TTLSeconds int    `json:"ttl_seconds,omitempty" minimum:"0" doc:"Lifetime in seconds; 0 or absent: no expiry."`
}

// SPTokenCreated is a new token with its secret, shown once.
type SPTokenCreated struct {
	identity.SPToken
	Token string `json:"token" doc:"The secret; shown only in this response."`
}

// SPPath is the path of one service principal.
type SPPath struct {
	ID string `path:"id"`
}

// SPTokenPath is the path of one token of a service principal.
type SPTokenPath struct {
	SPPath
	TokenID string `path:"token_id"`
}

func registerDeveloper(api huma.API, d Deps) {
	const tag = "Developer"
	huma.Register(api, idempotent(op(http.MethodPost, "/developer/service-principals", "createServicePrincipal", "Create a service principal", tag, app.ScopeDeveloper)),
		func(ctx context.Context, in *struct{ Body ServicePrincipalCreate }) (*body[identity.ServicePrincipal], error) {
			sp, err := d.Identity.CreateServicePrincipal(ctx, principal(ctx), identity.CreateServicePrincipalInput(in.Body))
			return out(sp), err
		})
	huma.Register(api, op(http.MethodGet, "/developer/service-principals", "listServicePrincipals", "List service principals", tag, app.ScopeDeveloper),
		func(ctx context.Context, in *CursorQuery) (*body[app.Page[identity.ServicePrincipal]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "sp:"+p.OrgID, *in, func(pr app.PageRequest) ([]identity.ServicePrincipal, error) {
				return d.Identity.ServicePrincipals(ctx, p, pr)
			}, func(sp identity.ServicePrincipal) string { return sp.ID })
			return out(pg), err
		})
	huma.Register(api, errs(op(http.MethodGet, "/developer/service-principals/{id}", "getServicePrincipal", "Get a service principal", tag, app.ScopeDeveloper), http.StatusNotFound),
		func(ctx context.Context, in *SPPath) (*body[identity.ServicePrincipal], error) {
			sp, err := d.Identity.ServicePrincipal(ctx, principal(ctx), in.ID)
			return out(sp), err
		})
	huma.Register(api, errs(op(http.MethodDelete, "/developer/service-principals/{id}", "deleteServicePrincipal", "Delete a service principal and its tokens", tag, app.ScopeDeveloper), http.StatusNotFound),
		func(ctx context.Context, in *SPPath) (*struct{}, error) {
			return nil, d.Identity.DeleteServicePrincipal(ctx, principal(ctx), in.ID)
		})
	huma.Register(api, errs(idempotent(op(http.MethodPost, "/developer/service-principals/{id}/tokens", "createServicePrincipalToken", "Create a token for a service principal", tag, app.ScopeDeveloper)), http.StatusNotFound),
		func(ctx context.Context, in *struct {
			SPPath
			Body SPTokenCreate
		}) (*body[SPTokenCreated], error) {
			secret, t, err := d.Identity.CreateSPToken(ctx, principal(ctx), in.ID, in.Body.Name, time.Duration(in.Body.TTLSeconds)*time.Second)
			return out(SPTokenCreated{SPToken: t, Token: secret}), err
		})
	huma.Register(api, errs(op(http.MethodGet, "/developer/service-principals/{id}/tokens", "listServicePrincipalTokens", "List a service principal's tokens", tag, app.ScopeDeveloper), http.StatusNotFound),
		func(ctx context.Context, in *struct {
			SPPath
			CursorQuery
		}) (*body[app.Page[identity.SPToken]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "spt:"+in.ID, in.CursorQuery, func(pr app.PageRequest) ([]identity.SPToken, error) {
				return d.Identity.SPTokens(ctx, p, in.ID, pr)
			}, func(t identity.SPToken) string { return t.ID })
			return out(pg), err
		})
	rv := errs(op(http.MethodDelete, "/developer/service-principals/{id}/tokens/{token_id}", "revokeServicePrincipalToken", "Revoke a service principal's token", tag, app.ScopeDeveloper), http.StatusNotFound)
	rv.Description = "Deletes the token: it stops working at once (401). A JWT already obtained with it by client credentials lives until it expires (one hour at most). Another principal's or organisation's token is 404."
	huma.Register(api, rv, func(ctx context.Context, in *SPTokenPath) (*struct{}, error) {
		return nil, d.Identity.RevokeSPToken(ctx, principal(ctx), in.ID, in.TokenID)
	})
}
