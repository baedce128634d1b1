package partner

import (
	"context"
	"strings"

	"atrium/app"
	"atrium/app/identity"
)

// Admin is the door of an organisation's own admins onto the rules of this
// package: the same invitations, seat floor, user states, deletion, teams and
// organisation profile as the partner API, applied to the caller's own
// organisation (never another), with the admin:access scope. On top of them,
// an admin cannot suspend, demote or delete themself, and the organisation's
// last active admin cannot be suspended, demoted or deleted.
type Admin struct{ s *Service }

// Admin returns the own-organisation door of the service. Errors: none of its
// own.
func (s *Service) Admin() *Admin { return &Admin{s: s} }

// own returns the caller's organisation with its plan and seats.
func (a *Admin) own(ctx context.Context, p *app.Principal) (Org, error) {
	if p == nil {
		return Org{}, app.Errorf(app.EUnauthorized, "Authentication is required.")
	}
	if err := p.Require(app.ScopeAdmin); err != nil {
		return Org{}, err
	}
	return a.s.store.OrgWithSeats(ctx, p.OrgID)
}

// loss refuses the caller's own loss of admin rights and the loss of the
// organisation's last active admin.
func (a *Admin) loss(p *app.Principal) adminLoss {
	return func(ctx context.Context, u identity.User, verb string) error {
		if u.ID == p.UserID {
			return app.Errorf(app.EConflict, "You cannot %s yourself: another admin of the organisation must do it.", verb)
		}
		n, err := a.s.store.ActiveAdmins(ctx, u.OrgID)
		if err != nil {
			return err
		}
		if n <= 1 {
			return app.Errorf(app.EConflict, "Cannot %s %s: they are the organisation's last active admin; make another user admin first.", verb, u.Email)
		}
		return nil
	}
}

// user returns a user of the caller's organisation with their activity.
func (a *Admin) user(ctx context.Context, orgID, userID string) (OrgUser, error) {
	u, err := a.s.store.OrgUser(ctx, orgID, userID)
	if app.ErrorCode(err) == app.ENotFound {
		return OrgUser{}, app.Errorf(app.ENotFound, "No user %s in the organisation.", userID)
	}
	return u, err
}

// ListUsers lists the organisation's users (active, suspended and invited),
// filtered by q (any part of the e-mail address or full name) and status.
// Errors: insufficient_scope (no admin:access), validation_failed (the status
// or q).
func (a *Admin) ListUsers(ctx context.Context, p *app.Principal, f UserFilter, pr app.PageRequest) ([]OrgUser, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return nil, err
	}
	switch f.Status {
	case "", identity.UserInvited, identity.UserActive, identity.UserSuspended:
	default:
		return nil, app.Invalid("query.status", "must be invited, active or suspended", f.Status)
	}
	f.Q = strings.TrimSpace(f.Q)
	if len(f.Q) > 200 {
		return nil, app.Invalid("query.q", "must be at most 200 characters", f.Q)
	}
	return a.s.store.FindOrgUsers(ctx, o.ID, f, pr)
}

// GetUser returns a user of the organisation. Errors: insufficient_scope (no
// admin:access), not_found (no such user in the organisation).
func (a *Admin) GetUser(ctx context.Context, p *app.Principal, userID string) (OrgUser, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return OrgUser{}, err
	}
	return a.user(ctx, o.ID, userID)
}

// InviteUser invites a person into the organisation by e-mail (the partner
// API's invitation: a seat is taken, seat_floor when none is free). Errors:
// insufficient_scope (no admin:access), validation_failed (the e-mail address,
// one outside a restricting mail domain, the role, a name), conflict (the
// address is a user's of the organisation), seat_floor (no free seat).
func (a *Admin) InviteUser(ctx context.Context, p *app.Principal, in InviteInput) (OrgUser, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return OrgUser{}, err
	}
	u, err := a.s.inviteUser(ctx, p, o, in)
	return OrgUser{User: u}, err
}

// UserAct suspends, activates, resends the invitation of or sends a password
// reset to a user of the organisation. Errors: insufficient_scope (no
// admin:access), not_found (no such user in the organisation, an unknown
// action), conflict (a user not in the state the action needs, suspending
// oneself or the last active admin, no two-factor sign-in to reset), seat_floor
// (activating without a free seat).
func (a *Admin) UserAct(ctx context.Context, p *app.Principal, userID string, action UserAction) (OrgUser, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return OrgUser{}, err
	}
	if _, err := a.s.userAct(ctx, p, o, userID, action, a.loss(p)); err != nil {
		return OrgUser{}, err
	}
	return a.user(ctx, o.ID, userID)
}

// ChangeRole makes a user of the organisation an admin or a member. Errors:
// insufficient_scope (no admin:access), not_found (no such user in the
// organisation), validation_failed (a role neither admin nor member), conflict
// (demoting oneself or the last active admin).
func (a *Admin) ChangeRole(ctx context.Context, p *app.Principal, userID, role string) (OrgUser, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return OrgUser{}, err
	}
	if _, err := a.s.updateUser(ctx, p, o, userID, UpdateUserInput{RoleSlug: &role}, a.loss(p)); err != nil {
		return OrgUser{}, err
	}
	return a.user(ctx, o.ID, userID)
}

// DeleteUser deletes a user of the organisation with their data. Errors:
// insufficient_scope (no admin:access), not_found (no such user in the
// organisation), conflict (deleting oneself or the last active admin).
func (a *Admin) DeleteUser(ctx context.Context, p *app.Principal, userID string) error {
	o, err := a.own(ctx, p)
	if err != nil {
		return err
	}
	return a.s.deleteUser(ctx, p, o, userID, a.loss(p))
}

// ListTeams lists the organisation's teams. Errors: insufficient_scope (no
// admin:access).
func (a *Admin) ListTeams(ctx context.Context, p *app.Principal, pr app.PageRequest) ([]Team, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return nil, err
	}
	return a.s.store.Teams(ctx, o.ID, pr)
}

// GetTeam returns a team of the organisation. Errors: insufficient_scope (no
// admin:access), not_found (no such team in the organisation).
func (a *Admin) GetTeam(ctx context.Context, p *app.Principal, teamID string) (Team, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return Team{}, err
	}
	return a.s.store.Team(ctx, o.ID, teamID)
}

// CreateTeam makes a team in the organisation. Errors: insufficient_scope (no
// admin:access), validation_failed (the name), conflict (a team of that name
// exists).
func (a *Admin) CreateTeam(ctx context.Context, p *app.Principal, name string) (Team, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return Team{}, err
	}
	return a.s.createTeam(ctx, p, o.ID, name)
}

// RenameTeam renames a team of the organisation. Errors: insufficient_scope (no
// admin:access), not_found (no such team in the organisation),
// validation_failed (the name), conflict (a team of that name exists).
func (a *Admin) RenameTeam(ctx context.Context, p *app.Principal, teamID string, name *string) (Team, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return Team{}, err
	}
	return a.s.renameTeam(ctx, p, o.ID, teamID, name)
}

// DeleteTeam deletes a team of the organisation (not its users). Errors:
// insufficient_scope (no admin:access), not_found (no such team in the
// organisation).
func (a *Admin) DeleteTeam(ctx context.Context, p *app.Principal, teamID string) error {
	o, err := a.own(ctx, p)
	if err != nil {
		return err
	}
	return a.s.deleteTeam(ctx, p, o.ID, teamID)
}

// Members lists a team's members. Errors: insufficient_scope (no admin:access),
// not_found (no such team in the organisation).
func (a *Admin) Members(ctx context.Context, p *app.Principal, teamID string, pr app.PageRequest) ([]Member, error) {
	if _, err := a.GetTeam(ctx, p, teamID); err != nil {
		return nil, err
	}
	return a.s.store.Members(ctx, teamID, pr)
}

// AddMember adds a user of the organisation to one of its teams. Errors:
// insufficient_scope (no admin:access), not_found (no such team in the
// organisation), validation_failed (no such user in the organisation), conflict
// (a member already).
func (a *Admin) AddMember(ctx context.Context, p *app.Principal, teamID, userID string) (Member, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return Member{}, err
	}
	return a.s.addMember(ctx, p, o.ID, teamID, userID)
}

// RemoveMember removes a user from a team of the organisation. Errors:
// insufficient_scope (no admin:access), not_found (no such team in the
// organisation, a user not a member of it).
func (a *Admin) RemoveMember(ctx context.Context, p *app.Principal, teamID, userID string) error {
	o, err := a.own(ctx, p)
	if err != nil {
		return err
	}
	return a.s.removeMember(ctx, p, o.ID, teamID, userID)
}

// Organization returns the caller's organisation with its plan, seats and
// user count. Errors: insufficient_scope (no admin:access).
func (a *Admin) Organization(ctx context.Context, p *app.Principal) (Org, error) {
	return a.own(ctx, p)
}

// OrgSettings are the organisation settings its own admins change; nil means
// unchanged. The billing fields, plan and seats stay with the reseller.
type OrgSettings struct {
	Name, LogoURL, MailDomain *string
	RestrictInvitations       *bool
}

// UpdateOrganization changes the organisation's name, logo and mail domain
// (the partner API's rules for these fields). Errors: insufficient_scope (no
// admin:access), validation_failed (a field).
func (a *Admin) UpdateOrganization(ctx context.Context, p *app.Principal, in OrgSettings) (Org, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return Org{}, err
	}
	changed, err := a.s.updateOrg(ctx, p, o, UpdateOrgInput{Name: in.Name, LogoURL: in.LogoURL, MailDomain: in.MailDomain, RestrictInvitations: in.RestrictInvitations})
	if err != nil || !changed {
		return o, err
	}
	return a.s.store.OrgWithSeats(ctx, o.ID)
}

// Subscription returns the organisation's plan, seats and their use, quota and
// storage used (read only: changes are the reseller's). Errors:
// insufficient_scope (no admin:access).
func (a *Admin) Subscription(ctx context.Context, p *app.Principal) (OrgSubscription, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return OrgSubscription{}, err
	}
	return a.s.subscription(ctx, o.ID)
}
