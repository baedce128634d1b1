package identity

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"

	"atrium/app"
)

// Session is a signed-in browser of the web app. Its secret (the cookie's value)
// is never stored, only its keyed hash.
type Session struct {
	ID         string    `json:"id"`
	UserID     string    `json:"user_id"`
	OrgID      string    `json:"organization_id"`
	UserAgent  string    `json:"user_agent" doc:"The browser's User-Agent at sign-in."`
	Address    string    `json:"address" doc:"The client address at sign-in."`
	CreatedAt  time.Time `json:"created_at"`
	LastSeenAt time.Time `json:"last_seen_at" doc:"The session's last request (to the minute)."`
	ExpiresAt  time.Time `json:"expires_at" doc:"When the session ends however active it is."`
	// AuthenticatedAt is the session's last proof of the account password.
	AuthenticatedAt time.Time `json:"authenticated_at" doc:"When the account password was last given in this session (its sign-in, or a confirmation)."`
	// Current marks the session of the request that listed it.
	Current bool `json:"current"`
}

// SessionPolicy says how long sessions last.
type SessionPolicy struct {
	// Idle ends a session that made no request for this long.
	Idle time.Duration
	// MaxAge ends a session this long after sign-in, however active.
	MaxAge time.Duration
}

// DefaultSessionPolicy is the policy of a service that was given none.
var DefaultSessionPolicy = SessionPolicy{Idle: 12 * time.Hour, MaxAge: 7 * 24 * time.Hour}

// SessionPrefix starts every session secret.
const SessionPrefix = "atr_ses_"

// touchEvery is how stale a session's or credential's last use may get before it
// is written again: one write per minute at most, not one per request.
const touchEvery = time.Minute

// SetSessionPolicy sets how long sessions last; a zero field keeps its default.
// Errors: none of its own.
func (s *Service) SetSessionPolicy(p SessionPolicy) {
	if p.Idle > 0 {
		s.sessions.Idle = p.Idle
	}
	if p.MaxAge > 0 {
		s.sessions.MaxAge = p.MaxAge
	}
}

// SessionPolicy returns how long sessions last. Errors: none of its own.
func (s *Service) SessionPolicy() SessionPolicy { return s.sessions }

// SignInInput is a person's sign-in to the web app.
type SignInInput struct {
	Email     string
	Password  string
	UserAgent string
	Address   string
}

// errBadSignIn is the one answer to an unknown address or a wrong password.
var errBadSignIn = app.Errorf(app.EUnauthorized, "The e-mail address or password is not valid.")

// SignIn checks an e-mail address and account password and starts a session.
// It returns the session's secret (the cookie's value). An unknown address or a
// wrong password is unauthorized (the same answer for both); a suspended or not
// yet active user is forbidden and a suspended organisation org_suspended (said
// only to whoever knows the password). An account with two-factor sign-in on
// is unauthorized here: it signs in with BeginSignIn and CompleteSignIn.
// Errors: unauthorized (an unknown address, a wrong password, two-factor
// sign-in on), forbidden (a user not active), org_suspended.
func (s *Service) SignIn(ctx context.Context, in SignInInput) (string, Session, error) {
	res, err := s.BeginSignIn(ctx, in)
	if err != nil {
		return "", Session{}, err
	}
	if res.Challenge != "" {
		return "", Session{}, app.Errorf(app.EUnauthorized, "The account has two-factor sign-in on: it needs an authentication code as well.")
	}
	return res.Secret, res.Session, nil
}

// SignInResult is the outcome of the password step of a sign-in: a session
// (Secret, Session), or, for an account with two-factor sign-in on, the token
// of the pending second step (Challenge) and no session.
type SignInResult struct {
	Secret  string
	Session Session
	// Challenge is the secret token of the pending second step (the browser
	// keeps it until the code is given); "" when a session was started.
	Challenge string
	// ChallengeExpiresAt is when the second step ends unused.
	ChallengeExpiresAt time.Time
}

// BeginSignIn checks an e-mail address and account password (with the
// answers of SignIn). Without two-factor sign-in it starts a session; with it,
// it starts the pending second step only (CompleteSignIn ends it). Errors:
// unauthorized (an unknown address, a wrong password), forbidden (a user not
// active), org_suspended.
func (s *Service) BeginSignIn(ctx context.Context, in SignInInput) (SignInResult, error) {
	u, err := s.checkPassword(ctx, in.Email, in.Password)
	if err != nil {
		return SignInResult{}, err
	}
	if err := s.checkActive(ctx, u.ID); err != nil {
		return SignInResult{}, err
	}
	on, err := s.TwoFactorOn(ctx, u.ID)
	if err != nil {
		return SignInResult{}, err
	}
	if on {
		return s.startChallenge(ctx, u)
	}
	secret, ss, err := s.startSession(ctx, u, in.UserAgent, in.Address, nil)
	return SignInResult{Secret: secret, Session: ss}, err
}

// checkPassword returns the user with e-mail address email whose account
// password is password, else errBadSignIn (in the same time for an unknown
// address).
func (s *Service) checkPassword(ctx context.Context, email, password string) (User, error) {
	u, err := s.store.UserByEmail(ctx, strings.TrimSpace(email))
	if app.ErrorCode(err) == app.ENotFound || strings.TrimSpace(email) == "" {
		VerifyPassword(dummyHash(), password)
		return User{}, errBadSignIn
	}
	if err != nil {
		return User{}, err
	}
	hash, err := s.store.PasswordHash(ctx, u.ID)
	if err != nil {
		return User{}, err
	}
	if hash == "" {
		VerifyPassword(dummyHash(), password)
		return User{}, errBadSignIn
	}
	if !VerifyPassword(hash, password) {
		return User{}, errBadSignIn
	}
	return u, nil
}

// checkActive refuses a suspended or not yet active user (forbidden) and a
// suspended organisation (org_suspended).
func (s *Service) checkActive(ctx context.Context, userID string) error {
	cred, err := s.store.UserCredential(ctx, userID)
	if err != nil {
		return err
	}
	_, err = s.principal(cred, nil)
	return err
}

// startSession stores a new session of u and returns its secret; also, in the
// same transaction, the audit entries of extra (the second step's).
func (s *Service) startSession(ctx context.Context, u User, userAgent, address string, extra []app.AuditEntry) (string, Session, error) {
	now := s.clock.Now()
	ss := Session{ID: app.NewID(), UserID: u.ID, OrgID: u.OrgID, UserAgent: truncate(userAgent, 256),
		Address: truncate(address, 64), CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(s.sessions.MaxAge), AuthenticatedAt: now}
	secret := SessionPrefix + app.RandomHex(32)
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateSession(ctx, ss, s.hash(secret)); err != nil {
			return err
		}
		for _, e := range extra {
			if err := s.audit.Record(ctx, e); err != nil {
				return err
			}
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "session.created", ActorID: u.ID,
			TargetType: "session", TargetID: ss.ID, OrgID: u.OrgID, CreatedAt: now})
	})
	if err != nil {
		return "", Session{}, err
	}
	ss.Current = true
	return secret, ss, nil
}

// truncate cuts v to at most n bytes of valid UTF-8, on a character boundary.
func truncate(v string, n int) string {
	if len(v) > 4*n {
		v = v[:4*n]
	}
	v = strings.ToValidUTF8(v, "")
	if len(v) <= n {
		return v
	}
	i := n
	for i > 0 && !utf8.RuneStart(v[i]) {
		i--
	}
	return v[:i]
}

var errNoSession = app.Errorf(app.EUnauthorized, "The session has ended; sign in again.")

// AuthenticateSession resolves a session secret to a principal holding every
// scope the user's role allows (CredentialID is the session's id). An unknown,
// idle or expired session is unauthorized; a suspended user is forbidden and a
// suspended organisation org_suspended. Errors: unauthorized (an unknown, idle
// or expired session), forbidden (a user not active), org_suspended.
func (s *Service) AuthenticateSession(ctx context.Context, secret string) (*app.Principal, error) {
	if !strings.HasPrefix(secret, SessionPrefix) {
		return nil, errNoSession
	}
	h := s.hash(secret)
	ss, cred, err := s.store.SessionByHash(ctx, h)
	if app.ErrorCode(err) == app.ENotFound {
		return nil, errNoSession
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(cred.Hash, h) != 1 {
		return nil, errNoSession
	}
	now := s.clock.Now()
	if now.Sub(ss.LastSeenAt) >= s.sessions.Idle || !now.Before(ss.ExpiresAt) {
		_ = s.store.DeleteSession(ctx, ss.UserID, ss.ID)
		return nil, errNoSession
	}
	p, err := s.principal(cred, app.NewScopes(app.RoleScopes(cred.User.RoleSlug, cred.Org.ResellerDepth >= 1)...))
	if err != nil {
		return nil, err
	}
	p.AuthenticatedAt = ss.AuthenticatedAt
	if now.Sub(ss.LastSeenAt) >= touchEvery {
		if err := s.store.TouchSession(ctx, ss.ID, now); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// SessionCSRF returns the anti-forgery token of a session: a keyed hash of its
// secret, so that it needs no storage and is worthless without the cookie.
// Errors: none of its own.
func (s *Service) SessionCSRF(secret string) string {
	m := hmac.New(sha256.New, s.pepper)
	m.Write([]byte("csrf\x00" + secret))
	return hex.EncodeToString(m.Sum(nil))
}

// CheckSessionCSRF reports, in constant time, whether token is the session's
// anti-forgery token. Errors: none of its own.
func (s *Service) CheckSessionCSRF(secret, token string) bool {
	return subtle.ConstantTimeCompare([]byte(s.SessionCSRF(secret)), []byte(token)) == 1
}

// requireSelf checks the caller is a user acting for itself (a session, a PAT
// or a user JWT), not a service principal acting for its bound user.
func requireSelf(p *app.Principal) error {
	if p == nil {
		return app.Errorf(app.EUnauthorized, "Authentication is required.")
	}
	if err := p.RequireUser(); err != nil {
		return err
	}
	if p.ServicePrincipalID != "" {
		return app.Errorf(app.EForbidden, "A service principal cannot manage the credentials of the user it acts for.")
	}
	return nil
}

// Sessions lists the caller's web sessions, newest first; the caller's own is
// marked current. Errors: no_bound_user, forbidden (a service principal),
// insufficient_scope (a token without credentials:manage).
func (s *Service) Sessions(ctx context.Context, p *app.Principal, pr app.PageRequest) ([]Session, error) {
	if err := requireCredentialManager(p); err != nil {
		return nil, err
	}
	list, err := s.store.Sessions(ctx, p.UserID, pr)
	for i := range list {
		list[i].Current = p.Credential == app.CredSession && list[i].ID == p.CredentialID
	}
	return list, err
}

// RevokeSession ends one of the caller's sessions (its own included: that is
// signing out). Errors: no_bound_user, forbidden (a service principal),
// insufficient_scope (a token without credentials:manage), not_found (no such
// session of the caller).
func (s *Service) RevokeSession(ctx context.Context, p *app.Principal, id string) error {
	if err := requireCredentialManager(p); err != nil {
		return err
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteSession(ctx, p.UserID, id); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "session.revoked", ActorID: p.UserID,
			TargetType: "session", TargetID: id, OrgID: p.OrgID, CreatedAt: s.clock.Now()})
	})
}

// SignOut ends the caller's own session. Errors: bad_request (a credential
// other than a web session).
func (s *Service) SignOut(ctx context.Context, p *app.Principal) error {
	if p == nil || p.Credential != app.CredSession {
		return app.Errorf(app.EBadRequest, "Only a web session can sign out.")
	}
	return s.RevokeSession(ctx, p, p.CredentialID)
}

// EndUserSessions ends every web session of a user (but exceptID): after a
// password change, a reset, or a suspension. Run it inside the change's
// transaction. Errors: none of its own.
func (s *Service) EndUserSessions(ctx context.Context, userID, exceptID string) error {
	return s.store.DeleteUserSessions(ctx, userID, exceptID)
}

// EndOrgSessions ends every web session of an organisation's users (on its
// suspension). Errors: none of its own.
func (s *Service) EndOrgSessions(ctx context.Context, orgID string) error {
	return s.store.DeleteOrgSessions(ctx, orgID)
}

// PruneSessions removes idle and expired sessions and returns how many. Errors:
// none of its own.
func (s *Service) PruneSessions(ctx context.Context) (int, error) {
	now := s.clock.Now()
	return s.store.PruneSessions(ctx, now.Add(-s.sessions.Idle), now)
}
