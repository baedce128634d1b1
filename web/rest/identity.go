package rest

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/identity"
)

// Me is the caller as the server sees it.
type Me struct {
	Credential         string                `json:"credential" doc:"Kind of credential presented." enum:"pat,service_principal_token,jwt,app_password,session"`
	User               *identity.User        `json:"user" doc:"The acting user; null for a service principal with no bound user."`
	Organization       identity.Organization `json:"organization"`
	Scopes             []string              `json:"scopes"`
	Features           []string              `json:"features" doc:"Plan features of the organisation."`
	ServicePrincipalID string                `json:"service_principal_id,omitempty"`
	TwoFactor          bool                  `json:"two_factor" doc:"Whether the user signs in to the web app with a second factor (an authentication code after the password). App passwords and tokens need none. False without a user."`
}

// AuditPage is a page of audit entries.
type AuditPage = app.Page[app.AuditEntry]

func registerIdentity(api huma.API, d Deps) {
	huma.Register(api, status(op(http.MethodGet, "/me", "getMe", "Who am I", "Identity"), http.StatusOK),
		func(ctx context.Context, _ *struct{}) (*body[Me], error) {
			p := principal(ctx)
			o, u, err := d.Identity.Profile(ctx, p)
			if err != nil {
				return nil, err
			}
			m := Me{Credential: p.Credential, User: u, Organization: o, Scopes: p.Scopes.List(), Features: p.Features, ServicePrincipalID: p.ServicePrincipalID}
			if u != nil {
				if m.TwoFactor, err = d.Identity.TwoFactorOn(ctx, u.ID); err != nil {
					return nil, err
				}
			}
			if m.Features == nil {
				m.Features = []string{}
			}
			return out(m), nil
		})

	huma.Register(api, status(op(http.MethodGet, "/audit", "listAuditLog", "List the organisation's audit log", "Identity", app.ScopeAdmin), http.StatusOK),
		func(ctx context.Context, in *CursorQuery) (*body[AuditPage], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "audit:"+p.OrgID, *in, func(pr app.PageRequest) ([]app.AuditEntry, error) {
				return d.Audit.List(ctx, p.OrgID, pr.After, pr.Limit+1)
			}, func(e app.AuditEntry) string { return e.ID })
			return out(pg), err
		})
}
