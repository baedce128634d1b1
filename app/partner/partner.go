// Package partner holds the rules of the partner (reseller) API: a reseller
// organisation runs its customer organisations — their users, teams, plans and
// seats.
package partner

import (
	"context"
	"time"

	"atrium/app"
	"atrium/app/identity"
)

// Webhook event types emitted by partner user operations (spec §6).
const (
	EventUserCreated = "organization.user.created"
	EventUserUpdated = "organization.user.updated"
	EventUserDeleted = "organization.user.deleted"
)

// Token lifetimes of e-mailed links.
const (
	InvitationTTL    = 7 * 24 * time.Hour
	PasswordResetTTL = 24 * time.Hour
)

// Org is an organisation as a reseller sees it (OrgSummary and organisation).
type Org struct {
	identity.Organization
	PlanSlug  string `json:"plan_slug"`
	Seats     int    `json:"seats"`
	UserCount int    `json:"user_count"`
}

// Team is a group of users in an organisation.
type Team struct {
	ID          string    `json:"id"`
	OrgID       string    `json:"organization_id"`
	Name        string    `json:"name"`
	MemberCount int       `json:"member_count"`
	CreatedAt   time.Time `json:"created_at"`
}

// Member is a user in a team.
type Member struct {
	UserID    string    `json:"user_id"`
	Email     string    `json:"email"`
	FirstName string    `json:"first_name"`
	LastName  string    `json:"last_name"`
	AddedAt   time.Time `json:"added_at"`
}

// OrgSubscription is an organisation's plan and seats with their use.
type OrgSubscription struct {
	PlanSlug         string `json:"plan_slug"`
	Seats            int    `json:"seats"`
	UsedSeats        int    `json:"used_seats" doc:"Active users plus pending invitations."`
	Status           string `json:"status"`
	QuotaBytes       int64  `json:"quota_bytes" doc:"The plan's storage quota of the whole organisation."`
	StorageUsedBytes int64  `json:"storage_used_bytes" doc:"Bytes the organisation's drive holds (current versions, older versions and trash)."`
}

// OrgUser is a user as the organisation's own admins see it: the user with
// when they last signed in and were last active.
type OrgUser struct {
	identity.User
	LastSignInAt *time.Time `json:"last_sign_in_at" doc:"The user's last sign-in to the web app; null if they never signed in."`
	LastActiveAt *time.Time `json:"last_active_at" doc:"The user's last request with a web session, an access token or an app password (to the minute); null if none is known. Ended sessions and deleted credentials no longer count."`
	TwoFactor    bool       `json:"two_factor" doc:"The user signs in to the web app with a second step (an authenticator code or a recovery code)."`
}

// UserFilter narrows the user list of an organisation.
type UserFilter struct {
	// Q matches any part of the e-mail address or the full name.
	Q string
	// Status is invited, active or suspended; empty for all.
	Status string
}

// OrgFilter narrows the organisation list.
type OrgFilter struct {
	Q      string
	Status string
}

// UserToken is a single-use e-mailed token (invitation or password reset).
type UserToken struct {
	ID        string
	UserID    string
	Kind      string
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// Store is what the partner service needs beyond identity.Store. Missing rows are
// not_found, unique violations conflict.
type Store interface {
	identity.Store

	ChildOrgs(ctx context.Context, parentID string, f OrgFilter, p app.PageRequest) ([]Org, error)
	ChildOrg(ctx context.Context, parentID, id string) (Org, error)
	// OrgWithSeats returns any organisation with its plan, seats and user count.
	OrgWithSeats(ctx context.Context, id string) (Org, error)
	UpdateOrg(ctx context.Context, o identity.Organization) error

	UpdateUser(ctx context.Context, u identity.User) error
	DeleteUser(ctx context.Context, id string) error
	// SeatsUsed counts active and invited users of an organisation.
	SeatsUsed(ctx context.Context, orgID string) (int, error)
	// ActiveAdmins counts the active users of an organisation with the admin role.
	ActiveAdmins(ctx context.Context, orgID string) (int, error)
	// FindOrgUsers lists an organisation's users with their activity, by id.
	FindOrgUsers(ctx context.Context, orgID string, f UserFilter, p app.PageRequest) ([]OrgUser, error)
	// OrgUser returns a user of an organisation with their activity; a user of
	// another organisation is not_found.
	OrgUser(ctx context.Context, orgID, id string) (OrgUser, error)
	// StorageUsed returns the bytes an organisation's drive holds.
	StorageUsed(ctx context.Context, orgID string) (int64, error)
	// StorageByOwner returns the bytes and files each owner holds in an
	// organisation's drive (owners holding nothing left out), most bytes first.
	StorageByOwner(ctx context.Context, orgID string) ([]UserStorage, error)
	// StorageByType returns the bytes and files of an organisation's drive by
	// mime group (groups holding nothing left out), most bytes first.
	StorageByType(ctx context.Context, orgID string) ([]TypeStorage, error)

	CreateUserToken(ctx context.Context, t UserToken, hash []byte) error
	// UseUserToken marks the unused, unexpired token of kind with hash used and
	// returns it; anything else is not_found.
	UseUserToken(ctx context.Context, kind string, hash []byte, now time.Time) (UserToken, error)
	// LiveUserToken returns the unused, unexpired token of kind with hash
	// without using it (not_found otherwise).
	LiveUserToken(ctx context.Context, kind string, hash []byte, now time.Time) (UserToken, error)
	// RevokeUserTokens marks every unused token of kind of a user used.
	RevokeUserTokens(ctx context.Context, userID, kind string, now time.Time) error

	Teams(ctx context.Context, orgID string, p app.PageRequest) ([]Team, error)
	Team(ctx context.Context, orgID, id string) (Team, error)
	CreateTeam(ctx context.Context, t Team) error
	UpdateTeam(ctx context.Context, t Team) error
	DeleteTeam(ctx context.Context, orgID, id string) error
	Members(ctx context.Context, teamID string, p app.PageRequest) ([]Member, error)
	// OrgMembers lists the members of every team of an organisation, by team
	// id, each team's by user id.
	OrgMembers(ctx context.Context, orgID string) (map[string][]Member, error)
	AddMember(ctx context.Context, teamID, userID string, at time.Time) error
	RemoveMember(ctx context.Context, teamID, userID string) error

	// PublishedPlans lists the plans offered to resellers.
	PublishedPlans(ctx context.Context, p app.PageRequest) ([]identity.Plan, error)
}
