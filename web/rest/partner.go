package rest

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/identity"
	"atrium/app/partner"
)

// OrgPath names a customer organisation.
type OrgPath struct {
	OrgID string `path:"org_id" doc:"A customer organisation of the caller (any other answers 404)."`
}

// UserPath names a user of a customer organisation.
type UserPath struct {
	OrgPath
	UserID string `path:"user_id"`
}

// TeamPath names a team of a customer organisation.
type TeamPath struct {
	OrgPath
	TeamID string `path:"team_id"`
}

// OrgCreate is the body of POST /partner/orgs.
type OrgCreate struct {
	Name           string `json:"name" minLength:"1" maxLength:"200"`
	Slug           string `json:"slug,omitempty" maxLength:"64" doc:"Lowercase letters, digits and dashes; derived from the name when absent."`
	BillingEmail   string `json:"billing_email,omitempty" doc:"Defaults to admin_email."`
	PlanSlug       string `json:"plan_slug" doc:"A plan published to the reseller."`
	Seats          int    `json:"seats,omitempty" minimum:"0" doc:"Seats of the subscription; default 10 (or the plan's maximum when lower)."`
	AdminEmail     string `json:"admin_email" doc:"The organisation's first admin; receives an invitation e-mail."`
	AdminFirstName string `json:"admin_first_name,omitempty" maxLength:"100"`
	AdminLastName  string `json:"admin_last_name,omitempty" maxLength:"100"`
}

// OrgUpdate is the body of PATCH /partner/orgs/{org_id}.
type OrgUpdate struct {
	Name         *string `json:"name,omitempty"`
	BillingName  *string `json:"billing_name,omitempty"`
	BillingEmail *string `json:"billing_email,omitempty"`
	LogoURL      *string `json:"logo_url,omitempty"`
	MailDomain   *string `json:"mail_domain,omitempty" doc:"The organisation's mail domain (such as example.com); empty for none. It limits invitations only with restrict_invitations_to_mail_domain."`
	// RestrictInvitations: see OrgSettingsUpdate.
	RestrictInvitations *bool `json:"restrict_invitations_to_mail_domain,omitempty" doc:"When true, invitations (by the organisation's admins and by its reseller) are only to addresses at exactly the mail domain (not its subdomains); existing users are unaffected. Needs a mail domain. Default false: any address can be invited."`
}

// UserCreate is the body of an invitation.
type UserCreate struct {
	Email     string `json:"email"`
	FirstName string `json:"first_name,omitempty" maxLength:"100"`
	LastName  string `json:"last_name,omitempty" maxLength:"100"`
	RoleSlug  string `json:"role_slug,omitempty" enum:"admin,member" doc:"Default member."`
}

// UserUpdate is the body of PATCH on a user.
type UserUpdate struct {
	FirstName *string `json:"first_name,omitempty"`
	LastName  *string `json:"last_name,omitempty"`
	RoleSlug  *string `json:"role_slug,omitempty" enum:"admin,member"`
}

// TeamBody names a team.
type TeamBody struct {
	Name string `json:"name" minLength:"1" maxLength:"100"`
}

// TeamUpdate renames a team.
type TeamUpdate struct {
	Name *string `json:"name,omitempty" maxLength:"100"`
}

// MemberCreate adds a user to a team.
type MemberCreate struct {
	UserID string `json:"user_id"`
}

// ChangePlan is the body of change-plan.
type ChangePlan struct {
	PlanSlug string `json:"plan_slug"`
}

// ChangeSeats is the body of change-seats.
type ChangeSeats struct {
	Seats int `json:"seats" minimum:"1"`
}

// OrgListQuery filters the organisation list.
type OrgListQuery struct {
	CursorQuery
	Q      string `query:"q" maxLength:"200" doc:"Name search (any part of the name)."`
	Status string `query:"status" enum:"active,suspended"`
}

// InvitationAccept is the body of accepting an invitation or a password reset.
type InvitationAccept struct {
	Password string `json:"password" minLength:"10" maxLength:"1024" doc:"The new account password (at least 10 characters)."`
	// RevokeCredentials: see the doc.
	RevokeCredentials bool `json:"revoke_credentials,omitempty" doc:"Password resets only: also revoke every app password and personal access token of the account, and refuse its JWTs issued before (for an account that may be compromised). Default false: they keep working; web sessions end either way."`
}

// partnerOp is an operation of the partner API: resellers only, 404 for
// organisations that are not the caller's children.
func partnerOp(method, path, id, summary, scope string) huma.Operation {
	o := op(method, "/partner"+path, id, summary, "Partner", scope)
	o.Errors = append(o.Errors, http.StatusNotFound)
	return o
}

func registerPartner(api huma.API, d Deps) {
	ps := d.Partner
	huma.Register(api, partnerOp(http.MethodGet, "/orgs", "listPartnerOrgs", "List customer organisations", app.ScopePartnerOrgsRead),
		func(ctx context.Context, in *OrgListQuery) (*body[app.Page[partner.Org]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "porgs:"+p.OrgID+":"+in.Q+":"+in.Status, in.CursorQuery, func(pr app.PageRequest) ([]partner.Org, error) {
				return ps.ListOrgs(ctx, p, partner.OrgFilter{Q: in.Q, Status: in.Status}, pr)
			}, func(o partner.Org) string { return o.ID })
			return out(pg), err
		})
	huma.Register(api, errs(idempotent(partnerOp(http.MethodPost, "/orgs", "createPartnerOrg", "Provision a customer organisation", app.ScopePartnerOrgsWrite)), http.StatusConflict),
		func(ctx context.Context, in *struct{ Body OrgCreate }) (*body[partner.Org], error) {
			o, err := ps.CreateOrg(ctx, principal(ctx), partner.CreateOrgInput(in.Body))
			return out(o), err
		})
	huma.Register(api, partnerOp(http.MethodGet, "/orgs/{org_id}", "getPartnerOrg", "Get a customer organisation", app.ScopePartnerOrgsRead),
		func(ctx context.Context, in *OrgPath) (*body[partner.Org], error) {
			o, err := ps.GetOrg(ctx, principal(ctx), in.OrgID)
			return out(o), err
		})
	huma.Register(api, partnerOp(http.MethodPatch, "/orgs/{org_id}", "updatePartnerOrg", "Update a customer organisation", app.ScopePartnerOrgsWrite),
		func(ctx context.Context, in *struct {
			OrgPath
			Body OrgUpdate
		}) (*body[partner.Org], error) {
			o, err := ps.UpdateOrg(ctx, principal(ctx), in.OrgID, partner.UpdateOrgInput(in.Body))
			return out(o), err
		})
	for _, st := range []struct{ action, status string }{{"suspend", identity.OrgSuspended}, {"activate", identity.OrgActive}} {
		huma.Register(api, status(partnerOp(http.MethodPost, "/orgs/{org_id}/"+st.action, st.action+"PartnerOrg",
			map[string]string{"suspend": "Suspend a customer organisation (its users cannot log in; data kept)", "activate": "Activate a suspended customer organisation"}[st.action],
			app.ScopePartnerOrgsManage), http.StatusOK),
			func(ctx context.Context, in *OrgPath) (*body[partner.Org], error) {
				o, err := ps.SetOrgStatus(ctx, principal(ctx), in.OrgID, st.status)
				return out(o), err
			})
	}

	huma.Register(api, partnerOp(http.MethodGet, "/orgs/{org_id}/users", "listPartnerUsers", "List users and pending invitations", app.ScopePartnerUsersRead),
		func(ctx context.Context, in *struct {
			OrgPath
			CursorQuery
		}) (*body[app.Page[identity.User]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "pusers:"+in.OrgID, in.CursorQuery, func(pr app.PageRequest) ([]identity.User, error) {
				return ps.ListUsers(ctx, p, in.OrgID, pr)
			}, func(u identity.User) string { return u.ID })
			return out(pg), err
		})
	huma.Register(api, errs(idempotent(partnerOp(http.MethodPost, "/orgs/{org_id}/users", "invitePartnerUser", "Invite a user (sends an invitation e-mail)", app.ScopePartnerUsersWrite)), http.StatusConflict),
		func(ctx context.Context, in *struct {
			OrgPath
			Body UserCreate
		}) (*body[identity.User], error) {
			u, err := ps.InviteUser(ctx, principal(ctx), in.OrgID, partner.InviteInput(in.Body))
			return out(u), err
		})
	huma.Register(api, partnerOp(http.MethodGet, "/orgs/{org_id}/users/{user_id}", "getPartnerUser", "Get a user", app.ScopePartnerUsersRead),
		func(ctx context.Context, in *UserPath) (*body[identity.User], error) {
			u, err := ps.GetUser(ctx, principal(ctx), in.OrgID, in.UserID)
			return out(u), err
		})
	huma.Register(api, partnerOp(http.MethodPatch, "/orgs/{org_id}/users/{user_id}", "updatePartnerUser", "Update a user", app.ScopePartnerUsersWrite),
		func(ctx context.Context, in *struct {
			UserPath
			Body UserUpdate
		}) (*body[identity.User], error) {
			u, err := ps.UpdateUser(ctx, principal(ctx), in.OrgID, in.UserID, partner.UpdateUserInput(in.Body))
			return out(u), err
		})
	huma.Register(api, partnerOp(http.MethodDelete, "/orgs/{org_id}/users/{user_id}", "deletePartnerUser", "Delete a user", app.ScopePartnerUsersManage),
		func(ctx context.Context, in *UserPath) (*struct{}, error) {
			return nil, ps.DeleteUser(ctx, principal(ctx), in.OrgID, in.UserID)
		})
	for _, a := range []struct {
		action  partner.UserAction
		id, sum string
	}{
		{partner.ActionSuspend, "suspendPartnerUser", "Suspend a user (active → suspended)"},
		{partner.ActionActivate, "activatePartnerUser", "Activate a suspended user"},
		{partner.ActionResendInvitation, "resendPartnerInvitation", "Send the invitation e-mail again (invited users only)"},
		{partner.ActionResetPassword, "resetPartnerUserPassword", "E-mail a password reset link (active users only)"},
	} {
		huma.Register(api, errs(status(partnerOp(http.MethodPost, "/orgs/{org_id}/users/{user_id}/"+string(a.action), a.id, a.sum, app.ScopePartnerUsersManage), http.StatusOK), http.StatusConflict),
			func(ctx context.Context, in *UserPath) (*body[identity.User], error) {
				u, err := ps.UserAct(ctx, principal(ctx), in.OrgID, in.UserID, a.action)
				return out(u), err
			})
	}

	huma.Register(api, partnerOp(http.MethodGet, "/orgs/{org_id}/teams", "listPartnerTeams", "List teams", app.ScopePartnerTeamsRead),
		func(ctx context.Context, in *struct {
			OrgPath
			CursorQuery
		}) (*body[app.Page[partner.Team]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "pteams:"+in.OrgID, in.CursorQuery, func(pr app.PageRequest) ([]partner.Team, error) {
				return ps.ListTeams(ctx, p, in.OrgID, pr)
			}, func(t partner.Team) string { return t.ID })
			return out(pg), err
		})
	huma.Register(api, errs(idempotent(partnerOp(http.MethodPost, "/orgs/{org_id}/teams", "createPartnerTeam", "Create a team", app.ScopePartnerTeamsWrite)), http.StatusConflict),
		func(ctx context.Context, in *struct {
			OrgPath
			Body TeamBody
		}) (*body[partner.Team], error) {
			t, err := ps.CreateTeam(ctx, principal(ctx), in.OrgID, in.Body.Name)
			return out(t), err
		})
	huma.Register(api, partnerOp(http.MethodGet, "/orgs/{org_id}/teams/{team_id}", "getPartnerTeam", "Get a team", app.ScopePartnerTeamsRead),
		func(ctx context.Context, in *TeamPath) (*body[partner.Team], error) {
			t, err := ps.GetTeam(ctx, principal(ctx), in.OrgID, in.TeamID)
			return out(t), err
		})
	huma.Register(api, errs(partnerOp(http.MethodPatch, "/orgs/{org_id}/teams/{team_id}", "updatePartnerTeam", "Rename a team", app.ScopePartnerTeamsWrite), http.StatusConflict),
		func(ctx context.Context, in *struct {
			TeamPath
			Body TeamUpdate
		}) (*body[partner.Team], error) {
			t, err := ps.RenameTeam(ctx, principal(ctx), in.OrgID, in.TeamID, in.Body.Name)
			return out(t), err
		})
	huma.Register(api, partnerOp(http.MethodDelete, "/orgs/{org_id}/teams/{team_id}", "deletePartnerTeam", "Delete a team", app.ScopePartnerTeamsManage),
		func(ctx context.Context, in *TeamPath) (*struct{}, error) {
			return nil, ps.DeleteTeam(ctx, principal(ctx), in.OrgID, in.TeamID)
		})
	huma.Register(api, partnerOp(http.MethodGet, "/orgs/{org_id}/teams/{team_id}/members", "listPartnerTeamMembers", "List a team's members", app.ScopePartnerTeamsRead),
		func(ctx context.Context, in *struct {
			TeamPath
			CursorQuery
		}) (*body[app.Page[partner.Member]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "pmembers:"+in.TeamID, in.CursorQuery, func(pr app.PageRequest) ([]partner.Member, error) {
				return ps.Members(ctx, p, in.OrgID, in.TeamID, pr)
			}, func(m partner.Member) string { return m.UserID })
			return out(pg), err
		})
	huma.Register(api, errs(partnerOp(http.MethodPost, "/orgs/{org_id}/teams/{team_id}/members", "addPartnerTeamMember", "Add a user of the organisation to a team", app.ScopePartnerTeamsWrite), http.StatusConflict),
		func(ctx context.Context, in *struct {
			TeamPath
			Body MemberCreate
		}) (*body[partner.Member], error) {
			m, err := ps.AddMember(ctx, principal(ctx), in.OrgID, in.TeamID, in.Body.UserID)
			return out(m), err
		})
	huma.Register(api, partnerOp(http.MethodDelete, "/orgs/{org_id}/teams/{team_id}/members/{user_id}", "removePartnerTeamMember", "Remove a user from a team", app.ScopePartnerTeamsManage),
		func(ctx context.Context, in *struct {
			TeamPath
			UserID string `path:"user_id"`
		}) (*struct{}, error) {
			return nil, ps.RemoveMember(ctx, principal(ctx), in.OrgID, in.TeamID, in.UserID)
		})

	huma.Register(api, partnerOp(http.MethodGet, "/plans", "listPartnerPlans", "List the plans published to the reseller", app.ScopePartnerPlansRead),
		func(ctx context.Context, in *CursorQuery) (*body[app.Page[identity.Plan]], error) {
			p := principal(ctx)
			pg, err := page(d.Cursors, "pplans:"+p.OrgID, *in, func(pr app.PageRequest) ([]identity.Plan, error) {
				return ps.Plans(ctx, p, pr)
			}, func(pl identity.Plan) string { return pl.Slug })
			return out(pg), err
		})
	huma.Register(api, partnerOp(http.MethodGet, "/orgs/{org_id}/subscription", "getPartnerSubscription", "Get the subscription", app.ScopePartnerBillingRead),
		func(ctx context.Context, in *OrgPath) (*body[partner.OrgSubscription], error) {
			sub, err := ps.Subscription(ctx, principal(ctx), in.OrgID)
			return out(sub), err
		})
	huma.Register(api, status(partnerOp(http.MethodPost, "/orgs/{org_id}/subscription/change-plan", "changePartnerPlan", "Change the plan", app.ScopePartnerPlansWrite), http.StatusOK),
		func(ctx context.Context, in *struct {
			OrgPath
			Body ChangePlan
		}) (*body[partner.OrgSubscription], error) {
			sub, err := ps.ChangePlan(ctx, principal(ctx), in.OrgID, in.Body.PlanSlug)
			return out(sub), err
		})
	huma.Register(api, errs(status(partnerOp(http.MethodPost, "/orgs/{org_id}/subscription/change-seats", "changePartnerSeats", "Change the seat count (never below active users plus pending invitations)", app.ScopePartnerPlansWrite), http.StatusOK), http.StatusConflict),
		func(ctx context.Context, in *struct {
			OrgPath
			Body ChangeSeats
		}) (*body[partner.OrgSubscription], error) {
			sub, err := ps.ChangeSeats(ctx, principal(ctx), in.OrgID, in.Body.Seats)
			return out(sub), err
		})

	// Invitation acceptance and password reset: the e-mailed token is the credential.
	for _, k := range []struct{ path, id, sum string }{
		{"/invitations/{token}/accept", "acceptInvitation", "Accept an invitation and set a password"},
		{"/password-resets/{token}/accept", "acceptPasswordReset", "Set a new password with a reset link's token"},
	} {
		o := status(op(http.MethodPost, k.path, k.id, k.sum, "Identity"), http.StatusOK)
		o.Security = nil
		o.Metadata[MetaPublic] = true
		o.Metadata[MetaLinkToken] = true
		invite := k.id == "acceptInvitation"
		o.Errors = []int{http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusServiceUnavailable}
		if invite { // an invitation already accepted
			o.Errors = append(o.Errors, http.StatusConflict)
		}
		huma.Register(api, o, func(ctx context.Context, in *struct {
			Token string `path:"token"`
			Body  InvitationAccept
		}) (*body[identity.User], error) {
			var u identity.User
			var err error
			if invite {
				u, err = ps.AcceptInvitation(ctx, in.Token, in.Body.Password)
			} else {
				u, err = ps.ResetPassword(ctx, in.Token, in.Body.Password, in.Body.RevokeCredentials)
			}
			return out(u), err
		})
	}
}
