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

// AuditQuery filters the audit log.
type AuditQuery struct {
	CursorQuery
	Module  string `query:"module" doc:"Only entries of this module: admin (the organisation's admins), partner (its reseller), identity, developer, drive, contacts, calendar or webhooks."`
	ActorID string `query:"actor_id" doc:"Only entries by this actor: a user id, or sp:<id> for a service principal with no bound user."`
	Since   string `query:"since" doc:"Only entries at or after this time (RFC 3339, such as 2026-01-31T00:00:00Z)."`
	Until   string `query:"until" doc:"Only entries before this time (RFC 3339)."`
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
			m := Me{Credential: p.Credential, User: u, Organization: o, Scopes: p.ScopeList(), Features: p.Features, ServicePrincipalID: p.ServicePrincipalID}
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

	audit := op(http.MethodGet, "/audit", "listAuditLog", "List the organisation's audit log", "Identity", app.ScopeAdmin)
	audit.Description = "Entries newest first, optionally only those of one module, of one actor and of a time range " +
		"(the filters combine; an invalid one → 422 naming it). A cursor belongs to its filters."
	huma.Register(api, status(audit, http.StatusOK),
		func(ctx context.Context, in *AuditQuery) (*body[AuditPage], error) {
			p := principal(ctx)
			f, err := app.ParseAuditFilter(in.Module, in.ActorID, in.Since, in.Until)
			if err != nil {
				return nil, err
			}
			list := "audit:" + p.OrgID + ":" + in.Module + ":" + in.ActorID + ":" + in.Since + ":" + in.Until
			pg, err := page(d.Cursors, list, in.CursorQuery, func(pr app.PageRequest) ([]app.AuditEntry, error) {
				return d.Audit.Find(ctx, p.OrgID, f, pr.After, pr.Limit+1)
			}, func(e app.AuditEntry) string { return e.ID })
			return out(pg), err
		})
}
