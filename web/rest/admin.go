package rest

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/partner"
)

// AdminUserPath names a user of the caller's organisation.
type AdminUserPath struct {
	UserID string `path:"user_id" doc:"A user of the caller's organisation (any other answers 404)."`
}

// AdminTeamPath names a team of the caller's organisation.
type AdminTeamPath struct {
	TeamID string `path:"team_id" doc:"A team of the caller's organisation (any other answers 404)."`
}

// AdminUserListQuery filters the user list.
type AdminUserListQuery struct {
	CursorQuery
	Q      string `query:"q" maxLength:"200" doc:"Search: any part of the e-mail address or of the full name (case-insensitive for ASCII letters)."`
	Status string `query:"status" enum:"invited,active,suspended" doc:"Only users in this state."`
}

// AdminStorageQuery is the query of the storage figures.
type AdminStorageQuery struct {
	Limit int `query:"limit" minimum:"1" maximum:"100" default:"10" doc:"How many users to list by name; the others are summed."`
}

// ChangeRole is the body of change-role.
type ChangeRole struct {
	RoleSlug string `json:"role_slug" enum:"admin,member" doc:"The new role."`
}

// OrgSettingsUpdate is the body of PATCH /admin/organization; an absent field
// is unchanged.
type OrgSettingsUpdate struct {
	Name       *string `json:"name,omitempty" doc:"1 to 200 characters."`
	LogoURL    *string `json:"logo_url,omitempty" doc:"An http(s) URL of the logo, or the image itself as a data: URL (data:image/png;base64,… or data:image/jpeg;base64,…) of at most 100 KiB of PNG or JPEG; SVG is not accepted (it can carry scripts). Empty removes the logo."`
	MailDomain *string `json:"mail_domain,omitempty" doc:"The organisation's mail domain (such as example.com); empty for none. By itself it limits nothing: see restrict_invitations_to_mail_domain."`
	// RestrictInvitations turns the limit of invitations to the mail domain
	// on or off.
	RestrictInvitations *bool `json:"restrict_invitations_to_mail_domain,omitempty" doc:"When true, invitations — by the organisation's admins and by its reseller — are only to addresses at exactly the mail domain (not its subdomains); existing users are unaffected. Needs a mail domain (422 otherwise). Default false: any address can be invited."`
}

const adminDoc = "Acts on the caller's own organisation only, with `admin:access`. "

// adminOp is an operation of the own-organisation admin API.
func adminOp(method, path, id, summary, desc string) huma.Operation {
	o := op(method, "/admin"+path, id, summary, "Admin", app.ScopeAdmin)
	o.Description = adminDoc + desc
	return o
}

func registerAdmin(api huma.API, d Deps) {
	as := d.Partner.Admin()
	notFound := http.StatusNotFound
	conflict := http.StatusConflict

	huma.Register(api, status(adminOp(http.MethodGet, "/users", "listAdminUsers", "List the organisation's users and pending invitations",
		"Users by id (oldest first), with `last_sign_in_at` (the last sign-in to the web app) and `last_active_at` (the last request with a web session, a personal access token or an app password)."), http.StatusOK),
		func(ctx context.Context, in *AdminUserListQuery) (*body[app.Page[partner.OrgUser]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "ausers:"+p.OrgID+":"+in.Q+":"+in.Status, in.CursorQuery, func(pr app.PageRequest) ([]partner.OrgUser, error) {
				return as.ListUsers(ctx, p, partner.UserFilter{Q: in.Q, Status: in.Status}, pr)
			}, func(u partner.OrgUser) string { return u.ID })
			return out(pg), err
		})
	huma.Register(api, errs(idempotent(adminOp(http.MethodPost, "/users", "inviteAdminUser", "Invite a person (sends an invitation e-mail)",
		"Creates an invited user and e-mails them a link to `/invite/{token}` (valid 7 days) where they choose a password. An invitation takes a seat: when active users plus pending invitations fill the subscription's seats → 409 `seat_floor`. An address of a user of this organisation → 409 `conflict`; an address of another organisation's user is answered as an invitation is (201), so that nothing is told of other organisations, but nothing is made: its owner is told by e-mail instead; with invitations restricted to the mail domain (`restrict_invitations_to_mail_domain`), an address elsewhere → 422. Emits `organization.user.created`.")), conflict),
		func(ctx context.Context, in *struct{ Body UserCreate }) (*body[partner.OrgUser], error) {
			u, err := as.InviteUser(ctx, principal(ctx), partner.InviteInput(in.Body))
			return out(u), err
		})
	huma.Register(api, errs(status(adminOp(http.MethodGet, "/users/{user_id}", "getAdminUser", "Get a user", ""), http.StatusOK), notFound),
		func(ctx context.Context, in *AdminUserPath) (*body[partner.OrgUser], error) {
			u, err := as.GetUser(ctx, principal(ctx), in.UserID)
			return out(u), err
		})
	huma.Register(api, errs(adminOp(http.MethodDelete, "/users/{user_id}", "deleteAdminUser", "Delete a user and their data",
		"Deletes the user, their credentials, contacts and calendars, and their drive (their files stop counting against the quota). An admin cannot delete themself, nor the organisation's last active admin → 409 `conflict`. Emits `organization.user.deleted`."), notFound, conflict),
		func(ctx context.Context, in *AdminUserPath) (*struct{}, error) {
			return nil, as.DeleteUser(ctx, principal(ctx), in.UserID)
		})
	for _, a := range []struct {
		action        partner.UserAction
		id, sum, desc string
	}{
		{partner.ActionSuspend, "suspendAdminUser", "Suspend a user (active → suspended)",
			"Their web sessions end and every credential of theirs is refused at once; their data is kept and the seat is freed. An admin cannot suspend themself, nor the organisation's last active admin → 409 `conflict`. Already suspended: unchanged. Emits `organization.user.updated`."},
		{partner.ActionActivate, "activateAdminUser", "Activate a suspended user",
			"Takes a seat again: when every seat is used → 409 `seat_floor`. Already active: unchanged. Emits `organization.user.updated`."},
		{partner.ActionResendInvitation, "resendAdminInvitation", "Send the invitation e-mail again (invited users only)",
			"A new link replaces the previous one."},
		{partner.ActionResetPassword, "resetAdminUserPassword", "E-mail a password reset link (active users only)",
			"The link (to `/reset/{token}`, valid 24 hours) lets the user choose a new password; signing in with it ends their other sessions."},
		{partner.ActionResetTwoFactor, "resetAdminUserTwoFactor", "Turn off a user's two-factor sign-in",
			"For a user who lost their authenticator and their recovery codes (active or suspended users): they sign in with their password alone until they set two-factor sign-in up again, and are told so by e-mail. Not on → 409 `conflict`. Audited as `user.two_factor_reset`."},
	} {
		huma.Register(api, errs(status(adminOp(http.MethodPost, "/users/{user_id}/"+string(a.action), a.id, a.sum, a.desc), http.StatusOK), notFound, conflict),
			func(ctx context.Context, in *AdminUserPath) (*body[partner.OrgUser], error) {
				u, err := as.UserAct(ctx, principal(ctx), in.UserID, a.action)
				return out(u), err
			})
	}
	huma.Register(api, errs(status(adminOp(http.MethodPost, "/users/{user_id}/change-role", "changeAdminUserRole", "Make a user an admin or a member",
		"An admin cannot demote themself, nor the organisation's last active admin → 409 `conflict`. The user's tokens narrow or widen at once. Emits `organization.user.updated`."), http.StatusOK), notFound, conflict),
		func(ctx context.Context, in *struct {
			AdminUserPath
			Body ChangeRole
		}) (*body[partner.OrgUser], error) {
			u, err := as.ChangeRole(ctx, principal(ctx), in.UserID, in.Body.RoleSlug)
			return out(u), err
		})

	huma.Register(api, status(adminOp(http.MethodGet, "/teams", "listAdminTeams", "List the organisation's teams", ""), http.StatusOK),
		func(ctx context.Context, in *CursorQuery) (*body[app.Page[partner.Team]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "ateams:"+p.OrgID, *in, func(pr app.PageRequest) ([]partner.Team, error) {
				return as.ListTeams(ctx, p, pr)
			}, func(t partner.Team) string { return t.ID })
			return out(pg), err
		})
	huma.Register(api, errs(idempotent(adminOp(http.MethodPost, "/teams", "createAdminTeam", "Create a team",
		"Team names are unique in the organisation (case-insensitive) → 409 `conflict`.")), conflict),
		func(ctx context.Context, in *struct{ Body TeamBody }) (*body[partner.Team], error) {
			t, err := as.CreateTeam(ctx, principal(ctx), in.Body.Name)
			return out(t), err
		})
	huma.Register(api, errs(status(adminOp(http.MethodGet, "/teams/{team_id}", "getAdminTeam", "Get a team", ""), http.StatusOK), notFound),
		func(ctx context.Context, in *AdminTeamPath) (*body[partner.Team], error) {
			t, err := as.GetTeam(ctx, principal(ctx), in.TeamID)
			return out(t), err
		})
	huma.Register(api, errs(adminOp(http.MethodPatch, "/teams/{team_id}", "renameAdminTeam", "Rename a team", ""), notFound, conflict),
		func(ctx context.Context, in *struct {
			AdminTeamPath
			Body TeamUpdate
		}) (*body[partner.Team], error) {
			t, err := as.RenameTeam(ctx, principal(ctx), in.TeamID, in.Body.Name)
			return out(t), err
		})
	huma.Register(api, errs(adminOp(http.MethodDelete, "/teams/{team_id}", "deleteAdminTeam", "Delete a team (not its users)", ""), notFound),
		func(ctx context.Context, in *AdminTeamPath) (*struct{}, error) {
			return nil, as.DeleteTeam(ctx, principal(ctx), in.TeamID)
		})
	huma.Register(api, errs(status(adminOp(http.MethodGet, "/teams/{team_id}/members", "listAdminTeamMembers", "List a team's members", ""), http.StatusOK), notFound),
		func(ctx context.Context, in *struct {
			AdminTeamPath
			CursorQuery
		}) (*body[app.Page[partner.Member]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "amembers:"+p.OrgID+":"+in.TeamID, in.CursorQuery, func(pr app.PageRequest) ([]partner.Member, error) {
				return as.Members(ctx, p, in.TeamID, pr)
			}, func(m partner.Member) string { return m.UserID })
			return out(pg), err
		})
	huma.Register(api, errs(adminOp(http.MethodPost, "/teams/{team_id}/members", "addAdminTeamMember", "Add a user of the organisation to a team",
		"A user id that is not of the organisation → 422 naming `body.user_id`; already a member → 409 `conflict`."), notFound, conflict),
		func(ctx context.Context, in *struct {
			AdminTeamPath
			Body MemberCreate
		}) (*body[partner.Member], error) {
			m, err := as.AddMember(ctx, principal(ctx), in.TeamID, in.Body.UserID)
			return out(m), err
		})
	huma.Register(api, errs(adminOp(http.MethodDelete, "/teams/{team_id}/members/{user_id}", "removeAdminTeamMember", "Remove a user from a team", ""), notFound),
		func(ctx context.Context, in *struct {
			AdminTeamPath
			AdminUserPath
		}) (*struct{}, error) {
			return nil, as.RemoveMember(ctx, principal(ctx), in.TeamID, in.UserID)
		})

	huma.Register(api, status(adminOp(http.MethodGet, "/organization", "getAdminOrganization", "Get the organisation's settings",
		"The organisation with its plan, seats and user count."), http.StatusOK),
		func(ctx context.Context, _ *struct{}) (*body[partner.Org], error) {
			o, err := as.Organization(ctx, principal(ctx))
			return out(o), err
		})
	huma.Register(api, adminOp(http.MethodPatch, "/organization", "updateAdminOrganization", "Change the organisation's name, logo or mail domain",
		"Billing details, plan and seats are the reseller's (the partner API). An invalid field → 422 naming it; nothing is changed."),
		func(ctx context.Context, in *struct{ Body OrgSettingsUpdate }) (*body[partner.Org], error) {
			o, err := as.UpdateOrganization(ctx, principal(ctx), partner.OrgSettings(in.Body))
			return out(o), err
		})
	huma.Register(api, status(adminOp(http.MethodGet, "/subscription", "getAdminSubscription", "Get the plan, seats and storage in use",
		"Read only: the plan, seats and storage are changed by the reseller."), http.StatusOK),
		func(ctx context.Context, _ *struct{}) (*body[partner.OrgSubscription], error) {
			sub, err := as.Subscription(ctx, principal(ctx))
			return out(sub), err
		})
	huma.Register(api, status(adminOp(http.MethodGet, "/storage", "getAdminStorage", "Storage by user and by kind of file",
		"Read only: what the organisation's drive holds (current versions, older versions and trash), with the `limit` users holding the most, the other users together, and the bytes by kind of file (mime group). The figures are the drive's usage counters, the same that the quota counts."), http.StatusOK),
		func(ctx context.Context, in *AdminStorageQuery) (*body[partner.OrgStorage], error) {
			st, err := as.Storage(ctx, principal(ctx), in.Limit)
			return out(st), err
		})
}
