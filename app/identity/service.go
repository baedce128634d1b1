package identity

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"atrium/app"
)

// Credential prefixes: they tell the kind of a bearer secret at a glance (and let
// secret scanners find leaked ones).
const (
	PATPrefix     = "atr_pat_"
	SPTokenPrefix = "atr_sp_"
)

// Plans seeded on every start (CONTRACT §3).
var DefaultPlans = []Plan{
	{Slug: "starter", Name: "Starter", Features: []string{FeatureContacts, FeatureCalendar}, QuotaBytes: 5 << 30, MaxSeats: 25},
	{Slug: "business", Name: "Business", Features: []string{FeatureContacts, FeatureCalendar, FeatureDrive}, QuotaBytes: 1 << 40, MaxSeats: 1000},
	{Slug: "enterprise", Name: "Enterprise", Features: []string{FeatureContacts, FeatureCalendar, FeatureDrive}, QuotaBytes: 5 << 40, MaxSeats: 100000},
}

// Service applies the identity rules.
type Service struct {
	store  Store
	audit  app.Auditor
	clock  app.Clock
	pepper []byte
	// macs recycles HMAC-SHA256 states keyed with pepper (hash runs on every
	// authenticated request).
	macs  sync.Pool
	jwt   *Issuer
	cache authCache
	// profiles keeps Profile's answers, emptied with cache.
	profiles profileCache
	// sessions says how long web sessions last.
	sessions SessionPolicy
	// External verifies JWTs of a configured external OIDC issuer; nil when none.
	External ExternalVerifier
}

// ExternalVerifier verifies a JWT of an external OIDC issuer and returns the e-mail
// address of the user it names and the scopes it grants.
type ExternalVerifier interface {
	Issuer() string
	Verify(ctx context.Context, token string) (email string, scopes app.Scopes, err error)
}

// NewService returns the identity service. It loads (or creates) the server's
// secrets: the pepper for credential hashes and the JWT signing key.
func NewService(ctx context.Context, store Store, audit app.Auditor, clock app.Clock, issuerURL string) (*Service, error) {
	pepper, err := store.Secret(ctx, "credential_pepper", randomBytes(32))
	if err != nil {
		return nil, fmt.Errorf("load credential pepper: %w", err)
	}
	iss, err := newIssuer(ctx, store, clock, issuerURL)
	if err != nil {
		return nil, err
	}
	s := &Service{store: store, audit: audit, clock: clock, pepper: pepper, jwt: iss, sessions: DefaultSessionPolicy}
	s.profiles.gen = &s.cache.gen
	return s, nil
}

// Issuer returns the embedded JWT issuer. Errors: none of its own.
func (s *Service) Issuer() *Issuer { return s.jwt }

func randomBytes(n int) func() ([]byte, error) {
	return func() ([]byte, error) {
		b := make([]byte, n)
		_, err := rand.Read(b)
		return b, err
	}
}

// hash is the keyed hash under which a credential secret is stored.
func (s *Service) hash(secret string) []byte {
	m, ok := s.macs.Get().(hash.Hash)
	if !ok {
		m = hmac.New(sha256.New, s.pepper)
	}
	m.Reset()
	m.Write([]byte(secret))
	sum := m.Sum(make([]byte, 0, sha256.Size))
	s.macs.Put(m)
	return sum
}

// SeedPlans makes sure the default plans exist. Errors: none of its own.
func (s *Service) SeedPlans(ctx context.Context) error {
	return s.store.UpsertPlans(ctx, DefaultPlans)
}

var slugRE = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)

// ValidSlug reports whether s is a usable organisation slug.
func ValidSlug(s string) bool { return slugRE.MatchString(s) }

// Slugify makes a slug from a name.
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 64 {
		out = strings.Trim(out[:64], "-")
	}
	if out == "" {
		out = "org"
	}
	return out
}

// NormalizeEmail validates an e-mail address and returns it trimmed; the
// lowercased form is what uniqueness is checked on.
func NormalizeEmail(email string) (string, error) {
	email = strings.TrimSpace(email)
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 254 {
		return "", errors.New("must be a valid e-mail address")
	}
	return email, nil
}

// BootstrapResult is what Bootstrap made or found.
type BootstrapResult struct {
	Org  Organization
	User User
}

// Bootstrap ensures a top-level reseller organisation named orgName on the
// enterprise plan and a user with e-mail email and role in it (CONTRACT §1).
// Errors: validation_failed (an empty orgName, the e-mail address, the role),
// conflict (the address is a user's of another organisation).
func (s *Service) Bootstrap(ctx context.Context, orgName, email, role string) (BootstrapResult, error) {
	var res BootstrapResult
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.UpsertPlans(ctx, DefaultPlans); err != nil {
			return err
		}
		org, err := s.EnsureOrg(ctx, EnsureOrgInput{Name: orgName, BillingEmail: email, PlanSlug: "enterprise", Seats: 1000, ResellerDepth: 1})
		if err != nil {
			return err
		}
		u, err := s.EnsureUser(ctx, org.ID, EnsureUserInput{Email: email, Role: role})
		res = BootstrapResult{Org: org, User: u}
		return err
	})
	return res, err
}

// EnsureOrgInput names an organisation to find or make.
type EnsureOrgInput struct {
	ParentID      *string
	Name          string
	BillingEmail  string
	PlanSlug      string
	Seats         int
	ResellerDepth int
}

// EnsureOrg returns the organisation named in.Name under in.ParentID, creating it
// (with its subscription) when absent. Errors: validation_failed (an empty
// name, no such plan).
func (s *Service) EnsureOrg(ctx context.Context, in EnsureOrgInput) (Organization, error) {
	if strings.TrimSpace(in.Name) == "" {
		return Organization{}, app.Invalid("org-name", "must not be empty", in.Name)
	}
	var org Organization
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		org, err = s.store.OrgByName(ctx, in.ParentID, in.Name)
		if app.ErrorCode(err) != app.ENotFound {
			return err
		}
		if _, err := s.store.Plan(ctx, in.PlanSlug); err != nil {
			return app.Invalid("plan_slug", "no such plan", in.PlanSlug)
		}
		now := s.clock.Now()
		org = Organization{ID: app.NewID(), Name: in.Name, Slug: s.uniqueSlug(ctx, Slugify(in.Name)),
			BillingName: in.Name, BillingEmail: in.BillingEmail, ParentOrganizationID: in.ParentID,
			ResellerDepth: in.ResellerDepth, Status: OrgActive, CreatedAt: now, UpdatedAt: now}
		if err := s.store.CreateOrg(ctx, org); err != nil {
			return err
		}
		if err := s.store.SetSubscription(ctx, Subscription{OrgID: org.ID, PlanSlug: in.PlanSlug, Seats: in.Seats, Status: "active"}); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "organization.created", TargetType: "organization", TargetID: org.ID, OrgID: org.ID, CreatedAt: now})
	})
	return org, err
}

// EnsureUserInput names an active user to find or make.
type EnsureUserInput struct {
	Email     string
	FirstName string
	LastName  string
	Role      string
	// Password is the account password of a user made now; empty: none until an
	// invitation or a reset sets one. An existing user's password is kept.
	Password string
}

// EnsureUser returns the user with in.Email in organisation orgID, creating it
// active when absent. An address used in another organisation is a conflict.
// Errors: validation_failed (the e-mail address, the role, a password the rules
// refuse), conflict (the address is a user's of another organisation).
func (s *Service) EnsureUser(ctx context.Context, orgID string, in EnsureUserInput) (User, error) {
	email, err := NormalizeEmail(in.Email)
	if err != nil {
		return User{}, app.Invalid("email", err.Error(), in.Email)
	}
	if in.Role != app.RoleAdmin && in.Role != app.RoleMember {
		return User{}, app.Invalid("role", "must be admin or member", in.Role)
	}
	hash := ""
	if in.Password != "" {
		if hash, err = HashPassword(in.Password); err != nil {
			return User{}, app.Invalid("password", err.Error(), nil)
		}
	}
	var u User
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		u, err = s.store.UserByEmail(ctx, email)
		switch {
		case err == nil && u.OrgID != orgID:
			return app.Errorf(app.EConflict, "The e-mail address %s belongs to a user of another organisation.", email)
		case err == nil:
			return nil
		case app.ErrorCode(err) != app.ENotFound:
			return err
		}
		now := s.clock.Now()
		u = User{ID: app.NewID(), OrgID: orgID, Email: email, FirstName: in.FirstName, LastName: in.LastName,
			RoleSlug: in.Role, Status: UserActive, CreatedAt: now, UpdatedAt: now}
		if u.FirstName == "" && u.LastName == "" {
			u.FirstName, _, _ = strings.Cut(email, "@")
		}
		if err := s.store.CreateUser(ctx, u, hash); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user.created", TargetType: "user", TargetID: u.ID, OrgID: orgID, CreatedAt: now})
	})
	return u, err
}

// uniqueSlug returns base, or base-2, base-3, ... when taken.
func (s *Service) uniqueSlug(ctx context.Context, base string) string {
	slug := base
	for i := 2; ; i++ {
		if taken, _ := s.slugTaken(ctx, slug); !taken {
			return slug
		}
		slug = fmt.Sprintf("%s-%d", base, i)
	}
}

func (s *Service) slugTaken(ctx context.Context, slug string) (bool, error) {
	_, err := s.store.OrgBySlug(ctx, slug)
	if app.ErrorCode(err) == app.ENotFound {
		return false, nil
	}
	return true, err
}

// CreateTokenInput describes a new personal access token.
type CreateTokenInput struct {
	UserID string
	Name   string
	// Scopes requested; empty means every scope the user's role allows.
	Scopes []string
	// TTL of the token; 0 means it does not expire.
	TTL time.Duration
}

// CreateToken issues a PAT for a user and returns its secret (shown once).
// Errors: not_found (no user in.UserID), validation_failed (an unknown scope, a
// negative TTL), forbidden (a scope the user's role does not allow).
func (s *Service) CreateToken(ctx context.Context, in CreateTokenInput) (string, Token, error) {
	cred, err := s.store.UserCredential(ctx, in.UserID)
	if err != nil {
		return "", Token{}, err
	}
	allowed := app.NewScopes(app.RoleScopes(cred.User.RoleSlug, cred.Org.ResellerDepth >= 1)...)
	scopes := allowed
	if len(in.Scopes) > 0 {
		scopes = app.NewScopes(in.Scopes...)
		for sc := range scopes {
			if !app.KnownScope(sc) {
				return "", Token{}, app.Invalid("scopes", "unknown scope "+sc, sc)
			}
			if !allowed.Has(sc) {
				return "", Token{}, app.Errorf(app.EForbidden, "The user's role does not allow the scope %q.", sc)
			}
		}
	}
	now := s.clock.Now()
	t := Token{ID: app.NewID(), UserID: cred.User.ID, OrgID: cred.Org.ID, Name: in.Name, Scopes: scopes.List(), CreatedAt: now}
	if in.TTL < 0 {
		return "", Token{}, app.Invalid("ttl", "must not be negative", in.TTL.String())
	}
	if in.TTL > 0 {
		exp := now.Add(in.TTL)
		t.ExpiresAt = &exp
	}
	secret := PATPrefix + app.RandomHex(32)
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateToken(ctx, t, s.hash(secret)); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "token.created", ActorID: cred.User.ID,
			TargetType: "token", TargetID: t.ID, OrgID: cred.Org.ID, CreatedAt: now})
	})
	if err != nil {
		return "", Token{}, err
	}
	return secret, t, nil
}

// CreateAppPassword issues an app password (≥ 128 random bits) for DAV clients and
// returns its secret (shown once). Errors: not_found (no user userID).
func (s *Service) CreateAppPassword(ctx context.Context, userID, label string) (string, AppPassword, error) {
	u, err := s.store.User(ctx, userID)
	if err != nil {
		return "", AppPassword{}, err
	}
	now := s.clock.Now()
	a := AppPassword{ID: app.NewID(), UserID: u.ID, Label: label, CreatedAt: now}
	// 20 random bytes = 160 bits, grouped for people who type it into a client.
	raw := app.RandomHex(20)
	secret := strings.Join([]string{raw[0:8], raw[8:16], raw[16:24], raw[24:32], raw[32:40]}, "-")
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateAppPassword(ctx, a, s.hash(normalizeAppPassword(secret))); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "app_password.created", ActorID: u.ID,
			TargetType: "app_password", TargetID: a.ID, OrgID: u.OrgID, CreatedAt: now})
	})
	if err != nil {
		return "", AppPassword{}, err
	}
	return secret, a, nil
}

// normalizeAppPassword lets people type an app password with or without dashes
// and in either case.
func normalizeAppPassword(p string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(p), "-", ""))
}

// Authenticate resolves a bearer credential (PAT, service principal token or JWT)
// to a principal. A bad credential is unauthorized; a suspended organisation is
// org_suspended; a suspended or not yet active user is forbidden. Errors:
// unauthorized (an unknown, expired or revoked credential), org_suspended,
// forbidden (a user not active).
func (s *Service) Authenticate(ctx context.Context, bearer string) (*app.Principal, error) {
	switch {
	case strings.HasPrefix(bearer, PATPrefix):
		return s.fromSecret(ctx, app.CredPAT, bearer)
	case strings.HasPrefix(bearer, SPTokenPrefix):
		return s.fromSecret(ctx, app.CredSPToken, bearer)
	case strings.Count(bearer, ".") == 2:
		return s.fromJWT(ctx, bearer)
	}
	return nil, errBadCredential
}

var errBadCredential = app.Errorf(app.EUnauthorized, "The credential is not valid.")

func (s *Service) fromSecret(ctx context.Context, kind, secret string) (*app.Principal, error) {
	key := cacheKey(secret)
	now := s.clock.Now()
	if p, ok := s.cache.get(key, now); ok {
		return p, nil
	}
	gen := s.cache.gen.Load()
	h := s.hash(secret)
	cred, err := s.store.CredentialByHash(ctx, kind, h)
	if app.ErrorCode(err) == app.ENotFound {
		return nil, errBadCredential
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(cred.Hash, h) != 1 {
		return nil, errBadCredential
	}
	p, err := s.principal(cred, app.NewScopes(cred.Scopes...))
	if err == nil {
		s.touch(ctx, cred, now)
	}
	if err == nil && (cred.ExpiresAt == nil || cred.ExpiresAt.Sub(now) > authCacheTTL) {
		s.cache.put(key, p, gen, now)
	}
	return p, err
}

// touch records the use of a PAT or app password when its last recorded use is
// older than a minute. A failure to record it does not fail the request.
func (s *Service) touch(ctx context.Context, cred Credential, now time.Time) {
	if cred.Kind != app.CredPAT && cred.Kind != app.CredAppPassword {
		return
	}
	if cred.LastUsedAt != nil && now.Sub(*cred.LastUsedAt) < touchEvery && !now.Before(*cred.LastUsedAt) {
		return
	}
	_ = s.store.TouchCredential(ctx, cred.Kind, cred.ID, now)
}

// AuthenticateBasic resolves an e-mail address and app password (HTTP Basic on the
// DAV doors). Account passwords are not accepted there. Errors: unauthorized
// (an unknown address or app password, an expired one), org_suspended,
// forbidden (a user not active).
func (s *Service) AuthenticateBasic(ctx context.Context, email, password string) (*app.Principal, error) {
	norm := normalizeAppPassword(password)
	email = strings.TrimSpace(email)
	now := s.clock.Now()
	key := cacheKey("basic\x00" + email + "\x00" + norm) // not a bearer secret's: it starts with "basic"
	if p, ok := s.cache.get(key, now); ok {
		return p, nil
	}
	gen := s.cache.gen.Load()
	h := s.hash(norm)
	cred, err := s.store.AppPasswordCredential(ctx, email, h)
	if app.ErrorCode(err) == app.ENotFound {
		if p := strings.TrimSpace(password); strings.HasPrefix(p, PATPrefix) || strings.HasPrefix(p, SPTokenPrefix) {
			return nil, app.Errorf(app.EUnauthorized, "The password is an access token, not an app password: send the token as Authorization: Bearer <token>, or sign in with an app password.")
		}
		return nil, app.Errorf(app.EUnauthorized, "The e-mail address or app password is not valid. Use an app password, not the account password.")
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(cred.Hash, h) != 1 {
		return nil, errBadCredential
	}
	p, err := s.principal(cred, app.NewScopes(app.RoleScopes(cred.User.RoleSlug, cred.Org.ResellerDepth >= 1)...))
	if err == nil {
		s.touch(ctx, cred, now)
		if cred.ExpiresAt == nil || cred.ExpiresAt.Sub(now) > authCacheTTL {
			s.cache.put(key, p, gen, now)
		}
	}
	return p, err
}

// principal checks the state of a credential's owner and builds the principal. The
// scopes granted are those asked for, within what the owner may hold now (a role
// change takes effect on existing tokens).
func (s *Service) principal(cred Credential, scopes app.Scopes) (*app.Principal, error) {
	now := s.clock.Now()
	if cred.ExpiresAt != nil && !now.Before(*cred.ExpiresAt) {
		return nil, app.Errorf(app.EUnauthorized, "The credential has expired.")
	}
	if cred.Org.Status != OrgActive {
		return nil, app.Errorf(app.EOrgSuspended, "The organisation is suspended.")
	}
	p := &app.Principal{
		Credential: cred.Kind, CredentialID: cred.ID, OrgID: cred.Org.ID,
		ResellerDepth: cred.Org.ResellerDepth, Features: cred.Plan.Features, QuotaBytes: cred.Plan.QuotaBytes,
		ServicePrincipalID: cred.SPID,
	}
	if cred.ExpiresAt != nil {
		p.ExpiresAt = *cred.ExpiresAt
	}
	var allowed app.Scopes
	if cred.User != nil {
		if cred.User.Status != UserActive {
			return nil, app.Errorf(app.EForbidden, "The user account is %s.", cred.User.Status)
		}
		p.UserID, p.Email, p.Role = cred.User.ID, cred.User.Email, cred.User.RoleSlug
		allowed = app.NewScopes(app.RoleScopes(cred.User.RoleSlug, cred.Org.ResellerDepth >= 1)...)
	}
	if cred.SPID != "" {
		sp := app.NewScopes(cred.Scopes...)
		if allowed == nil {
			allowed = sp
		} else {
			allowed = allowed.Intersect(sp)
		}
	}
	p.Scopes = scopes.Intersect(allowed)
	return p, nil
}

// SetOrgStatus suspends or activates an organisation; the change applies to the
// next request of every credential of it. Errors: validation_failed (a status
// neither active nor suspended), not_found (no organisation orgID).
func (s *Service) SetOrgStatus(ctx context.Context, actorID, orgID, status string) error {
	if status != OrgActive && status != OrgSuspended {
		return app.Invalid("status", "must be active or suspended", status)
	}
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.SetOrgStatus(ctx, orgID, status); err != nil {
			return err
		}
		if status == OrgSuspended {
			if err := s.store.DeleteOrgSessions(ctx, orgID); err != nil {
				return err
			}
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "organization." + status, ActorID: actorID,
			TargetType: "organization", TargetID: orgID, OrgID: orgID, ChangedFields: []string{"status"}, CreatedAt: s.clock.Now()})
	})
	s.CredentialsChanged()
	return err
}

// SetUserStatus changes a user's status (invited, active, suspended). Errors:
// not_found (no user userID).
func (s *Service) SetUserStatus(ctx context.Context, actorID, userID, status string) error {
	u, err := s.store.User(ctx, userID)
	if err != nil {
		return err
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.SetUserStatus(ctx, userID, status); err != nil {
			return err
		}
		if status != UserActive {
			if err := s.store.DeleteUserSessions(ctx, userID, ""); err != nil {
				return err
			}
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user." + status, ActorID: actorID,
			TargetType: "user", TargetID: userID, OrgID: u.OrgID, ChangedFields: []string{"status"}, CreatedAt: s.clock.Now()})
	})
	s.CredentialsChanged()
	return err
}

// Profile returns the caller's organisation and user (nil for a service
// principal with no bound user), read in one query.
//
// Profiles are kept in the authentication cache for its short lifetime, and
// dropped with it on any change to a user or organisation (CredentialsChanged).
// Errors: not_found (the caller's user or organisation is gone).
func (s *Service) Profile(ctx context.Context, p *app.Principal) (Organization, *User, error) {
	now := s.clock.Now()
	key := profileKey{org: p.OrgID, user: p.UserID}
	if pr, ok := s.profiles.get(key, now); ok {
		var u *User
		if pr.user != nil {
			cp := *pr.user
			u = &cp
		}
		return pr.org, u, nil
	}
	gen := s.cache.gen.Load()
	if p.UserID == "" {
		o, err := s.store.Org(ctx, p.OrgID)
		if err == nil {
			s.profiles.put(key, profile{org: o}, gen, now)
		}
		return o, nil, err
	}
	c, err := s.store.UserCredential(ctx, p.UserID)
	if err != nil {
		return Organization{}, nil, err
	}
	if c.User != nil {
		u := *c.User
		s.profiles.put(key, profile{org: c.Org, user: &u}, gen, now)
	}
	return c.Org, c.User, nil
}

// Plans returns the plans. Errors: none of its own.
func (s *Service) Plans(ctx context.Context) ([]Plan, error) { return s.store.Plans(ctx) }

// Org returns an organisation. Errors: not_found (no organisation id).
func (s *Service) Org(ctx context.Context, id string) (Organization, error) {
	return s.store.Org(ctx, id)
}

// User returns a user. Errors: not_found (no user id).
func (s *Service) User(ctx context.Context, id string) (User, error) { return s.store.User(ctx, id) }

// UserByEmail returns the user with the e-mail address. Errors: not_found (no
// user with this address).
func (s *Service) UserByEmail(ctx context.Context, email string) (User, error) {
	return s.store.UserByEmail(ctx, email)
}

func containsAll(have app.Scopes, want []string) bool {
	return !slices.ContainsFunc(want, func(s string) bool { return !have.Has(s) })
}
