package identity

import (
	"context"
	"strconv"
	"strings"
	"time"

	"atrium/app"
)

// A person's own credentials: the account password, app passwords, personal
// access tokens (sessions are in session.go). Every method acts on the caller's
// own user only; the web app and the REST endpoints under /me call these same
// methods.

// ErrWrongPassword is the error of a wrong current account password (a
// change of password, a confirmation): the doors count it as a failed
// sign-in of the account.
var ErrWrongPassword = app.Invalid("body.current_password", "is not the account's current password", nil)

// ChangePasswordInput is a change of the caller's account password.
type ChangePasswordInput struct {
	Current, Next string
	// RevokeCredentials also revokes every app password and personal access
	// token of the user and refuses the JWTs issued before.
	RevokeCredentials bool
}

// ChangePassword sets the caller's account password after checking the current
// one (a wrong one is ErrWrongPassword), and ends every other web session of
// the user (the caller's own stays); with RevokeCredentials, the user's app
// passwords and tokens too. It returns what was revoked. Errors: no_bound_user,
// forbidden (a service principal), validation_failed (a wrong current password,
// a new password the rules refuse).
func (s *Service) ChangePassword(ctx context.Context, p *app.Principal, in ChangePasswordInput) (Revoked, error) {
	if err := requireSelf(p); err != nil {
		return Revoked{}, err
	}
	old, err := s.store.PasswordHash(ctx, p.UserID)
	if err != nil {
		return Revoked{}, err
	}
	if !VerifyPassword(old, in.Current) {
		return Revoked{}, ErrWrongPassword
	}
	hash, err := HashPassword(in.Next)
	if err != nil {
		return Revoked{}, app.Invalid("body.new_password", err.Error(), nil)
	}
	keep := ""
	if p.Credential == app.CredSession {
		keep = p.CredentialID
	}
	var rev Revoked
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.SetPassword(ctx, p.UserID, hash); err != nil {
			return err
		}
		if err := s.store.DeleteUserSessions(ctx, p.UserID, keep); err != nil {
			return err
		}
		if in.RevokeCredentials {
			if rev, err = s.RevokeCredentials(ctx, p.UserID, p.OrgID); err != nil {
				return err
			}
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user.password_changed", ActorID: p.UserID,
			TargetType: "user", TargetID: p.UserID, OrgID: p.OrgID, CreatedAt: s.clock.Now()})
	})
	s.CredentialsChanged()
	return rev, err
}

// Revoked counts the credentials a revocation of all of them removed.
type Revoked struct {
	AppPasswords int `json:"app_passwords"`
	Tokens       int `json:"tokens"`
}

// RevokeCredentials revokes every app password and personal access token of
// a user and refuses the user's JWTs issued until now, with an audit entry.
// Run it inside the transaction of the change that asks for it, and call
// CredentialsChanged after that transaction. Errors: none of its own.
func (s *Service) RevokeCredentials(ctx context.Context, userID, orgID string) (Revoked, error) {
	apps, toks, err := s.store.RevokeUserCredentials(ctx, userID, s.clock.Now())
	if err != nil {
		return Revoked{}, err
	}
	return Revoked{AppPasswords: apps, Tokens: toks}, s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user.credentials_revoked",
		ActorID: userID, TargetType: "user", TargetID: userID, OrgID: orgID, CreatedAt: s.clock.Now()})
}

// RecentSignIn is how long after a web session's sign-in (or its latest
// confirmation of the password) it may make credentials and turn two-factor
// sign-in on without giving the account password again.
const RecentSignIn = 10 * time.Minute

// requireRecentSignIn refuses a web session whose password was last given
// more than RecentSignIn ago (reauthentication_required); other credentials
// pass (they are checked by scope).
func (s *Service) requireRecentSignIn(p *app.Principal) error {
	if p.Credential != app.CredSession || s.clock.Now().Sub(p.AuthenticatedAt) < RecentSignIn {
		return nil
	}
	return app.Errorf(app.EReauthRequired, "Give your account password again: this session signed in more than %d minutes ago.", int(RecentSignIn/time.Minute))
}

// NeedsReauthentication reports whether a sensitive change from p would ask
// for the account password first (a web session past RecentSignIn). Errors:
// none of its own.
func (s *Service) NeedsReauthentication(p *app.Principal) bool {
	return s.requireRecentSignIn(p) != nil
}

// ConfirmPassword checks the account password of a web session's user and
// records it as the session's latest proof (a wrong one is ErrWrongPassword).
// Errors: no_bound_user, forbidden (a service principal, a credential other
// than a web session), validation_failed (a wrong password).
func (s *Service) ConfirmPassword(ctx context.Context, p *app.Principal, password string) error {
	if err := requireSelf(p); err != nil {
		return err
	}
	if p.Credential != app.CredSession {
		return app.Errorf(app.EForbidden, "Only a web session confirms the account password.")
	}
	hash, err := s.store.PasswordHash(ctx, p.UserID)
	if err != nil {
		return err
	}
	if !VerifyPassword(hash, password) {
		return ErrWrongPassword
	}
	now := s.clock.Now()
	if err := s.store.ConfirmSession(ctx, p.CredentialID, now); err != nil {
		return err
	}
	p.AuthenticatedAt = now
	return nil
}

// requireCredentialManager checks the caller may manage its user's own
// credentials: a user acting for itself with a web session, or with a token
// holding credentials:manage.
func requireCredentialManager(p *app.Principal) error {
	if err := requireSelf(p); err != nil {
		return err
	}
	if p.Credential == app.CredSession {
		return nil
	}
	return p.Require(app.ScopeCredentials)
}

// SetAccountPassword sets a user's account password (the operator's CLI and
// the demo) and ends the user's web sessions. Errors: not_found (no user
// userID), validation_failed (a password the rules refuse).
func (s *Service) SetAccountPassword(ctx context.Context, userID, password string) error {
	u, err := s.store.User(ctx, userID)
	if err != nil {
		return err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return app.Invalid("password", err.Error(), nil)
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.SetPassword(ctx, u.ID, hash); err != nil {
			return err
		}
		if err := s.store.DeleteUserSessions(ctx, u.ID, ""); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user.password_set", TargetType: "user",
			TargetID: u.ID, OrgID: u.OrgID, CreatedAt: s.clock.Now()})
	})
}

// fullCredential checks the caller holds every scope its role allows (a web
// session does; a narrowed token does not): an app password grants all of
// them, so a narrower credential may not make one.
func fullCredential(p *app.Principal) error {
	for _, sc := range app.RoleScopes(p.Role, p.ResellerDepth >= 1) {
		if !p.Scopes.Has(sc) {
			return app.Errorf(app.EInsufficientScope, "An app password grants every scope of the user's role; the credential lacks %q.", sc)
		}
	}
	return nil
}

// validName checks a credential's name: up to 200 characters, trimmed.
func validName(field, name string) (string, error) {
	name = strings.TrimSpace(name)
	if len(name) > 200 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", app.Invalid(field, "must be at most 200 characters without control characters", name)
	}
	return name, nil
}

// MyAppPasswords lists the caller's app passwords, newest first. Errors:
// no_bound_user, forbidden (a service principal), insufficient_scope (a token
// without credentials:manage).
func (s *Service) MyAppPasswords(ctx context.Context, p *app.Principal, pr app.PageRequest) ([]AppPassword, error) {
	if err := requireCredentialManager(p); err != nil {
		return nil, err
	}
	return s.store.AppPasswords(ctx, p.UserID, pr)
}

// CreateMyAppPassword issues an app password for the caller and returns its
// secret (shown once). The caller must hold every scope of its role. Errors:
// no_bound_user, forbidden (a service principal, a token that expires),
// insufficient_scope (a token without credentials:manage, a credential without
// every scope of the role), reauthentication_required (a web session past
// RecentSignIn), validation_failed (the label).
func (s *Service) CreateMyAppPassword(ctx context.Context, p *app.Principal, label string) (string, AppPassword, error) {
	if err := requireCredentialManager(p); err != nil {
		return "", AppPassword{}, err
	}
	if err := fullCredential(p); err != nil {
		return "", AppPassword{}, err
	}
	if !p.ExpiresAt.IsZero() {
		return "", AppPassword{}, app.Errorf(app.EForbidden, "An app password does not expire, and this token does (%s): make app passwords from a web session or a token without expiry.", p.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if err := s.requireRecentSignIn(p); err != nil {
		return "", AppPassword{}, err
	}
	label, err := validName("body.label", label)
	if err != nil {
		return "", AppPassword{}, err
	}
	if label == "" {
		label = "App password " + s.clock.Now().Format("2006-01-02 15:04")
	}
	return s.CreateAppPassword(ctx, p.UserID, label)
}

// RevokeAppPassword deletes one of the caller's app passwords; it stops working
// at once. Errors: no_bound_user, forbidden (a service principal),
// insufficient_scope (a token without credentials:manage), not_found (no such
// app password of the caller).
func (s *Service) RevokeAppPassword(ctx context.Context, p *app.Principal, id string) error {
	if err := requireCredentialManager(p); err != nil {
		return err
	}
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteAppPassword(ctx, p.UserID, id); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "app_password.revoked", ActorID: p.UserID,
			TargetType: "app_password", TargetID: id, OrgID: p.OrgID, CreatedAt: s.clock.Now()})
	})
	s.CredentialsChanged()
	return err
}

// UserCredentials lists a user's app passwords and personal access tokens
// (at most 100 of each, newest first), for the page of a password reset.
// Errors: none of its own.
func (s *Service) UserCredentials(ctx context.Context, userID string) ([]AppPassword, []Token, error) {
	pr := app.PageRequest{Limit: 100}
	apps, err := s.store.AppPasswords(ctx, userID, pr)
	if err != nil {
		return nil, nil, err
	}
	toks, err := s.store.Tokens(ctx, userID, pr)
	return apps, toks, err
}

// MyTokens lists the caller's personal access tokens, newest first. Errors:
// no_bound_user, forbidden (a service principal), insufficient_scope (a token
// without credentials:manage).
func (s *Service) MyTokens(ctx context.Context, p *app.Principal, pr app.PageRequest) ([]Token, error) {
	if err := requireCredentialManager(p); err != nil {
		return nil, err
	}
	return s.store.Tokens(ctx, p.UserID, pr)
}

// MaxTokenTTL is the longest lifetime of a token a person makes for itself.
const MaxTokenTTL = 366 * 24 * time.Hour

// CreateMyTokenInput describes a personal access token the caller makes.
type CreateMyTokenInput struct {
	Name string
	// Scopes of the token: each must be held by the caller (a token makes only
	// narrower tokens). Empty: every scope the caller holds.
	Scopes []string
	// TTL of the token, at most MaxTokenTTL, and, made by a token that
	// expires, at most until that token's expiry; 0: it does not expire, or,
	// made by a token that expires, it expires with that token.
	TTL time.Duration
}

// CreateMyToken issues a personal access token for the caller and returns its
// secret (shown once). Errors: no_bound_user, forbidden (a service principal),
// insufficient_scope (a token without credentials:manage), validation_failed
// (the name, the TTL, an unknown scope or one the caller does not hold),
// reauthentication_required (a web session past RecentSignIn).
func (s *Service) CreateMyToken(ctx context.Context, p *app.Principal, in CreateMyTokenInput) (string, Token, error) {
	if err := requireCredentialManager(p); err != nil {
		return "", Token{}, err
	}
	var v app.Validator
	name, err := validName("body.name", in.Name)
	if err != nil {
		return "", Token{}, err
	}
	v.Check(name != "", "body.name", "must not be empty", in.Name)
	v.Check(in.TTL >= 0 && in.TTL <= MaxTokenTTL, "body.ttl_seconds", "must be 0 (no expiry) or up to "+strconv.Itoa(int(MaxTokenTTL/time.Second))+" seconds", int64(in.TTL/time.Second))
	scopes := in.Scopes
	if len(scopes) == 0 {
		scopes = p.Scopes.List()
	}
	for i, sc := range scopes {
		switch {
		case !app.KnownScope(sc):
			v.Add("body.scopes["+strconv.Itoa(i)+"]", "unknown scope", sc)
		case !p.Scopes.Has(sc):
			v.Add("body.scopes["+strconv.Itoa(i)+"]", "wider than the caller's own scopes", sc)
		}
	}
	ttl := in.TTL
	if !p.ExpiresAt.IsZero() {
		left := p.ExpiresAt.Sub(s.clock.Now()).Truncate(time.Second)
		switch {
		case ttl == 0:
			ttl = left
		case ttl > left:
			v.Add("body.ttl_seconds", "must not outlive the token that makes it: at most "+strconv.Itoa(int(left/time.Second))+" seconds (it expires at "+p.ExpiresAt.UTC().Format(time.RFC3339)+")", int64(in.TTL/time.Second))
		}
	}
	if err := v.Err(); err != nil {
		return "", Token{}, err
	}
	if err := s.requireRecentSignIn(p); err != nil {
		return "", Token{}, err
	}
	return s.CreateToken(ctx, CreateTokenInput{UserID: p.UserID, Name: name, Scopes: scopes, TTL: ttl})
}

// RevokeToken deletes one of the caller's personal access tokens; it stops
// working at once. Errors: no_bound_user, forbidden (a service principal),
// insufficient_scope (a token without credentials:manage), not_found (no such
// token of the caller).
func (s *Service) RevokeToken(ctx context.Context, p *app.Principal, id string) error {
	if err := requireCredentialManager(p); err != nil {
		return err
	}
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteToken(ctx, p.UserID, id); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "token.revoked", ActorID: p.UserID,
			TargetType: "token", TargetID: id, OrgID: p.OrgID, CreatedAt: s.clock.Now()})
	})
	s.CredentialsChanged()
	return err
}
