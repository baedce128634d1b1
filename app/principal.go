package app

import (
	"context"
	"reflect"
	"time"
)

// Credential kinds a principal can come from.
const (
	CredPAT         = "pat"
	CredSPToken     = "service_principal_token"
	CredJWT         = "jwt"
	CredAppPassword = "app_password"
	// CredSession is a signed-in browser's session cookie (the web app only).
	CredSession = "session"
)

// Principal is the authenticated caller of a request: who acts, for which
// organisation, with which rights.
type Principal struct {
	// Credential is the kind of credential presented (Cred* constants).
	Credential string
	// CredentialID identifies the token, app password or JWT (jti).
	CredentialID string
	OrgID        string
	// UserID is the acting user; empty for a service principal with no bound user.
	UserID string
	// ServicePrincipalID is set for service-principal tokens and their JWTs.
	ServicePrincipalID string
	Role               string
	Email              string
	Scopes             Scopes
	// ResellerDepth of the caller's organisation; >= 1 is a reseller.
	ResellerDepth int
	// Features are the plan features of the caller's organisation.
	Features []string
	// QuotaBytes is the storage quota of the caller's organisation's plan.
	QuotaBytes int64
	// ExpiresAt is when the credential itself expires (a PAT's or JWT's
	// expiry); zero: it does not. A web session's is not set here.
	ExpiresAt time.Time
	// AuthenticatedAt is, for a web session, when its person last gave the
	// account password (sign-in or a confirmation); zero otherwise.
	AuthenticatedAt time.Time

	// scopeList is Scopes.List() of the set scopeListOf, kept by KeepScopeList.
	scopeList   []string
	scopeListOf Scopes
}

// ScopeList returns p.Scopes.List(): the list KeepScopeList kept, while
// p.Scopes is still the set it was made of. Callers must not change it.
func (p *Principal) ScopeList() []string {
	// The set kept is referenced here, so no other map can take its address.
	if p.scopeListOf != nil && reflect.ValueOf(p.scopeListOf).UnsafePointer() == reflect.ValueOf(p.Scopes).UnsafePointer() {
		return p.scopeList
	}
	return p.Scopes.List()
}

// KeepScopeList lists p's scopes once, for a principal that is kept and copied
// (the credential cache): the copies share the list. A set of scopes is never
// changed in place; a principal given another set lists that one again.
func (p *Principal) KeepScopeList() { p.scopeList, p.scopeListOf = p.Scopes.List(), p.Scopes }

// HasFeature reports whether the caller's plan includes feature f.
func (p *Principal) HasFeature(f string) bool {
	for _, v := range p.Features {
		if v == f {
			return true
		}
	}
	return false
}

// Require returns insufficient_scope unless the principal holds scope.
func (p *Principal) Require(scope string) error {
	if p == nil {
		return Errorf(EUnauthorized, "Authentication is required.")
	}
	if !p.Scopes.Has(scope) {
		return Errorf(EInsufficientScope, "The token lacks the scope %q.", scope)
	}
	return nil
}

// RequireUser returns no_bound_user when the principal has no acting user.
func (p *Principal) RequireUser() error {
	if p.UserID == "" {
		return Errorf(ENoBoundUser, "This endpoint needs an acting user; use a token bound to a user.")
	}
	return nil
}

// PrincipalKey is the context key of the principal. WithPrincipal adds one to
// a context; a door's own request context may also answer it (a *Principal),
// once it has authenticated the request.
type PrincipalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, PrincipalKey{}, p)
}

// PrincipalFrom returns the principal of ctx, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(PrincipalKey{}).(*Principal)
	return p
}
