package identity

import (
	"context"
	"strconv"
	"strings"
	"time"

	"atrium/app"
)

// CreateServicePrincipalInput is the body of a new service principal.
type CreateServicePrincipalInput struct {
	Name   string
	Scopes []string
	UserID string
}

// requireDeveloper checks the caller may manage its organisation's service
// principals.
func requireDeveloper(p *app.Principal) error {
	if p == nil {
		return app.Errorf(app.EUnauthorized, "Authentication is required.")
	}
	if p.Scopes.Has(app.ScopeDeveloper) || p.Scopes.Has(app.ScopeAdmin) {
		return nil
	}
	return app.Errorf(app.EInsufficientScope, "The token lacks the scope %q.", app.ScopeDeveloper)
}

// CreateServicePrincipal registers a service principal in the caller's
// organisation. Its scopes can be no wider than the caller's; a bound user must
// belong to the organisation. Errors: insufficient_scope (neither
// developer:manage nor admin:access), validation_failed (the name, an unknown
// scope or one wider than the caller's, a user not of the organisation).
func (s *Service) CreateServicePrincipal(ctx context.Context, p *app.Principal, in CreateServicePrincipalInput) (ServicePrincipal, error) {
	if err := requireDeveloper(p); err != nil {
		return ServicePrincipal{}, err
	}
	var v app.Validator
	in.Name = strings.TrimSpace(in.Name)
	v.Check(in.Name != "" && len(in.Name) <= 200, "body.name", "must be 1 to 200 characters", in.Name)
	v.Check(len(in.Scopes) > 0, "body.scopes", "must name at least one scope", in.Scopes)
	for i, sc := range in.Scopes {
		switch {
		case !app.KnownScope(sc):
			v.Add("body.scopes["+strconv.Itoa(i)+"]", "unknown scope", sc)
		case !p.Scopes.Has(sc):
			v.Add("body.scopes["+strconv.Itoa(i)+"]", "wider than the caller's own scopes", sc)
		}
	}
	sp := ServicePrincipal{ID: app.NewID(), OrgID: p.OrgID, Name: in.Name, Scopes: app.NewScopes(in.Scopes...).List(), CreatedAt: s.clock.Now()}
	if in.UserID != "" {
		u, err := s.store.User(ctx, in.UserID)
		if err != nil || u.OrgID != p.OrgID {
			v.Add("body.user_id", "no such user in the organisation", in.UserID)
		} else {
			sp.UserID = &u.ID
		}
	}
	if err := v.Err(); err != nil {
		return ServicePrincipal{}, err
	}
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateServicePrincipal(ctx, sp); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "developer", Action: "service_principal.created", ActorID: p.UserID,
			TargetType: "service_principal", TargetID: sp.ID, OrgID: p.OrgID, CreatedAt: sp.CreatedAt})
	})
	return sp, err
}

// ServicePrincipal returns one service principal of the caller's organisation.
// Errors: insufficient_scope (neither developer:manage nor admin:access),
// not_found (no such service principal in the organisation).
func (s *Service) ServicePrincipal(ctx context.Context, p *app.Principal, id string) (ServicePrincipal, error) {
	if err := requireDeveloper(p); err != nil {
		return ServicePrincipal{}, err
	}
	return s.store.ServicePrincipal(ctx, p.OrgID, id)
}

// ServicePrincipals lists the caller's organisation's service principals.
// Errors: insufficient_scope (neither developer:manage nor admin:access).
func (s *Service) ServicePrincipals(ctx context.Context, p *app.Principal, pr app.PageRequest) ([]ServicePrincipal, error) {
	if err := requireDeveloper(p); err != nil {
		return nil, err
	}
	return s.store.ServicePrincipals(ctx, p.OrgID, pr)
}

// DeleteServicePrincipal removes a service principal and its tokens. Errors:
// insufficient_scope (neither developer:manage nor admin:access), not_found (no
// such service principal in the organisation).
func (s *Service) DeleteServicePrincipal(ctx context.Context, p *app.Principal, id string) error {
	if err := requireDeveloper(p); err != nil {
		return err
	}
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteServicePrincipal(ctx, p.OrgID, id); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "developer", Action: "service_principal.deleted", ActorID: p.UserID,
			TargetType: "service_principal", TargetID: id, OrgID: p.OrgID, CreatedAt: s.clock.Now()})
	})
	s.CredentialsChanged()
	return err
}

// CreateSPToken issues a token for a service principal and returns its secret
// (shown once). Errors: insufficient_scope (neither developer:manage nor
// admin:access), not_found (no such service principal in the organisation),
// validation_failed (a negative ttl).
func (s *Service) CreateSPToken(ctx context.Context, p *app.Principal, spID, name string, ttl time.Duration) (string, SPToken, error) {
	sp, err := s.ServicePrincipal(ctx, p, spID)
	if err != nil {
		return "", SPToken{}, err
	}
	if ttl < 0 {
		return "", SPToken{}, app.Invalid("body.ttl_seconds", "must not be negative", int(ttl.Seconds()))
	}
	now := s.clock.Now()
	t := SPToken{ID: app.NewID(), ServicePrincipalID: sp.ID, Name: strings.TrimSpace(name), CreatedAt: now}
	if ttl > 0 {
		exp := now.Add(ttl)
		t.ExpiresAt = &exp
	}
	secret := SPTokenPrefix + app.RandomHex(32)
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateSPToken(ctx, t, s.hash(secret)); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "developer", Action: "service_principal_token.created", ActorID: p.UserID,
			TargetType: "service_principal", TargetID: sp.ID, OrgID: p.OrgID, CreatedAt: now})
	})
	if err != nil {
		return "", SPToken{}, err
	}
	return secret, t, nil
}

// SPTokens lists a service principal's tokens (never their secrets). Errors:
// insufficient_scope (neither developer:manage nor admin:access), not_found (no
// such service principal in the organisation).
func (s *Service) SPTokens(ctx context.Context, p *app.Principal, spID string, pr app.PageRequest) ([]SPToken, error) {
	if _, err := s.ServicePrincipal(ctx, p, spID); err != nil {
		return nil, err
	}
	return s.store.SPTokens(ctx, spID, pr)
}

// RevokeSPToken deletes a token of one of the caller's organisation's service
// principals; it stops working at once (a JWT already minted from it by client
// credentials lives until it expires). Errors: insufficient_scope (neither
// developer:manage nor admin:access), not_found (no such service principal in
// the organisation, no such token of it).
func (s *Service) RevokeSPToken(ctx context.Context, p *app.Principal, spID, id string) error {
	sp, err := s.ServicePrincipal(ctx, p, spID)
	if err != nil {
		return err
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteSPToken(ctx, sp.ID, id); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "developer", Action: "service_principal_token.revoked", ActorID: p.UserID,
			TargetType: "service_principal", TargetID: sp.ID, OrgID: p.OrgID, CreatedAt: s.clock.Now()})
	})
	s.CredentialsChanged()
	return err
}
