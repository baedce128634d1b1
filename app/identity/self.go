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

// ChangePassword sets the caller's account password after checking the current
// one, and ends every other web session of the user (the caller's own stays).
func (s *Service) ChangePassword(ctx context.Context, p *app.Principal, current, next string) error {
	if err := requireSelf(p); err != nil {
		return err
	}
	old, err := s.store.PasswordHash(ctx, p.UserID)
	if err != nil {
		return err
	}
	if !VerifyPassword(old, current) {
		return app.Invalid("body.current_password", "is not the account's current password", nil)
	}
	hash, err := HashPassword(next)
	if err != nil {
		return app.Invalid("body.new_password", err.Error(), nil)
	}
	keep := ""
	if p.Credential == app.CredSession {
		keep = p.CredentialID
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.SetPassword(ctx, p.UserID, hash); err != nil {
			return err
		}
		if err := s.store.DeleteUserSessions(ctx, p.UserID, keep); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user.password_changed", ActorID: p.UserID,
			TargetType: "user", TargetID: p.UserID, OrgID: p.OrgID, CreatedAt: s.clock.Now()})
	})
}

// SetAccountPassword sets a user's account password (the operator's CLI and
// the demo) and ends the user's web sessions.
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

// MyAppPasswords lists the caller's app passwords, newest first.
func (s *Service) MyAppPasswords(ctx context.Context, p *app.Principal, pr app.PageRequest) ([]AppPassword, error) {
	if err := requireSelf(p); err != nil {
		return nil, err
	}
	return s.store.AppPasswords(ctx, p.UserID, pr)
}

// CreateMyAppPassword issues an app password for the caller and returns its
// secret (shown once). The caller must hold every scope of its role.
func (s *Service) CreateMyAppPassword(ctx context.Context, p *app.Principal, label string) (string, AppPassword, error) {
	if err := requireSelf(p); err != nil {
		return "", AppPassword{}, err
	}
	if err := fullCredential(p); err != nil {
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
// at once.
func (s *Service) RevokeAppPassword(ctx context.Context, p *app.Principal, id string) error {
	if err := requireSelf(p); err != nil {
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

// MyTokens lists the caller's personal access tokens, newest first.
func (s *Service) MyTokens(ctx context.Context, p *app.Principal, pr app.PageRequest) ([]Token, error) {
	if err := requireSelf(p); err != nil {
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
	// TTL of the token, at most MaxTokenTTL; 0: it does not expire.
	TTL time.Duration
}

// CreateMyToken issues a personal access token for the caller and returns its
// secret (shown once).
func (s *Service) CreateMyToken(ctx context.Context, p *app.Principal, in CreateMyTokenInput) (string, Token, error) {
	if err := requireSelf(p); err != nil {
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
	if err := v.Err(); err != nil {
		return "", Token{}, err
	}
	return s.CreateToken(ctx, CreateTokenInput{UserID: p.UserID, Name: name, Scopes: scopes, TTL: in.TTL})
}

// RevokeToken deletes one of the caller's personal access tokens; it stops
// working at once.
func (s *Service) RevokeToken(ctx context.Context, p *app.Principal, id string) error {
	if err := requireSelf(p); err != nil {
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
