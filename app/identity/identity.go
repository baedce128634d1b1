// Package identity holds the rules of organisations, users, plans, credentials and
// scopes: who a caller is and what it may do.
package identity

import (
	"context"
	"time"

	"atrium/app"
)

// Organisation statuses.
const (
	OrgActive    = "active"
	OrgSuspended = "suspended"
)

// User statuses (CONTRACT §3).
const (
	UserInvited   = "invited"
	UserActive    = "active"
	UserSuspended = "suspended"
)

// Plan features.
const (
	FeatureContacts = "contacts"
	FeatureCalendar = "calendar"
	FeatureDrive    = "drive"
)

// Organization is a tenant. Organisations form a tree: a reseller
// (ResellerDepth >= 1) manages its child organisations.
type Organization struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Slug         string `json:"slug"`
	BillingName  string `json:"billing_name"`
	BillingEmail string `json:"billing_email"`
	LogoURL      string `json:"logo_url"`
	MailDomain   string `json:"mail_domain"`
	// RestrictInvitations limits invitations to addresses at MailDomain; off
	// by default (people are invited at the addresses they have).
	RestrictInvitations  bool      `json:"restrict_invitations_to_mail_domain"`
	ParentOrganizationID *string   `json:"parent_organization_id"`
	ResellerDepth        int       `json:"reseller_depth"`
	Status               string    `json:"status"`
	CreatedAt            time.Time `json:"created_at"`
	UpdatedAt            time.Time `json:"updated_at"`
}

// Plan is a product plan: features, storage quota and seat limit.
type Plan struct {
	Slug       string   `json:"slug"`
	Name       string   `json:"name"`
	Features   []string `json:"features"`
	QuotaBytes int64    `json:"quota_bytes"`
	MaxSeats   int      `json:"max_seats"`
}

// Subscription binds an organisation to a plan with a number of seats.
type Subscription struct {
	OrgID    string `json:"organization_id"`
	PlanSlug string `json:"plan_slug"`
	Seats    int    `json:"seats"`
	Status   string `json:"status"`
}

// User is a person in one organisation.
type User struct {
	ID        string    `json:"id"`
	OrgID     string    `json:"organization_id"`
	Email     string    `json:"email"`
	FirstName string    `json:"first_name"`
	LastName  string    `json:"last_name"`
	RoleSlug  string    `json:"role_slug"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// DisplayName is the user's full name, or the e-mail address when there is none.
func (u *User) DisplayName() string {
	n := u.FirstName
	if u.LastName != "" {
		if n != "" {
			n += " "
		}
		n += u.LastName
	}
	if n == "" {
		return u.Email
	}
	return n
}

// Token is a personal access token's record (never its secret).
type Token struct {
	ID        string     `json:"id"`
	UserID    string     `json:"user_id"`
	OrgID     string     `json:"organization_id"`
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	ExpiresAt *time.Time `json:"expires_at"`
	CreatedAt time.Time  `json:"created_at"`
	// LastUsedAt is when the token last authenticated a request (to the minute).
	LastUsedAt *time.Time `json:"last_used_at"`
}

// AppPassword is an app-specific password's record (never its secret).
type AppPassword struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	Label     string    `json:"label"`
	CreatedAt time.Time `json:"created_at"`
	// LastUsedAt is when the app password last authenticated a request (to the minute).
	LastUsedAt *time.Time `json:"last_used_at"`
}

// ServicePrincipal is a non-human client of an organisation, optionally bound to a
// user it acts for.
type ServicePrincipal struct {
	ID        string    `json:"id"`
	OrgID     string    `json:"organization_id"`
	Name      string    `json:"name"`
	Scopes    []string  `json:"scopes"`
	UserID    *string   `json:"user_id"`
	CreatedAt time.Time `json:"created_at"`
}

// SPToken is a service principal token's record (never its secret).
type SPToken struct {
	ID                 string     `json:"id"`
	ServicePrincipalID string     `json:"service_principal_id"`
	Name               string     `json:"name"`
	ExpiresAt          *time.Time `json:"expires_at"`
	CreatedAt          time.Time  `json:"created_at"`
}

// Credential is what a store returns for a presented secret: the owner and state
// needed to build a principal, read in one query.
type Credential struct {
	ID        string
	Kind      string
	Scopes    []string
	ExpiresAt *time.Time
	// Hash is the stored keyed hash, compared in constant time by the service.
	Hash []byte
	// LastUsedAt is when the credential was last used (PATs and app passwords).
	LastUsedAt *time.Time
	// NotBefore: the user's JWTs issued before it are refused (every
	// credential of the user was revoked then); zero: none.
	NotBefore time.Time

	User   *User // nil for an unbound service principal
	Org    Organization
	Plan   Plan
	SPID   string
	SPName string
}

// Store is what the identity service needs from persistence. Methods return an
// *app.Error with code not_found for a missing row and conflict for a unique
// violation; other errors are internal.
type Store interface {
	app.TxRunner

	UpsertPlans(ctx context.Context, plans []Plan) error
	Plan(ctx context.Context, slug string) (Plan, error)
	Plans(ctx context.Context) ([]Plan, error)

	CreateOrg(ctx context.Context, o Organization) error
	Org(ctx context.Context, id string) (Organization, error)
	OrgByName(ctx context.Context, parentID *string, name string) (Organization, error)
	OrgBySlug(ctx context.Context, slug string) (Organization, error)
	SetOrgStatus(ctx context.Context, id, status string) error
	SetUserStatus(ctx context.Context, id, status string) error
	SetSubscription(ctx context.Context, s Subscription) error
	Subscription(ctx context.Context, orgID string) (Subscription, error)

	CreateUser(ctx context.Context, u User, passwordHash string) error
	User(ctx context.Context, id string) (User, error)
	UserByEmail(ctx context.Context, email string) (User, error)
	OrgUsers(ctx context.Context, orgID string, p app.PageRequest) ([]User, error)

	CreateToken(ctx context.Context, t Token, hash []byte) error
	CreateAppPassword(ctx context.Context, a AppPassword, hash []byte) error
	CreateServicePrincipal(ctx context.Context, sp ServicePrincipal) error
	ServicePrincipal(ctx context.Context, orgID, id string) (ServicePrincipal, error)
	ServicePrincipals(ctx context.Context, orgID string, p app.PageRequest) ([]ServicePrincipal, error)
	DeleteServicePrincipal(ctx context.Context, orgID, id string) error
	CreateSPToken(ctx context.Context, t SPToken, hash []byte) error
	SPTokens(ctx context.Context, spID string, p app.PageRequest) ([]SPToken, error)
	// DeleteSPToken deletes a token of a service principal; not_found when the
	// principal has no such token.
	DeleteSPToken(ctx context.Context, spID, id string) error

	// CredentialByHash finds a PAT (kind app.CredPAT) or service principal token
	// (app.CredSPToken) by the keyed hash of its secret.
	CredentialByHash(ctx context.Context, kind string, hash []byte) (Credential, error)
	// AppPasswordCredential finds the app password of the user with e-mail address
	// email whose keyed hash is hash.
	AppPasswordCredential(ctx context.Context, email string, hash []byte) (Credential, error)
	// UserCredential loads the user, organisation and plan of a user id (for JWTs).
	UserCredential(ctx context.Context, userID string) (Credential, error)
	// SPCredential loads a service principal with its organisation and plan.
	SPCredential(ctx context.Context, spID string) (Credential, error)

	// Secret returns the named server secret, creating it with gen when absent.
	Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error)

	// PasswordHash returns a user's account password hash ("" when none is set).
	PasswordHash(ctx context.Context, userID string) (string, error)
	// SetPassword stores a user's account password hash.
	SetPassword(ctx context.Context, userID, hash string) error

	// Tokens lists a user's PATs, newest first, after p.After.
	Tokens(ctx context.Context, userID string, p app.PageRequest) ([]Token, error)
	// DeleteToken removes a PAT of a user (not_found when the user has no such token).
	DeleteToken(ctx context.Context, userID, id string) error
	// AppPasswords lists a user's app passwords, newest first, after p.After.
	AppPasswords(ctx context.Context, userID string, p app.PageRequest) ([]AppPassword, error)
	// DeleteAppPassword removes an app password of a user (not_found when none).
	DeleteAppPassword(ctx context.Context, userID, id string) error
	// TouchCredential records the last use of a PAT (app.CredPAT) or app password
	// (app.CredAppPassword).
	TouchCredential(ctx context.Context, kind, id string, at time.Time) error

	// AddLoginFlow stores a sync client's pending sign-in.
	AddLoginFlow(ctx context.Context, f LoginFlowRecord) error
	// PendingLoginFlow finds a flow not yet approved and unexpired at now by
	// its login token's hash (not_found when none).
	PendingLoginFlow(ctx context.Context, loginHash []byte, now time.Time) (LoginFlowRecord, error)
	// ApproveLoginFlow hands a pending flow unexpired at now its login name
	// and sealed app password; false when there is none.
	ApproveLoginFlow(ctx context.Context, loginHash []byte, loginName string, sealed []byte, now time.Time) (bool, error)
	// DeleteLoginFlow forgets a flow by its login token's hash.
	DeleteLoginFlow(ctx context.Context, loginHash []byte) error
	// TakeLoginFlow removes an approved flow unexpired at now by its poll
	// token's hash and returns its login name and sealed app password, once
	// however many take it at the same time (not_found when none).
	TakeLoginFlow(ctx context.Context, pollHash []byte, now time.Time) (loginName string, sealed []byte, err error)
	// CountLoginFlows counts the flows unexpired at now.
	CountLoginFlows(ctx context.Context, now time.Time) (int, error)
	// PruneLoginFlows deletes the flows expired at now and returns how many.
	PruneLoginFlows(ctx context.Context, now time.Time) (int, error)

	// CreateSession stores a web session by the keyed hash of its token.
	CreateSession(ctx context.Context, s Session, hash []byte) error
	// SessionByHash finds a session by the keyed hash of its token, with its
	// user, organisation and plan (Credential.Hash is the stored hash).
	SessionByHash(ctx context.Context, hash []byte) (Session, Credential, error)
	// TouchSession records a session's last request.
	TouchSession(ctx context.Context, id string, at time.Time) error
	// Sessions lists a user's sessions, newest first, after p.After.
	Sessions(ctx context.Context, userID string, p app.PageRequest) ([]Session, error)
	// DeleteSession removes a session of a user (not_found when none).
	DeleteSession(ctx context.Context, userID, id string) error
	// DeleteUserSessions removes every session of a user but exceptID.
	DeleteUserSessions(ctx context.Context, userID, exceptID string) error
	// ConfirmSession sets a session's AuthenticatedAt.
	ConfirmSession(ctx context.Context, id string, at time.Time) error
	// RevokeUserCredentials deletes a user's app passwords and personal access
	// tokens and sets the user's NotBefore to now (their JWTs issued before
	// are refused); it returns how many app passwords and tokens went.
	RevokeUserCredentials(ctx context.Context, userID string, now time.Time) (appPasswords, tokens int, err error)
	// DeleteOrgSessions removes every session of an organisation's users.
	DeleteOrgSessions(ctx context.Context, orgID string) error
	// PruneSessions removes sessions last seen before idleBefore or expired at now.
	PruneSessions(ctx context.Context, idleBefore, now time.Time) (int, error)

	// TwoFactor returns a user's two-factor record (not_found when none).
	TwoFactor(ctx context.Context, userID string) (TwoFactor, error)
	// SetTwoFactorSecret stores a new, not yet confirmed secret of a user,
	// replacing an unconfirmed one (conflict when two-factor sign-in is on).
	SetTwoFactorSecret(ctx context.Context, userID, secret string, at time.Time) error
	// EnableTwoFactor confirms a user's secret, with step as the last accepted
	// step (not_found when no secret is set up).
	EnableTwoFactor(ctx context.Context, userID string, step int64, at time.Time) error
	// UseTwoFactorStep records step as a user's last accepted step when it is
	// later than the last one; false: it is not (a replayed code).
	UseTwoFactorStep(ctx context.Context, userID string, step int64) (bool, error)
	// DeleteTwoFactor removes a user's secret and recovery codes.
	DeleteTwoFactor(ctx context.Context, userID string) error
	// SetRecoveryCodes replaces a user's recovery codes by these keyed hashes.
	SetRecoveryCodes(ctx context.Context, userID string, hashes [][]byte, at time.Time) error
	// UseRecoveryCode deletes the recovery code of a user with this keyed hash
	// (not_found when there is none).
	UseRecoveryCode(ctx context.Context, userID string, hash []byte) error
	// RecoveryCodesLeft counts a user's unused recovery codes.
	RecoveryCodesLeft(ctx context.Context, userID string) (int, error)

	// CreateSignInChallenge stores the pending second step of a sign-in by the
	// keyed hash of its token, and removes the expired ones.
	CreateSignInChallenge(ctx context.Context, c SignInChallenge, hash []byte) error
	// SignInChallenge finds a pending second step by the keyed hash of its token
	// (not_found when none).
	SignInChallenge(ctx context.Context, hash []byte) (SignInChallenge, error)
	// FailSignInChallenge counts a failed code of a pending step.
	FailSignInChallenge(ctx context.Context, hash []byte) error
	// DeleteSignInChallenge removes a pending step; false: it was already gone
	// (used by another request).
	DeleteSignInChallenge(ctx context.Context, hash []byte) (bool, error)
}
