package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"atrium/app/identity"
	"atrium/webtest"
)

// TestWebAppPartnerPages: the reseller console answers reseller staff with
// the names the browser tests rely on, 404 to anyone else (a member of the
// reseller, a person of a customer, another reseller's staff), sends a
// signed-out visitor through sign-in, escapes organisation and user names,
// lists the customers by name in pages, and explains the seat floor.
func TestWebAppPartnerPages(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ctx := t.Context()
	staff := person(t, s, "Reseller", "staff@reseller.test", "admin")
	person(t, s, "Reseller", "clerk@reseller.test", "member")
	person(t, s, "Other Reseller", "other@elsewhere.test", "admin")

	const xss = `<img src=x onerror=alert(1)>`
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs", Token: staff.Token,
		Body: map[string]any{"name": "Zeta " + xss, "plan_slug": "business", "seats": 5, "admin_email": "boss@zeta.test"}})
	if res.StatusCode != 201 {
		t.Fatalf("create org: %d %s", res.StatusCode, res.Body)
	}
	orgID, _ := res.JSON()["id"].(string)
	res = s.Do(webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs/" + orgID + "/users", Token: staff.Token,
		Body: map[string]any{"email": "pat@zeta.test", "first_name": "Pat", "last_name": xss}})
	if res.StatusCode != 201 {
		t.Fatalf("invite: %d %s", res.StatusCode, res.Body)
	}
	_, err := s.Main.Identity.EnsureUser(ctx, orgID, identity.EnsureUserInput{Email: "member@zeta.test", Role: "member", Password: testPassword})
	if err != nil {
		t.Fatal(err)
	}
	// 26 more customers, for a second page.
	for i := range 26 {
		if _, err := s.Main.Identity.EnsureOrg(ctx, identity.EnsureOrgInput{ParentID: &staff.OrganizationID, Name: fmt.Sprintf("Customer %02d", i),
			PlanSlug: "starter", Seats: 3}); err != nil {
			t.Fatal(err)
		}
	}

	out := newBrowser(t, s)
	for _, path := range []string{"/partner", "/partner/" + orgID} {
		p := out.get(path)
		if p.StatusCode != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/signin?next=%2Fpartner") {
			t.Errorf("%s signed out: %d %q, want 303 to sign-in", path, p.StatusCode, p.Header.Get("Location"))
		}
	}

	for _, who := range []string{"clerk@reseller.test", "member@zeta.test", "other@elsewhere.test"} {
		b := newBrowser(t, s)
		b.mustSignIn(who, testPassword)
		for _, path := range []string{"/partner", "/partner/" + orgID} {
			if who == "other@elsewhere.test" && path == "/partner" {
				continue // staff of another reseller: their own (empty) list
			}
			if p := b.get(path); p.StatusCode != http.StatusNotFound || strings.Contains(p.Body, "boss@zeta.test") || strings.Contains(p.Body, "Suspend organisation") {
				t.Errorf("%s %s: %d, want 404 without the organisation", who, path, p.StatusCode)
			}
		}
		if p := b.get("/settings"); strings.Contains(p.Body, `href="/partner"`) != (who == "other@elsewhere.test") {
			t.Errorf("%s: the Customers link is shown to reseller staff only", who)
		}
	}
	other := newBrowser(t, s)
	other.mustSignIn("other@elsewhere.test", testPassword)
	if p := other.get("/partner"); p.StatusCode != 200 || strings.Contains(p.Body, "Zeta") || !strings.Contains(p.Body, "no customer organisations yet") {
		t.Errorf("another reseller's list: %d", p.StatusCode)
	}

	in := newBrowser(t, s)
	in.mustSignIn("staff@reseller.test", testPassword)
	p := in.get("/partner")
	if p.StatusCode != 200 {
		t.Fatalf("/partner: %d %s", p.StatusCode, p.Body)
	}
	for _, want := range []string{
		`<a href="/partner" aria-current="page">Customers</a>`,
		`<h1>Customers</h1>`,
		`<script src="/assets/partner.js" defer></script>`,
		`<label for="orgs-q">Search organisations</label>`,
		`<label for="orgs-status">Status</label>`,
		`>New organisation</button>`,
		`<dialog id="new-org-dialog"`,
		`<label for="no-name">Name</label>`, `<label for="no-slug">Slug</label>`, `<label for="no-billing">Billing email</label>`,
		`<label for="no-plan">Plan</label>`, `<label for="no-admin">Admin email</label>`, `<label for="no-seats">Seats</label>`,
		`<button type="submit">Create</button>`,
		`<option value="business" data-max-seats="1000">Business (up to 1000 seats`,
		`Page 1 of 2`, `27 organisations`,
		`Customer 00`,
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("/partner lacks %q", want)
		}
	}
	// By name: Customer NN first, Zeta on the second page.
	if strings.Contains(p.Body, "Zeta") {
		t.Error("Zeta is on the first page; the list is not by name")
	}
	p2 := in.get("/partner?page=2")
	for _, want := range []string{"Zeta &lt;img src=x onerror=alert(1)&gt;", "Page 2 of 2", `<span class="badge status-active">Active</span>`, "3 of 5"} {
		if !strings.Contains(p2.Body, want) {
			t.Errorf("/partner?page=2 lacks %q", want)
		}
	}
	if strings.Contains(p2.Body, "<img src=x") {
		t.Error("the organisation's name is not escaped in the list")
	}
	if p := in.get("/partner?q=zeta"); !strings.Contains(p.Body, "Zeta &lt;img") || strings.Contains(p.Body, "Customer 00") {
		t.Error("search by name")
	}
	if p := in.get("/partner?status=suspended"); strings.Contains(p.Body, "Zeta") || !strings.Contains(p.Body, "No organisation matches") {
		t.Error("status filter")
	}

	p = in.get("/partner/" + orgID)
	if p.StatusCode != 200 {
		t.Fatalf("/partner/{id}: %d %s", p.StatusCode, p.Body)
	}
	for _, want := range []string{
		`<a href="/partner" aria-current="page">Customers</a>`,
		`<h1>Zeta &lt;img src=x onerror=alert(1)&gt; <span class="badge status-active">Active</span></h1>`,
		`>Suspend organisation</button>`,
		`Its people cannot sign in or use any app`,
		`This organisation has 1 active user and 2 pending invitations: seats can&#39;t go below 3.`,
		`data-floor="3"`,
		`<label for="sub-seats">Seats</label>`, `<label for="sub-plan">Plan</label>`,
		`>Change seats</button>`, `>Change plan</button>`,
		`role="img" aria-label="Seat use: 3 of 5 seats (1 active user, 2 pending invitations)"`,
		`aria-label="Storage use: 0 B of 1.1 TB (0%)"`,
		`Pat &lt;img src=x onerror=alert(1)&gt;`,
		`>Resend invitation</button>`, `>Invite</button>`, `>Create team</button>`,
		`<label for="org-name">Name</label>`, `<label for="org-billing-email">Billing email</label>`,
		`<dialog id="confirm-dialog"`,
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("/partner/{id} lacks %q", want)
		}
	}
	if strings.Contains(p.Body, "<img src=x") {
		t.Error("a name is not escaped on the organisation's page")
	}
	if strings.Contains(p.Body, "<script>") || strings.Contains(p.Body, " style=") || strings.Contains(p.Body, "<style") {
		t.Error("inline script or style")
	}
	if p := in.get("/partner/nope"); p.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown organisation: %d", p.StatusCode)
	}

	// The page's script acts with the session: a write without the
	// anti-forgery token is refused, with it the organisation is suspended.
	suspend := "/api/v1/partner/orgs/" + orgID + "/suspend"
	if r := in.do("POST", suspend, nil, nil); r.StatusCode != http.StatusForbidden {
		t.Errorf("suspend without X-CSRF-Token: %d", r.StatusCode)
	}
	if r := in.do("POST", suspend, nil, map[string]string{"X-CSRF-Token": in.csrf}); r.StatusCode != 200 {
		t.Fatalf("suspend with the session: %d %s", r.StatusCode, r.Body)
	}
	p = in.get("/partner/" + orgID)
	for _, want := range []string{`<span class="badge status-suspended">Suspended</span>`, `>Activate organisation</button>`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the suspended organisation's page lacks %q", want)
		}
	}
	if p := in.get("/partner?status=suspended"); !strings.Contains(p.Body, "Zeta") {
		t.Error("the suspended organisation is not among the suspended")
	}
}

// TestWebAppPartnerTeamMembers: a customer organisation's page lists each
// team's members, names escaped, each with a Remove button that asks first,
// and one form adds a user of the organisation to a team (the page's script
// puts the chosen team into the partner API's path); the page follows the
// changes made through that API.
func TestWebAppPartnerTeamMembers(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	staff := person(t, s, "Reseller", "staff@reseller.test", "admin")
	const xss = `<img src=x onerror=alert(1)>`
	call := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		res := s.Do(webtest.Request{Method: method, Path: "/api/v1/partner" + path, Token: staff.Token, Body: body})
		if res.StatusCode != want {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, res.Body)
		}
		if want == http.StatusNoContent {
			return nil
		}
		return res.JSON()
	}
	orgID := call("POST", "/orgs", map[string]any{"name": "Zeta", "plan_slug": "business", "seats": 5, "admin_email": "boss@zeta.test"}, 201)["id"].(string)
	org := "/orgs/" + orgID
	in := newBrowser(t, s)
	in.mustSignIn("staff@reseller.test", testPassword)
	if p := in.get("/partner/" + orgID); strings.Contains(p.Body, `id="member-form"`) || !strings.Contains(p.Body, "No teams yet.") {
		t.Error("without teams the page offers to add a member to one")
	}

	patID := call("POST", org+"/users", map[string]any{"email": "pat@zeta.test", "first_name": "Pat", "last_name": xss}, 201)["id"].(string)
	teamID := call("POST", org+"/teams", map[string]any{"name": "Engineering " + xss}, 201)["id"].(string)
	otherID := call("POST", org+"/teams", map[string]any{"name": "Sales"}, 201)["id"].(string)
	call("POST", org+"/teams/"+teamID+"/members", map[string]any{"user_id": patID}, 201)

	p := in.get("/partner/" + orgID)
	if p.StatusCode != 200 {
		t.Fatalf("/partner/{id}: %d %s", p.StatusCode, p.Body)
	}
	team := "Engineering &lt;img src=x onerror=alert(1)&gt;"
	pat := "Pat &lt;img src=x onerror=alert(1)&gt;"
	api := "/api/v1/partner/orgs/" + orgID + "/teams/"
	for _, want := range []string{
		`<summary>1 member<span class="sr-only"> of ` + team + `</span></summary>`,
		`<ul class="member-list" aria-label="Members of ` + team + `">`,
		pat + ` <span class="sub">pat@zeta.test</span>`,
		`data-api="` + api + teamID + `/members/` + patID + `" data-method="DELETE"`,
		`data-confirm-title="Remove ` + pat + ` from the team ` + team + `?"`,
		`aria-label="Remove ` + pat + ` from the team ` + team + `">Remove</button>`,
		`<summary>0 members<span class="sr-only"> of Sales</span></summary>`,
		`No members yet.`,
		`<form id="member-form" class="row" novalidate data-api="` + api + `{team_id}/members" data-method="POST" data-done="{user_id} is added to the team {team_id}.">`,
		`<label for="member-user">User</label>`, `<label for="member-team">Team</label>`,
		`<option value="` + patID + `">` + pat + ` (pat@zeta.test)</option>`,
		`>boss@zeta.test</option>`,
		`<option value="` + teamID + `">` + team + `</option>`, `<option value="` + otherID + `">Sales</option>`,
		`>Add to team</button>`,
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the organisation's page lacks %q", want)
		}
	}
	if strings.Contains(p.Body, "<img src=x") {
		t.Error("a name is not escaped among the teams")
	}

	// Added to the other team, then removed from both.
	call("POST", org+"/teams/"+otherID+"/members", map[string]any{"user_id": patID}, 201)
	if p := in.get("/partner/" + orgID); !strings.Contains(p.Body, `<summary>1 member<span class="sr-only"> of Sales</span></summary>`) {
		t.Error("the page does not show the member added to Sales")
	}
	call("DELETE", org+"/teams/"+teamID+"/members/"+patID, nil, 204)
	call("DELETE", org+"/teams/"+otherID+"/members/"+patID, nil, 204)
	if p := in.get("/partner/" + orgID); strings.Contains(p.Body, `class="member-list"`) || strings.Count(p.Body, "No members yet.") != 2 {
		t.Error("after the removals a team still shows members")
	}
}
