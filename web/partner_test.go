package web_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/identity"
	"atrium/storage/sqldb"
	"atrium/webtest"
)

// partnerWorld is a reseller with customers, another reseller, and tokens.
type partnerWorld struct {
	s        *webtest.Server
	reseller webtest.Creds
	other    webtest.Creds
	tok      string // reseller admin: every partner scope
}

func newPartnerWorld(t *testing.T) *partnerWorld {
	s := webtest.New(t)
	w := &partnerWorld{s: s, reseller: s.Bootstrap("Reseller", "ops@reseller.test", "admin"), other: s.Bootstrap("Other Reseller", "ops@other.test", "admin")}
	w.tok = w.reseller.Token
	return w
}

func (w *partnerWorld) do(method, path, token string, body any) *webtest.Response {
	return w.s.Do(webtest.Request{Method: method, Path: "/api/v1/partner" + path, Token: token, Body: body})
}

// createOrg provisions a customer and returns its id.
func (w *partnerWorld) createOrg(t *testing.T, token, name, admin string) string {
	t.Helper()
	res := w.do("POST", "/orgs", token, map[string]any{"name": name, "plan_slug": "business", "admin_email": admin, "seats": 3})
	if res.StatusCode != 201 {
		t.Fatalf("create org: %d %s", res.StatusCode, res.Body)
	}
	return res.JSON()["id"].(string)
}

func (w *partnerWorld) mails(t *testing.T, to string) []app.Mail {
	t.Helper()
	all, err := w.s.Main.Mail.List(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []app.Mail
	for _, m := range all {
		if m.To == to {
			out = append(out, m)
		}
	}
	return out
}

func (w *partnerWorld) events(t *testing.T, typ, orgID string) []app.Event {
	t.Helper()
	evs, _, err := sqldb.Outbox{DB: w.s.Main.DB}.Events(context.Background(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []app.Event
	for _, e := range evs {
		if e.Type == typ && e.OrgID == orgID {
			out = append(out, e)
		}
	}
	return out
}

var linkRE = regexp.MustCompile(`/(invite|reset)/([0-9a-f]+)`)

// lastToken returns the token of the newest invitation or reset e-mail to an address.
func (w *partnerWorld) lastToken(t *testing.T, to, kind string) string {
	t.Helper()
	for _, m := range w.mails(t, to) {
		if mm := linkRE.FindStringSubmatch(m.Body); mm != nil && mm[1] == kind {
			if !strings.Contains(m.Body, w.s.URL+"/"+kind+"/") {
				t.Fatalf("link does not use the public URL: %s", m.Body)
			}
			return mm[2]
		}
	}
	t.Fatalf("no %s e-mail to %s", kind, to)
	return ""
}

func TestPartnerOrganisations(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	s := w.s
	res := w.do("POST", "/orgs", w.tok, map[string]any{"name": "Acme Corp", "plan_slug": "business", "admin_email": "boss@acme.test",
		"admin_first_name": "Ada", "admin_last_name": "Boss", "billing_email": "billing@acme.test"})
	webtest.Check(t, res, webtest.Scenario{Status: 201, Contains: []string{`"slug":"acme-corp"`, `"plan_slug":"business"`, `"user_count":1`,
		`"reseller_depth":0`, `"status":"active"`, `"parent_organization_id":"` + w.reseller.OrganizationID + `"`}})
	acme := res.JSON()["id"].(string)

	// Provisioning invited the admin by e-mail, emitted the event and wrote audit rows.
	if m := w.mails(t, "boss@acme.test"); len(m) != 1 || !strings.Contains(m[0].Subject, "Acme Corp") {
		t.Fatalf("invitation mail: %+v", m)
	}
	if ev := w.events(t, "organization.user.created", acme); len(ev) != 1 || ev[0].Data["email"] != "boss@acme.test" || ev[0].Data["user_id"] == "" {
		t.Fatalf("events %+v", ev)
	}
	audit, _ := sqldb.Auditor{DB: s.Main.DB}.List(context.Background(), acme, "", 100)
	if len(audit) < 2 || audit[0].Module != "partner" {
		t.Fatalf("audit %+v", audit)
	}

	otherOrg := w.createOrg(t, w.other.Token, "Globex", "boss@globex.test")
	grandchild, err := s.Main.Identity.EnsureOrg(context.Background(), identity.EnsureOrgInput{ParentID: &acme, Name: "Acme Sub", PlanSlug: "starter", Seats: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A customer organisation's admin (not a reseller).
	cust, err := s.Main.Identity.EnsureUser(context.Background(), acme, identity.EnsureUserInput{Email: "it@acme.test", Role: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	custTok := s.Token(cust.Email)
	readOnly := s.Token(w.reseller.Email, "partner:orgs:read")
	writeTok := s.Token(w.reseller.Email, "partner:orgs:write")

	s.Run(t, []webtest.Scenario{
		{Name: "get", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs/" + acme, Token: w.tok}, Status: 200, Contains: []string{`"name":"Acme Corp"`, `"billing_email":"billing@acme.test"`}},
		{Name: "read scope suffices to get", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs/" + acme, Token: readOnly}, Status: 200},
		{Name: "write implies read", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs/" + acme, Token: writeTok}, Status: 200},
		{Name: "another reseller's customer is 404", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs/" + otherOrg, Token: w.tok}, Status: 404, Problem: "not_found"},
		{Name: "grandchild is 404", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs/" + grandchild.ID, Token: w.tok}, Status: 404, Problem: "not_found"},
		{Name: "own organisation is 404", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs/" + w.reseller.OrganizationID, Token: w.tok}, Status: 404, Problem: "not_found"},
		{Name: "foreign users path is 404", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs/" + otherOrg + "/users", Token: w.tok}, Status: 404, Problem: "not_found"},
		{Name: "foreign subscription is 404", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs/" + otherOrg + "/subscription", Token: w.tok}, Status: 404, Problem: "not_found"},
		{Name: "non-reseller refused", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs", Token: custTok}, Status: 403},
		{Name: "read token cannot create", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs", Token: readOnly,
			Body: map[string]any{"name": "X", "plan_slug": "business", "admin_email": "x@x.test"}}, Status: 403, Problem: "insufficient_scope"},
		{Name: "write token cannot suspend", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs/" + acme + "/suspend", Token: writeTok}, Status: 403, Problem: "insufficient_scope"},
		{Name: "member PAT lacks partner scopes", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs", Token: s.Bootstrap("Reseller", "member@reseller.test", "member").Token}, Status: 403, Problem: "insufficient_scope"},
		{Name: "missing fields", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs", Token: w.tok, Body: map[string]any{"name": ""}}, Status: 422, Problem: "validation_failed",
			Contains: []string{`"location":"body.name"`}},
		{Name: "bad e-mail and unknown plan", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs", Token: w.tok,
			Body: map[string]any{"name": "Y", "plan_slug": "gold", "admin_email": "nope"}}, Status: 422, Problem: "validation_failed",
			Contains: []string{`"location":"body.admin_email"`, `"location":"body.plan_slug"`}},
		{Name: "slug taken", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs", Token: w.tok,
			Body: map[string]any{"name": "Acme Corp", "plan_slug": "business", "admin_email": "new@acme.test"}}, Status: 409, Problem: "conflict"},
		{Name: "admin e-mail taken", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs", Token: w.tok,
			Body: map[string]any{"name": "Initech", "plan_slug": "business", "admin_email": "boss@acme.test"}}, Status: 409, Problem: "conflict"},
		{Name: "patch", Request: webtest.Request{Method: "PATCH", Path: "/api/v1/partner/orgs/" + acme, Token: w.tok,
			Body: map[string]any{"billing_name": "Acme Billing", "mail_domain": "acme.test", "logo_url": "https://acme.test/logo.png"}}, Status: 200,
			Contains: []string{`"billing_name":"Acme Billing"`, `"mail_domain":"acme.test"`}},
		{Name: "patch invalid", Request: webtest.Request{Method: "PATCH", Path: "/api/v1/partner/orgs/" + acme, Token: w.tok,
			Body: map[string]any{"logo_url": "javascript:alert(1)", "mail_domain": "not a domain"}}, Status: 422, Problem: "validation_failed"},
		{Name: "patch foreign", Request: webtest.Request{Method: "PATCH", Path: "/api/v1/partner/orgs/" + otherOrg, Token: w.tok, Body: map[string]any{"name": "Mine"}}, Status: 404},
		{Name: "plans", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/plans", Token: w.tok}, Status: 200,
			Contains: []string{`"slug":"business"`, `"slug":"enterprise"`, `"slug":"starter"`, `"features":[`}},
	})
	audit, _ = sqldb.Auditor{DB: s.Main.DB}.List(context.Background(), acme, "", 100)
	if audit[0].Action != "organization.updated" || fmt.Sprint(audit[0].ChangedFields) != "[billing_name logo_url mail_domain]" {
		t.Fatalf("patch audit %+v", audit[0])
	}
	// The customer's admin reads the partner entries in its own audit log.
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/audit", Token: custTok}), webtest.Scenario{Status: 200, Contains: []string{`"module":"partner"`}})
}

func TestPartnerOrgListAndIdempotency(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	for i, n := range []string{"Alpha Foods", "Beta Motors", "Alphabet Soup", "Gamma Rays", "Delta Air"} {
		w.createOrg(t, w.tok, n, fmt.Sprintf("admin%d@cust.test", i))
	}
	w.createOrg(t, w.other.Token, "Alpha Other", "a@other.test")
	list := func(q string) []string {
		var p struct {
			Items []struct{ Name string } `json:"items"`
		}
		w.do("GET", "/orgs?limit=100&"+q, w.tok, nil).Decode(t, &p)
		var out []string
		for _, it := range p.Items {
			out = append(out, it.Name)
		}
		return out
	}
	tests := []struct{ q, want string }{
		{"", "[Alpha Foods Beta Motors Alphabet Soup Gamma Rays Delta Air]"},
		{"q=alpha", "[Alpha Foods Alphabet Soup]"},
		{"q=SOUP", "[Alphabet Soup]"},
		{"q=ph", "[]"}, // short: a prefix match
		{"q=Be", "[Beta Motors]"},
		{"q=%22%3B", "[]"},
		{"q=ray", "[Gamma Rays]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(list(tt.q)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.q, got, tt.want)
		}
	}
	id := w.createOrg(t, w.tok, "Zeta", "z@cust.test")
	webtest.Check(t, w.do("POST", "/orgs/"+id+"/suspend", w.tok, nil), webtest.Scenario{Status: 200, Contains: []string{`"status":"suspended"`}})
	if got := fmt.Sprint(list("status=suspended")); got != "[Zeta]" {
		t.Errorf("suspended: %s", got)
	}
	webtest.Check(t, w.do("GET", "/orgs?status=gone", w.tok, nil), webtest.Scenario{Status: 422, Problem: "validation_failed"})

	// Pages of two follow each other.
	var names []string
	cursor := ""
	for range 10 {
		var p struct {
			Items      []struct{ Name string } `json:"items"`
			NextCursor *string                 `json:"next_cursor"`
		}
		w.do("GET", "/orgs?limit=2&cursor="+cursor, w.tok, nil).Decode(t, &p)
		for _, it := range p.Items {
			names = append(names, it.Name)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if len(names) != 6 {
		t.Fatalf("paged %v", names)
	}

	// Idempotent provisioning: one organisation, one invitation.
	body := map[string]any{"name": "Once Ltd", "plan_slug": "starter", "admin_email": "once@cust.test"}
	req := webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs", Token: w.tok, Body: body, Header: map[string]string{"Idempotency-Key": "prov-1"}}
	a, b := w.s.Do(req), w.s.Do(req)
	if a.StatusCode != 201 || b.StatusCode != 201 || b.Header.Get("X-Idempotency-Replayed") != "true" || a.JSON()["id"] != b.JSON()["id"] {
		t.Fatalf("%d %d %s", a.StatusCode, b.StatusCode, b.Body)
	}
	if m := w.mails(t, "once@cust.test"); len(m) != 1 {
		t.Fatalf("%d invitations", len(m))
	}
}

func TestPartnerUsersLifecycle(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	s := w.s
	org := w.createOrg(t, w.tok, "Acme", "boss@acme.test")
	base := "/orgs/" + org + "/users"

	res := w.do("POST", base, w.tok, map[string]any{"email": "dev@acme.test", "first_name": "Dee", "last_name": "Veloper", "role_slug": "member"})
	webtest.Check(t, res, webtest.Scenario{Status: 201, Contains: []string{`"status":"invited"`, `"role_slug":"member"`}})
	uid := res.JSON()["id"].(string)
	if ev := w.events(t, "organization.user.created", org); len(ev) != 2 {
		t.Fatalf("created events %d", len(ev))
	}
	webtest.Check(t, w.do("GET", base, w.tok, nil), webtest.Scenario{Status: 200, Contains: []string{`"email":"dev@acme.test"`, `"email":"boss@acme.test"`, `"status":"invited"`}})

	s.Run(t, []webtest.Scenario{
		{Name: "invite duplicate", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner" + base, Token: w.tok, Body: map[string]any{"email": "DEV@acme.test"}}, Status: 409, Problem: "conflict"},
		{Name: "invite bad role", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner" + base, Token: w.tok, Body: map[string]any{"email": "x@acme.test", "role_slug": "owner"}}, Status: 422, Problem: "validation_failed"},
		{Name: "invite bad email", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner" + base, Token: w.tok, Body: map[string]any{"email": "x"}}, Status: 422, Problem: "validation_failed"},
		{Name: "get", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner" + base + "/" + uid, Token: w.tok}, Status: 200, Contains: []string{`"first_name":"Dee"`}},
		{Name: "get unknown", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner" + base + "/nope", Token: w.tok}, Status: 404, Problem: "not_found"},
		{Name: "suspend invited is a conflict", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner" + base + "/" + uid + "/suspend", Token: w.tok}, Status: 409, Problem: "conflict",
			Contains: []string{"invited"}},
		{Name: "reset-password of invited is a conflict", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner" + base + "/" + uid + "/reset-password", Token: w.tok}, Status: 409},
		{Name: "resend invitation", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner" + base + "/" + uid + "/resend-invitation", Token: w.tok}, Status: 200},
		{Name: "users:write cannot suspend", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner" + base + "/" + uid + "/suspend", Token: s.Token(w.reseller.Email, "partner:users:write")}, Status: 403, Problem: "insufficient_scope"},
	})

	// The first invitation link was revoked by the resend; the newest one works once.
	token := w.lastToken(t, "dev@acme.test", "invite")
	page := s.Do(webtest.Request{Method: "GET", Path: "/invite/" + token})
	webtest.Check(t, page, webtest.Scenario{Status: 200, Contains: []string{"Accept your invitation", "/api/v1/invitations/" + token + "/accept"}})
	accept := func(tok, pw string) *webtest.Response {
		return s.Do(webtest.Request{Method: "POST", Path: "/api/v1/invitations/" + tok + "/accept", Body: map[string]any{"password": pw}})
	}
	webtest.Check(t, accept(token, "short"), webtest.Scenario{Status: 422, Problem: "validation_failed"})
	webtest.Check(t, accept(token, "a long enough password"), webtest.Scenario{Status: 200, Contains: []string{`"status":"active"`}})
	webtest.Check(t, accept(token, "a long enough password"), webtest.Scenario{Status: 404, Problem: "not_found"})

	act := func(action string, status int, contains ...string) {
		t.Helper()
		webtest.Check(t, w.do("POST", base+"/"+uid+"/"+action, w.tok, nil), webtest.Scenario{Status: status, Contains: contains})
	}
	act("resend-invitation", 409)
	act("suspend", 200, `"status":"suspended"`)
	act("reset-password", 409)
	act("activate", 200, `"status":"active"`)
	act("reset-password", 200)
	reset := w.lastToken(t, "dev@acme.test", "reset")
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/reset/" + reset}), webtest.Scenario{Status: 200, Contains: []string{"Reset your password"}})
	webtest.Check(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/password-resets/" + reset + "/accept", Body: map[string]any{"password": "another long password"}}),
		webtest.Scenario{Status: 200})

	res = w.do("PATCH", base+"/"+uid, w.tok, map[string]any{"role_slug": "admin", "first_name": "Dee"})
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{`"role_slug":"admin"`}})
	upd := w.events(t, "organization.user.updated", org)
	last := upd[len(upd)-1]
	if last.Data["user_id"] != uid || fmt.Sprint(last.Data["changed_fields"]) != "[role_slug]" {
		t.Fatalf("updated event %+v", last.Data)
	}
	webtest.Check(t, w.do("DELETE", base+"/"+uid, w.tok, nil), webtest.Scenario{Status: 204})
	webtest.Check(t, w.do("GET", base+"/"+uid, w.tok, nil), webtest.Scenario{Status: 404})
	if ev := w.events(t, "organization.user.deleted", org); len(ev) != 1 || ev[0].Data["user_id"] != uid {
		t.Fatalf("deleted events %+v", ev)
	}

	// An invitation expires after seven days.
	res = w.do("POST", base, w.tok, map[string]any{"email": "late@acme.test"})
	webtest.Check(t, res, webtest.Scenario{Status: 201})
	late := w.lastToken(t, "late@acme.test", "invite")
	s.Clock.Advance(7*24*time.Hour + time.Minute)
	webtest.Check(t, accept(late, "a long enough password"), webtest.Scenario{Status: 404, Problem: "not_found"})
}

func TestPartnerTeams(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	org := w.createOrg(t, w.tok, "Acme", "boss@acme.test")
	other := w.createOrg(t, w.tok, "Other", "boss@other-cust.test")
	users := func(o string) string {
		var p struct{ Items []struct{ ID string } }
		w.do("GET", "/orgs/"+o+"/users", w.tok, nil).Decode(t, &p)
		return p.Items[0].ID
	}
	boss, outsider := users(org), users(other)
	res := w.do("POST", "/orgs/"+org+"/teams", w.tok, map[string]any{"name": "Engineering"})
	webtest.Check(t, res, webtest.Scenario{Status: 201, Contains: []string{`"member_count":0`}})
	team := res.JSON()["id"].(string)
	tp := "/api/v1/partner/orgs/" + org + "/teams/" + team
	w.s.Run(t, []webtest.Scenario{
		{Name: "duplicate name", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs/" + org + "/teams", Token: w.tok, Body: map[string]any{"name": "engineering"}}, Status: 409, Problem: "conflict"},
		{Name: "empty name", Request: webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs/" + org + "/teams", Token: w.tok, Body: map[string]any{"name": ""}}, Status: 422},
		{Name: "add member", Request: webtest.Request{Method: "POST", Path: tp + "/members", Token: w.tok, Body: map[string]any{"user_id": boss}}, Status: 201, Contains: []string{`"email":"boss@acme.test"`}},
		{Name: "add member twice", Request: webtest.Request{Method: "POST", Path: tp + "/members", Token: w.tok, Body: map[string]any{"user_id": boss}}, Status: 409},
		{Name: "member of another organisation", Request: webtest.Request{Method: "POST", Path: tp + "/members", Token: w.tok, Body: map[string]any{"user_id": outsider}}, Status: 422, Problem: "validation_failed"},
		{Name: "members", Request: webtest.Request{Method: "GET", Path: tp + "/members", Token: w.tok}, Status: 200, Contains: []string{boss}},
		{Name: "team shows count", Request: webtest.Request{Method: "GET", Path: tp, Token: w.tok}, Status: 200, Contains: []string{`"member_count":1`}},
	})
	// Every team's members in one read (the console's organisation page):
	// this organisation's teams only, and only for the reseller over it.
	res = w.do("POST", "/orgs/"+org+"/teams", w.tok, map[string]any{"name": "Empty"})
	webtest.Check(t, res, webtest.Scenario{Status: 201})
	empty := res.JSON()["id"].(string)
	res = w.do("POST", "/orgs/"+other+"/teams", w.tok, map[string]any{"name": "Elsewhere"})
	webtest.Check(t, res, webtest.Scenario{Status: 201})
	elsewhere := res.JSON()["id"].(string)
	webtest.Check(t, w.do("POST", "/orgs/"+other+"/teams/"+elsewhere+"/members", w.tok, map[string]any{"user_id": outsider}), webtest.Scenario{Status: 201})
	ctx := t.Context()
	p, err := w.s.Main.Identity.Authenticate(ctx, w.tok)
	if err != nil {
		t.Fatal(err)
	}
	all, err := w.s.Main.Partner.TeamMembers(ctx, p, org)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || len(all[team]) != 1 || all[team][0].UserID != boss || all[team][0].Email != "boss@acme.test" || all[empty] != nil {
		t.Errorf("TeamMembers = %+v, want the one member of %s", all, team)
	}
	stranger, err := w.s.Main.Identity.Authenticate(ctx, w.other.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.Main.Partner.TeamMembers(ctx, stranger, org); app.ErrorCode(err) != app.ENotFound {
		t.Errorf("another reseller's TeamMembers: %v, want not_found", err)
	}
	w.s.Run(t, []webtest.Scenario{
		{Name: "rename", Request: webtest.Request{Method: "PATCH", Path: tp, Token: w.tok, Body: map[string]any{"name": "Platform"}}, Status: 200, Contains: []string{`"name":"Platform"`}},
		{Name: "team in another org path", Request: webtest.Request{Method: "GET", Path: "/api/v1/partner/orgs/" + other + "/teams/" + team, Token: w.tok}, Status: 404},
		{Name: "teams:write cannot delete", Request: webtest.Request{Method: "DELETE", Path: tp, Token: w.s.Token(w.reseller.Email, "partner:teams:write")}, Status: 403, Problem: "insufficient_scope"},
		{Name: "remove member", Request: webtest.Request{Method: "DELETE", Path: tp + "/members/" + boss, Token: w.tok}, Status: 204},
		{Name: "remove non-member", Request: webtest.Request{Method: "DELETE", Path: tp + "/members/" + boss, Token: w.tok}, Status: 404},
		{Name: "delete", Request: webtest.Request{Method: "DELETE", Path: tp, Token: w.tok}, Status: 204},
		{Name: "deleted", Request: webtest.Request{Method: "GET", Path: tp, Token: w.tok}, Status: 404},
	})
}

func TestPartnerSubscriptionAndSeatFloor(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	org := w.createOrg(t, w.tok, "Acme", "boss@acme.test") // 3 seats, 1 invited
	// One active user and one more invitation: the floor is 3.
	if _, err := w.s.Main.Identity.EnsureUser(context.Background(), org, identity.EnsureUserInput{Email: "active@acme.test", Role: "member"}); err != nil {
		t.Fatal(err)
	}
	webtest.Check(t, w.do("POST", "/orgs/"+org+"/users", w.tok, map[string]any{"email": "inv@acme.test"}), webtest.Scenario{Status: 201})
	// Every seat is used: another invitation is refused until seats are added.
	webtest.Check(t, w.do("POST", "/orgs/"+org+"/users", w.tok, map[string]any{"email": "more@acme.test"}), webtest.Scenario{Status: 409, Problem: "seat_floor"})
	sub := "/api/v1/partner/orgs/" + org + "/subscription"
	w.s.Run(t, []webtest.Scenario{
		{Name: "read", Request: webtest.Request{Method: "GET", Path: sub, Token: w.tok}, Status: 200, Contains: []string{`"plan_slug":"business"`, `"seats":3`, `"used_seats":3`}},
		{Name: "billing scope", Request: webtest.Request{Method: "GET", Path: sub, Token: w.s.Token(w.reseller.Email, "partner:orgs:read")}, Status: 403, Problem: "insufficient_scope"},
		{Name: "floor minus one refused", Request: webtest.Request{Method: "POST", Path: sub + "/change-seats", Token: w.tok, Body: map[string]any{"seats": 2}}, Status: 409, Problem: "seat_floor",
			Contains: []string{"seat floor is 3"}},
		{Name: "floor accepted", Request: webtest.Request{Method: "POST", Path: sub + "/change-seats", Token: w.tok, Body: map[string]any{"seats": 3}}, Status: 200, Contains: []string{`"seats":3`}},
		{Name: "more seats", Request: webtest.Request{Method: "POST", Path: sub + "/change-seats", Token: w.tok, Body: map[string]any{"seats": 8}}, Status: 200, Contains: []string{`"seats":8`}},
		{Name: "zero seats", Request: webtest.Request{Method: "POST", Path: sub + "/change-seats", Token: w.tok, Body: map[string]any{"seats": 0}}, Status: 422},
		{Name: "over the plan's maximum", Request: webtest.Request{Method: "POST", Path: sub + "/change-seats", Token: w.tok, Body: map[string]any{"seats": 5000}}, Status: 422},
		{Name: "unknown plan", Request: webtest.Request{Method: "POST", Path: sub + "/change-plan", Token: w.tok, Body: map[string]any{"plan_slug": "gold"}}, Status: 422, Problem: "validation_failed"},
		{Name: "change plan", Request: webtest.Request{Method: "POST", Path: sub + "/change-plan", Token: w.tok, Body: map[string]any{"plan_slug": "enterprise"}}, Status: 200, Contains: []string{`"plan_slug":"enterprise"`}},
	})
	// An unpublished plan is refused like an unknown one.
	if _, err := w.s.Main.DB.Exec(context.Background(), `UPDATE plans SET published = 0 WHERE slug = 'starter'`); err != nil {
		t.Fatal(err)
	}
	webtest.Check(t, w.do("POST", "/orgs/"+org+"/subscription/change-plan", w.tok, map[string]any{"plan_slug": "starter"}), webtest.Scenario{Status: 422, Problem: "validation_failed"})
	webtest.Check(t, w.do("GET", "/plans", w.tok, nil), webtest.Scenario{Status: 200, NotContains: []string{`"slug":"starter"`}})
	// The seat floor counts invitations: revoking one (deleting the user) lowers it.
	var p struct{ Items []struct{ ID, Email string } }
	w.do("GET", "/orgs/"+org+"/users", w.tok, nil).Decode(t, &p)
	for _, u := range p.Items {
		if u.Email == "inv@acme.test" {
			webtest.Check(t, w.do("DELETE", "/orgs/"+org+"/users/"+u.ID, w.tok, nil), webtest.Scenario{Status: 204})
		}
	}
	webtest.Check(t, w.do("POST", "/orgs/"+org+"/subscription/change-seats", w.tok, map[string]any{"seats": 2}), webtest.Scenario{Status: 200, Contains: []string{`"used_seats":2`}})
}

func TestPartnerSuspendRefusesEveryDoor(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	s := w.s
	org := w.createOrg(t, w.tok, "Acme", "boss@acme.test")
	u, err := s.Main.Identity.EnsureUser(context.Background(), org, identity.EnsureUserInput{Email: "dav@acme.test", Role: "member"})
	if err != nil {
		t.Fatal(err)
	}
	pat := s.Token(u.Email)
	appPW, _, err := s.Main.Identity.CreateAppPassword(context.Background(), u.ID, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	rest := webtest.Request{Method: "GET", Path: "/api/v1/me", Token: pat}
	dav := webtest.Request{Method: "PROPFIND", Path: "/dav/", BasicID: u.Email, BasicPW: appPW, Header: map[string]string{"Depth": "0"}}
	notRefused := func(r *webtest.Response) bool {
		return r.StatusCode != http.StatusUnauthorized && r.StatusCode != http.StatusForbidden
	}
	if r := s.Do(rest); r.StatusCode != 200 {
		t.Fatalf("before: %d", r.StatusCode)
	}
	if r := s.Do(dav); !notRefused(r) {
		t.Fatalf("app password before suspension: %d %s", r.StatusCode, r.Body)
	}
	webtest.Check(t, w.do("POST", "/orgs/"+org+"/suspend", w.tok, nil), webtest.Scenario{Status: 200, Contains: []string{`"status":"suspended"`}})
	webtest.Check(t, s.Do(rest), webtest.Scenario{Request: rest, Status: 403, Problem: "org_suspended"})
	webtest.Check(t, s.Do(dav), webtest.Scenario{Request: dav, Status: 403, Problem: "org_suspended"})
	webtest.Check(t, w.do("POST", "/orgs/"+org+"/activate", w.tok, nil), webtest.Scenario{Status: 200, Contains: []string{`"status":"active"`}})
	webtest.Check(t, s.Do(rest), webtest.Scenario{Status: 200})
	if r := s.Do(dav); !notRefused(r) {
		t.Fatalf("app password after activation: %d", r.StatusCode)
	}
}

// A reseller invites people at the addresses they have: a mail domain limits
// invitations only when the organisation restricts them to it.
func TestPartnerInviteAnyAddress(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	org := w.createOrg(t, w.tok, "Ivy League", "boss@x.example.net") // 1 of 3 seats
	patch := func(body map[string]any) webtest.Request {
		return webtest.Request{Method: "PATCH", Path: "/api/v1/partner/orgs/" + org, Token: w.tok, Body: body}
	}
	invite := func(email string) webtest.Request {
		return webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs/" + org + "/users", Token: w.tok, Body: map[string]any{"email": email}}
	}
	w.s.Run(t, []webtest.Scenario{
		{Name: "set a mail domain", Request: patch(map[string]any{"mail_domain": "x.example.net"}), Status: 200,
			Contains: []string{`"mail_domain":"x.example.net"`, `"restrict_invitations_to_mail_domain":false`}},
		{Name: "invite at another domain", Request: invite("ivy@example.net"), Status: 201, Contains: []string{`"status":"invited"`}},
		{Name: "restrict", Request: patch(map[string]any{"restrict_invitations_to_mail_domain": true}), Status: 200,
			Contains: []string{`"restrict_invitations_to_mail_domain":true`}},
		{Name: "restricted: elsewhere refused", Request: invite("joe@example.net"), Status: 422, Problem: "validation_failed",
			Contains: []string{"body.email", "x.example.net"}},
		{Name: "restricted: at the domain", Request: invite("joe@x.example.net"), Status: 201},
	})
	if len(w.mails(t, "ivy@example.net")) != 1 {
		t.Fatal("no invitation e-mail to ivy@example.net")
	}
}
