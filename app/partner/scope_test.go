package partner_test

import (
	"context"
	"testing"

	"atrium/app"
	"atrium/app/partner"
)

// TestServiceScopes: the service itself refuses a caller whose credential
// lacks an operation's scope (insufficient_scope, nothing changed), whatever
// the door, and accepts one that holds that scope alone (it answers for the
// operation, here mostly not_found for the unknown user and team).
func TestServiceScopes(t *testing.T) {
	t.Parallel()
	svc, admin, _ := world(t)
	ctx := context.Background()
	org, err := svc.CreateOrg(ctx, admin, partner.CreateOrgInput{Name: "Customer", PlanSlug: "business", AdminEmail: "admin@customer.test"})
	if err != nil {
		t.Fatal(err)
	}
	const nobody = "00000000-0000-7000-8000-000000000000"
	name := "Renamed"
	cases := []struct {
		op    string
		scope string
		call  func(p *app.Principal) error
	}{
		{"ListOrgs", app.ScopePartnerOrgsRead, func(p *app.Principal) error {
			_, err := svc.ListOrgs(ctx, p, partner.OrgFilter{}, app.PageRequest{Limit: 10})
			return err
		}},
		{"GetOrg", app.ScopePartnerOrgsRead, func(p *app.Principal) error { _, err := svc.GetOrg(ctx, p, org.ID); return err }},
		{"CreateOrg", app.ScopePartnerOrgsWrite, func(p *app.Principal) error {
			_, err := svc.CreateOrg(ctx, p, partner.CreateOrgInput{Name: "Another", PlanSlug: "business", AdminEmail: "admin@another.test"})
			return err
		}},
		{"UpdateOrg", app.ScopePartnerOrgsWrite, func(p *app.Principal) error {
			_, err := svc.UpdateOrg(ctx, p, org.ID, partner.UpdateOrgInput{Name: &name})
			return err
		}},
		{"SetOrgStatus", app.ScopePartnerOrgsManage, func(p *app.Principal) error {
			_, err := svc.SetOrgStatus(ctx, p, org.ID, "active")
			return err
		}},
		{"ListUsers", app.ScopePartnerUsersRead, func(p *app.Principal) error {
			_, err := svc.ListUsers(ctx, p, org.ID, app.PageRequest{Limit: 10})
			return err
		}},
		{"GetUser", app.ScopePartnerUsersRead, func(p *app.Principal) error { _, err := svc.GetUser(ctx, p, org.ID, nobody); return err }},
		{"InviteUser", app.ScopePartnerUsersWrite, func(p *app.Principal) error {
			_, err := svc.InviteUser(ctx, p, org.ID, partner.InviteInput{Email: "new@customer.test", RoleSlug: app.RoleMember})
			return err
		}},
		{"UpdateUser", app.ScopePartnerUsersWrite, func(p *app.Principal) error {
			_, err := svc.UpdateUser(ctx, p, org.ID, nobody, partner.UpdateUserInput{})
			return err
		}},
		{"DeleteUser", app.ScopePartnerUsersManage, func(p *app.Principal) error { return svc.DeleteUser(ctx, p, org.ID, nobody) }},
		{"UserAct", app.ScopePartnerUsersManage, func(p *app.Principal) error {
			_, err := svc.UserAct(ctx, p, org.ID, nobody, partner.ActionSuspend)
			return err
		}},
		{"ListTeams", app.ScopePartnerTeamsRead, func(p *app.Principal) error {
			_, err := svc.ListTeams(ctx, p, org.ID, app.PageRequest{Limit: 10})
			return err
		}},
		{"GetTeam", app.ScopePartnerTeamsRead, func(p *app.Principal) error { _, err := svc.GetTeam(ctx, p, org.ID, nobody); return err }},
		{"Members", app.ScopePartnerTeamsRead, func(p *app.Principal) error {
			_, err := svc.Members(ctx, p, org.ID, nobody, app.PageRequest{Limit: 10})
			return err
		}},
		{"TeamMembers", app.ScopePartnerTeamsRead, func(p *app.Principal) error { _, err := svc.TeamMembers(ctx, p, org.ID); return err }},
		{"CreateTeam", app.ScopePartnerTeamsWrite, func(p *app.Principal) error { _, err := svc.CreateTeam(ctx, p, org.ID, "Support"); return err }},
		{"RenameTeam", app.ScopePartnerTeamsWrite, func(p *app.Principal) error {
			_, err := svc.RenameTeam(ctx, p, org.ID, nobody, &name)
			return err
		}},
		{"DeleteTeam", app.ScopePartnerTeamsManage, func(p *app.Principal) error { return svc.DeleteTeam(ctx, p, org.ID, nobody) }},
		{"AddMember", app.ScopePartnerTeamsWrite, func(p *app.Principal) error {
			_, err := svc.AddMember(ctx, p, org.ID, nobody, nobody)
			return err
		}},
		{"RemoveMember", app.ScopePartnerTeamsManage, func(p *app.Principal) error { return svc.RemoveMember(ctx, p, org.ID, nobody, nobody) }},
		{"Plans", app.ScopePartnerPlansRead, func(p *app.Principal) error {
			_, err := svc.Plans(ctx, p, app.PageRequest{Limit: 10})
			return err
		}},
		{"Subscription", app.ScopePartnerBillingRead, func(p *app.Principal) error { _, err := svc.Subscription(ctx, p, org.ID); return err }},
		{"ChangePlan", app.ScopePartnerPlansWrite, func(p *app.Principal) error {
			_, err := svc.ChangePlan(ctx, p, org.ID, "business")
			return err
		}},
		{"ChangeSeats", app.ScopePartnerPlansWrite, func(p *app.Principal) error {
			_, err := svc.ChangeSeats(ctx, p, org.ID, 20)
			return err
		}},
	}
	with := func(scopes ...string) *app.Principal {
		p := *admin
		p.Scopes = app.NewScopes(scopes...)
		return &p
	}
	orgs := func() int {
		list, err := svc.ListOrgs(ctx, admin, partner.OrgFilter{}, app.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	before := orgs()
	// Every scope but the operation's own (and those that imply it).
	for _, c := range cases {
		if err := c.call(with(app.ScopeDriveRead, app.ScopeContactsRead)); app.ErrorCode(err) != app.EInsufficientScope {
			t.Errorf("%s without %s: %v, want insufficient_scope", c.op, c.scope, err)
		}
	}
	if got := orgs(); got != before {
		t.Errorf("refused calls changed the customers: %d, then %d", before, got)
	}
	if o, err := svc.GetOrg(ctx, admin, org.ID); err != nil || o.Name != org.Name {
		t.Errorf("a refused update changed the organisation: %+v, %v", o, err)
	}
	for _, c := range cases {
		if err := c.call(with(c.scope)); app.ErrorCode(err) == app.EInsufficientScope {
			t.Errorf("%s with %s alone: %v", c.op, c.scope, err)
		}
	}
}
