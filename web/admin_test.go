package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"atrium/app"
	"atrium/app/identity"
	"atrium/storage/sqldb"
	"atrium/webtest"
)

// adminWorld is a customer organisation (Acme, business plan, 4 seats) with
// its admin, a member, and another organisation (Globex) with a user.
type adminWorld struct {
	*partnerWorld
	org, admin, adminID     string // Acme, its admin's token (every scope) and id
	member, memberID        string // a member of Acme: token, id
	otherOrg, otherUserID   string // Globex and its user
	otherAdmin, otherTeamID string // Globex's admin's token and a team of Globex
}

func newAdminWorld(t *testing.T) *adminWorld {
	t.Helper()
	s := webtest.New(t)
	w := &adminWorld{partnerWorld: &partnerWorld{s: s, reseller: s.Bootstrap("Reseller", "ops@reseller.test", "admin")}}
	ctx := context.Background()
	mk := func(name, admin, member string) (string, identity.User, identity.User) {
		o, err := s.Main.Identity.EnsureOrg(ctx, identity.EnsureOrgInput{ParentID: &w.reseller.OrganizationID, Name: name, PlanSlug: "business", Seats: 4})
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.Main.Identity.EnsureUser(ctx, o.ID, identity.EnsureUserInput{Email: admin, FirstName: "Ada", LastName: "Boss", Role: app.RoleAdmin})
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.Main.Identity.EnsureUser(ctx, o.ID, identity.EnsureUserInput{Email: member, FirstName: "Max", LastName: "Member", Role: app.RoleMember})
		if err != nil {
			t.Fatal(err)
		}
		return o.ID, a, m
	}
	var a, m identity.User
	w.org, a, m = mk("Acme", "boss@acme.test", "max@acme.test")
	w.admin, w.adminID = s.Token(a.Email), a.ID
	w.member, w.memberID = s.Token(m.Email), m.ID
	var oa, ou identity.User
	w.otherOrg, oa, ou = mk("Globex", "boss@globex.test", "gus@globex.test")
	w.otherUserID, w.otherAdmin = ou.ID, s.Token(oa.Email)
	res := w.api("POST", "/teams", w.otherAdmin, map[string]any{"name": "Globex Team"})
	webtest.Check(t, res, webtest.Scenario{Status: 201})
	w.otherTeamID = res.JSON()["id"].(string)
	return w
}

func (w *adminWorld) api(method, path, token string, body any) *webtest.Response {
	return w.s.Do(webtest.Request{Method: method, Path: "/api/v1/admin" + path, Token: token, Body: body})
}

func (w *adminWorld) req(method, path, token string, body any) webtest.Request {
	return webtest.Request{Method: method, Path: "/api/v1/admin" + path, Token: token, Body: body}
}

// audited reports whether the organisation's audit log has an entry of the
// admin module with this action and target.
func (w *adminWorld) audited(t *testing.T, orgID, action, target string) bool {
	t.Helper()
	entries, err := sqldb.Auditor{DB: w.s.Main.DB}.List(context.Background(), orgID, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Module == "admin" && e.Action == action && e.TargetID == target {
			return true
		}
	}
	return false
}

// invite invites email into Acme and returns the new user's id.
func (w *adminWorld) invite(t *testing.T, email, role string) string {
	t.Helper()
	res := w.api("POST", "/users", w.admin, map[string]any{"email": email, "role_slug": role})
	webtest.Check(t, res, webtest.Scenario{Status: 201})
	return res.JSON()["id"].(string)
}

// accept accepts the newest invitation to email and returns a token of the user.
func (w *adminWorld) accept(t *testing.T, email string) string {
	t.Helper()
	res := w.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/invitations/" + w.lastToken(t, email, "invite") + "/accept",
		Body: map[string]any{"password": "a long enough password"}})
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{`"status":"active"`}})
	return w.s.Token(email)
}

// An organisation's admin invites a person by e-mail, exactly as the partner
// API does: 201, the invitation e-mail with its /invite/ link, the audit entry
// and the organization.user.created event; the person accepts and is active,
// and their sign-in shows in the list.
func TestAdminInviteAndAccept(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	s := w.s
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/admin/users", Token: w.admin, Header: map[string]string{"Idempotency-Key": "invite-1"},
		Body: map[string]any{"email": "New.Person@Acme.test", "first_name": "Nora", "last_name": "New"}})
	webtest.Check(t, res, webtest.Scenario{Status: 201, Contains: []string{`"email":"New.Person@Acme.test"`, `"status":"invited"`, `"role_slug":"member"`,
		`"organization_id":"` + w.org + `"`, `"last_sign_in_at":null`}})
	uid := res.JSON()["id"].(string)
	// A retry with the same key replays the answer and invites nobody twice.
	again := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/admin/users", Token: w.admin, Header: map[string]string{"Idempotency-Key": "invite-1"},
		Body: map[string]any{"email": "New.Person@Acme.test", "first_name": "Nora", "last_name": "New"}})
	webtest.Check(t, again, webtest.Scenario{Status: 201, Contains: []string{uid}, Headers: map[string]string{"X-Idempotency-Replayed": "true"}})

	mails := w.mails(t, "New.Person@Acme.test")
	if len(mails) != 1 || !strings.Contains(mails[0].Subject, "Acme") || !strings.Contains(mails[0].Body, s.URL+"/invite/") || !strings.Contains(mails[0].Body, "Nora New") {
		t.Fatalf("invitation mail: %+v", mails)
	}
	if ev := w.events(t, "organization.user.created", w.org); len(ev) != 1 || ev[0].Data["user_id"] != uid || ev[0].Data["email"] != "New.Person@Acme.test" {
		t.Fatalf("events %+v", ev)
	}
	if !w.audited(t, w.org, "user.invited", uid) {
		t.Fatal("no audit entry user.invited of the admin module")
	}

	w.accept(t, "New.Person@Acme.test")
	if _, _, err := s.Main.Identity.SignIn(context.Background(), identity.SignInInput{Email: "new.person@acme.test", Password: "a long enough password"}); err != nil {
		t.Fatal(err)
	}
	u := w.api("GET", "/users/"+uid, w.admin, nil)
	webtest.Check(t, u, webtest.Scenario{Status: 200, Contains: []string{`"status":"active"`}})
	if u.JSON()["last_sign_in_at"] == nil || u.JSON()["last_active_at"] == nil {
		t.Fatalf("no last sign-in or activity after signing in: %s", u.Body)
	}

	// The list: everyone of Acme, searchable, filterable, by pages.
	w.invite(t, "pending@acme.test", "member")
	s.Run(t, []webtest.Scenario{
		{Name: "all", Request: w.req("GET", "/users", w.admin, nil), Status: 200,
			Contains:    []string{"boss@acme.test", "max@acme.test", "New.Person@Acme.test", "pending@acme.test"},
			NotContains: []string{"globex"}},
		{Name: "search e-mail", Request: w.req("GET", "/users?q=PENDING", w.admin, nil), Status: 200, Contains: []string{"pending@acme.test"}, NotContains: []string{"boss@acme.test"}},
		{Name: "search full name", Request: w.req("GET", "/users?q=nora%20new", w.admin, nil), Status: 200, Contains: []string{uid}, NotContains: []string{"max@acme.test"}},
		{Name: "search matches nothing", Request: w.req("GET", "/users?q=100%25", w.admin, nil), Status: 200, Contains: []string{`"items":[]`}},
		{Name: "invited only", Request: w.req("GET", "/users?status=invited", w.admin, nil), Status: 200, Contains: []string{"pending@acme.test"}, NotContains: []string{"boss@acme.test", uid}},
		{Name: "bad status", Request: w.req("GET", "/users?status=gone", w.admin, nil), Status: 422, Problem: "validation_failed", Contains: []string{"query.status"}},
		{Name: "first page", Request: w.req("GET", "/users?limit=1", w.admin, nil), Status: 200, Contains: []string{`"next_cursor":"`}},
	})
	var seen []string
	for path := "/users?limit=2"; len(seen) < 10; {
		var pg struct {
			Items []struct {
				Email string `json:"email"`
			} `json:"items"`
			NextCursor string `json:"next_cursor"`
		}
		w.api("GET", path, w.admin, nil).Decode(t, &pg)
		for _, it := range pg.Items {
			seen = append(seen, it.Email)
		}
		if pg.NextCursor == "" {
			break
		}
		path = "/users?limit=2&cursor=" + pg.NextCursor
	}
	if len(seen) != 4 {
		t.Fatalf("paged through %v, want Acme's 4 users", seen)
	}
}

// Invitations and activations take a seat: beyond the subscription's seats
// they are seat_floor.
func TestAdminSeatFloor(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	first := w.invite(t, "one@acme.test", "member") // 3 of 4 seats
	w.invite(t, "two@acme.test", "member")          // 4 of 4
	w.s.Run(t, []webtest.Scenario{
		{Name: "no seat left", Request: w.req("POST", "/users", w.admin, map[string]any{"email": "three@acme.test"}), Status: 409, Problem: "seat_floor",
			Contains: []string{"all 4 seats are in use"}},
		{Name: "another organisation's address: the same answer as any", Request: w.req("POST", "/users", w.admin, map[string]any{"email": "gus@globex.test"}), Status: 409, Problem: "seat_floor"},
		{Name: "bad address", Request: w.req("POST", "/users", w.admin, map[string]any{"email": "nobody"}), Status: 422, Problem: "validation_failed", Contains: []string{"body.email"}},
		{Name: "subscription", Request: w.req("GET", "/subscription", w.admin, nil), Status: 200, Contains: []string{`"seats":4`, `"used_seats":4`}},
	})
	// Deleting an invitation frees its seat; suspending a user frees theirs,
	// and activating them again needs one.
	webtest.Check(t, w.api("DELETE", "/users/"+first, w.admin, nil), webtest.Scenario{Status: 204})
	webtest.Check(t, w.api("POST", "/users/"+w.memberID+"/suspend", w.admin, nil), webtest.Scenario{Status: 200})
	w.invite(t, "three@acme.test", "member")
	w.invite(t, "four@acme.test", "member")
	webtest.Check(t, w.api("POST", "/users/"+w.memberID+"/activate", w.admin, nil), webtest.Scenario{Status: 409, Problem: "seat_floor",
		Contains: []string{"activate the user"}})
	if len(w.mails(t, "three@acme.test")) != 1 {
		t.Fatal("no invitation mail after the seat was freed")
	}
}

// Suspension ends a user's access at once and activation restores it; the
// state actions answer the updated user and say why they cannot apply.
func TestAdminUserStates(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	s := w.s
	me := webtest.Request{Method: "GET", Path: "/api/v1/me", Token: w.member}
	pending := w.invite(t, "pending@acme.test", "member")
	s.Run(t, []webtest.Scenario{
		{Name: "member's token works", Request: me, Status: 200},
		{Name: "suspend", Request: w.req("POST", "/users/"+w.memberID+"/suspend", w.admin, nil), Status: 200, Contains: []string{`"status":"suspended"`, w.memberID}},
		{Name: "suspended token refused", Request: me, Status: 403, Problem: "forbidden"},
		{Name: "suspend again is unchanged", Request: w.req("POST", "/users/"+w.memberID+"/suspend", w.admin, nil), Status: 200, Contains: []string{`"status":"suspended"`}},
		{Name: "no reset for a suspended user", Request: w.req("POST", "/users/"+w.memberID+"/reset-password", w.admin, nil), Status: 409, Problem: "conflict",
			Contains: []string{"must be active"}},
		{Name: "activate", Request: w.req("POST", "/users/"+w.memberID+"/activate", w.admin, nil), Status: 200, Contains: []string{`"status":"active"`}},
		{Name: "token works again", Request: me, Status: 200},
		{Name: "reset password", Request: w.req("POST", "/users/"+w.memberID+"/reset-password", w.admin, nil), Status: 200, Contains: []string{`"status":"active"`}},
		{Name: "no invitation for an active user", Request: w.req("POST", "/users/"+w.memberID+"/resend-invitation", w.admin, nil), Status: 409, Problem: "conflict"},
		{Name: "resend invitation", Request: w.req("POST", "/users/"+pending+"/resend-invitation", w.admin, nil), Status: 200, Contains: []string{`"status":"invited"`}},
		{Name: "cannot suspend an invitation", Request: w.req("POST", "/users/"+pending+"/suspend", w.admin, nil), Status: 409, Problem: "conflict"},
		{Name: "no such action", Request: w.req("POST", "/users/"+w.memberID+"/explode", w.admin, nil), Status: 404},
	})
	// The reset link works: the member chooses a new password and signs in.
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/password-resets/" + w.lastToken(t, "max@acme.test", "reset") + "/accept",
		Body: map[string]any{"password": "a brand new password"}})
	webtest.Check(t, res, webtest.Scenario{Status: 200})
	if _, _, err := s.Main.Identity.SignIn(context.Background(), identity.SignInInput{Email: "max@acme.test", Password: "a brand new password"}); err != nil {
		t.Fatalf("sign in with the reset password: %v", err)
	}
	if n := len(w.mails(t, "pending@acme.test")); n != 2 {
		t.Fatalf("%d invitation mails to pending@, want 2", n)
	}
	if ev := w.events(t, "organization.user.updated", w.org); len(ev) != 2 {
		t.Fatalf("%d organization.user.updated events, want suspend and activate: %+v", len(ev), ev)
	}
	for _, a := range []string{"user.suspend", "user.activate", "user.password_reset_sent", "user.invitation_resent"} {
		target := w.memberID
		if a == "user.invitation_resent" {
			target = pending
		}
		if !w.audited(t, w.org, a, target) {
			t.Errorf("no audit entry %s", a)
		}
	}
}

// Roles change both ways; nobody removes their own admin rights, and the
// organisation always keeps an active admin.
func TestAdminRolesAndTheLastAdmin(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	s := w.s
	// An unbound service principal with admin:access, which is no admin user.
	var sp, tok map[string]any
	c := driveClient{t: t, s: s, tok: w.admin}
	c.ok(201, "POST", "/api/v1/developer/service-principals", map[string]any{"name": "robot", "scopes": []string{"admin:access"}}, &sp)
	c.ok(201, "POST", "/api/v1/developer/service-principals/"+sp["id"].(string)+"/tokens", map[string]any{}, &tok)
	robot := tok["token"].(string)
	role := func(r string) map[string]any { return map[string]any{"role_slug": r} }
	s.Run(t, []webtest.Scenario{
		{Name: "cannot suspend oneself", Request: w.req("POST", "/users/"+w.adminID+"/suspend", w.admin, nil), Status: 409, Problem: "conflict", Contains: []string{"cannot suspend yourself"}},
		{Name: "cannot demote oneself", Request: w.req("POST", "/users/"+w.adminID+"/change-role", w.admin, role("member")), Status: 409, Problem: "conflict", Contains: []string{"cannot demote yourself"}},
		{Name: "cannot delete oneself", Request: w.req("DELETE", "/users/"+w.adminID, w.admin, nil), Status: 409, Problem: "conflict", Contains: []string{"cannot delete yourself"}},
		{Name: "last admin not suspended", Request: w.req("POST", "/users/"+w.adminID+"/suspend", robot, nil), Status: 409, Problem: "conflict", Contains: []string{"last active admin"}},
		{Name: "last admin not demoted", Request: w.req("POST", "/users/"+w.adminID+"/change-role", robot, role("member")), Status: 409, Problem: "conflict", Contains: []string{"last active admin"}},
		{Name: "last admin not deleted", Request: w.req("DELETE", "/users/"+w.adminID, robot, nil), Status: 409, Problem: "conflict", Contains: []string{"last active admin"}},
		{Name: "bad role", Request: w.req("POST", "/users/"+w.memberID+"/change-role", w.admin, role("owner")), Status: 422, Problem: "validation_failed", Contains: []string{"role_slug"}},
		{Name: "promote the member", Request: w.req("POST", "/users/"+w.memberID+"/change-role", w.admin, role("admin")), Status: 200, Contains: []string{`"role_slug":"admin"`}},
	})
	// A token keeps the scopes it was made with: the new admin makes a new one.
	maxAdmin := s.Token("max@acme.test")
	s.Run(t, []webtest.Scenario{
		// With a second active admin, either may be demoted by the other.
		{Name: "the new admin demotes the first", Request: w.req("POST", "/users/"+w.adminID+"/change-role", maxAdmin, role("member")), Status: 200, Contains: []string{`"role_slug":"member"`}},
		{Name: "the demoted admin's token lost admin:access", Request: w.req("GET", "/users", w.admin, nil), Status: 403, Problem: "insufficient_scope"},
		{Name: "now the last admin", Request: w.req("POST", "/users/"+w.memberID+"/suspend", robot, nil), Status: 409, Problem: "conflict", Contains: []string{"max@acme.test", "last active admin"}},
		{Name: "promote back", Request: w.req("POST", "/users/"+w.adminID+"/change-role", robot, role("admin")), Status: 200, Contains: []string{`"role_slug":"admin"`}},
		{Name: "an invited admin is no active admin", Request: w.req("POST", "/users", robot, map[string]any{"email": "newboss@acme.test", "role_slug": "admin"}), Status: 201},
	})
	if ev := w.events(t, "organization.user.updated", w.org); len(ev) != 3 || fmt.Sprint(ev[0].Data["changed_fields"]) != "[role_slug]" {
		t.Fatalf("events %+v, want three role changes", ev)
	}
	if !w.audited(t, w.org, "user.updated", w.memberID) {
		t.Fatal("no audit entry of the role change")
	}
}

// Only an admin of the organisation reaches the admin API, and only for its
// own users and teams.
func TestAdminAccess(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	ops := []struct{ method, path string }{
		{"GET", "/users"}, {"POST", "/users"}, {"GET", "/users/" + w.memberID}, {"DELETE", "/users/" + w.memberID},
		{"POST", "/users/" + w.memberID + "/suspend"}, {"POST", "/users/" + w.memberID + "/change-role"},
		{"GET", "/teams"}, {"POST", "/teams"}, {"GET", "/organization"}, {"PATCH", "/organization"}, {"GET", "/subscription"},
	}
	var rows []webtest.Scenario
	for _, o := range ops {
		var body any
		if o.method != "GET" && o.method != "DELETE" {
			body = map[string]any{}
		}
		rows = append(rows, webtest.Scenario{Name: "member " + o.method + " " + o.path, Request: w.req(o.method, o.path, w.member, body),
			Status: 403, Problem: "insufficient_scope"})
	}
	noAdmin := w.s.Token("boss@acme.test", "contacts:read", "drive:write")
	rows = append(rows,
		webtest.Scenario{Name: "admin's token without admin:access", Request: w.req("GET", "/users", noAdmin, nil), Status: 403, Problem: "insufficient_scope"},
		webtest.Scenario{Name: "no credential", Request: w.req("GET", "/users", "", nil), Status: 401, Problem: "unauthorized"},
	)
	for _, o := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/users/" + w.otherUserID, nil},
		{"DELETE", "/users/" + w.otherUserID, nil},
		{"POST", "/users/" + w.otherUserID + "/suspend", nil},
		{"POST", "/users/" + w.otherUserID + "/reset-password", nil},
		{"POST", "/users/" + w.otherUserID + "/change-role", map[string]any{"role_slug": "admin"}},
		{"GET", "/teams/" + w.otherTeamID, nil},
		{"PATCH", "/teams/" + w.otherTeamID, map[string]any{"name": "Mine"}},
		{"DELETE", "/teams/" + w.otherTeamID, nil},
		{"GET", "/teams/" + w.otherTeamID + "/members", nil},
		{"POST", "/teams/" + w.otherTeamID + "/members", map[string]any{"user_id": w.memberID}},
	} {
		rows = append(rows, webtest.Scenario{Name: "another organisation's " + o.method + " " + o.path, Request: w.req(o.method, o.path, w.admin, o.body),
			Status: 404, Problem: "not_found", NotContains: []string{"globex"}})
	}
	w.s.Run(t, rows)
	// Globex's user is untouched.
	webtest.Check(t, w.api("GET", "/users/"+w.otherUserID, w.otherAdmin, nil), webtest.Scenario{Status: 200, Contains: []string{`"status":"active"`, `"role_slug":"member"`}})
}

// Deleting a user deletes their data: the drive gives their storage back, and
// their credentials stop working.
func TestAdminDeleteUserFreesTheirDrive(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	uid := w.invite(t, "dev@acme.test", "member")
	dev := driveClient{t: t, s: w.s, tok: w.accept(t, "dev@acme.test")}
	boss := driveClient{t: t, s: w.s, tok: w.admin}
	boss.upload("boss.txt", "", "text/plain", bytes.Repeat([]byte("b"), 1000))
	dev.upload("dev.txt", "", "text/plain", bytes.Repeat([]byte("d"), 5000))
	webtest.Check(t, w.api("GET", "/subscription", w.admin, nil), webtest.Scenario{Status: 200, Contains: []string{`"storage_used_bytes":6000`}})

	webtest.Check(t, w.api("DELETE", "/users/"+uid, w.admin, nil), webtest.Scenario{Status: 204})

	w.s.Run(t, []webtest.Scenario{
		{Name: "storage back", Request: w.req("GET", "/subscription", w.admin, nil), Status: 200, Contains: []string{`"storage_used_bytes":1000`, `"used_seats":2`}},
		{Name: "gone", Request: w.req("GET", "/users/"+uid, w.admin, nil), Status: 404, Problem: "not_found"},
		{Name: "deleted again", Request: w.req("DELETE", "/users/"+uid, w.admin, nil), Status: 404, Problem: "not_found"},
		{Name: "token dead", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: dev.tok}, Status: 401, Problem: "unauthorized"},
	})
	if u := boss.usage(); u.UsedBytes != 1000 || u.FileCount != 1 {
		t.Fatalf("drive usage after: %+v, want only boss.txt", u)
	}
	if ev := w.events(t, "organization.user.deleted", w.org); len(ev) != 1 || ev[0].Data["user_id"] != uid {
		t.Fatalf("events %+v", ev)
	}
	if !w.audited(t, w.org, "user.deleted", uid) {
		t.Fatal("no audit entry user.deleted")
	}
}

// Teams: create, list, get, rename, delete; members added and removed, users
// of the organisation only.
func TestAdminTeams(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	s := w.s
	res := w.api("POST", "/teams", w.admin, map[string]any{"name": "Sales"})
	webtest.Check(t, res, webtest.Scenario{Status: 201, Contains: []string{`"name":"Sales"`, `"member_count":0`, `"organization_id":"` + w.org + `"`}})
	team := res.JSON()["id"].(string)
	tp := "/teams/" + team
	s.Run(t, []webtest.Scenario{
		{Name: "duplicate name", Request: w.req("POST", "/teams", w.admin, map[string]any{"name": "SALES"}), Status: 409, Problem: "conflict"},
		{Name: "empty name", Request: w.req("POST", "/teams", w.admin, map[string]any{"name": "   "}), Status: 422, Problem: "validation_failed", Contains: []string{"body.name"}},
		{Name: "list", Request: w.req("GET", "/teams", w.admin, nil), Status: 200, Contains: []string{team}, NotContains: []string{w.otherTeamID, "Globex Team"}},
		{Name: "get", Request: w.req("GET", tp, w.admin, nil), Status: 200, Contains: []string{`"name":"Sales"`}},
		{Name: "rename", Request: w.req("PATCH", tp, w.admin, map[string]any{"name": "Sales EU"}), Status: 200, Contains: []string{`"name":"Sales EU"`}},
		{Name: "add member", Request: w.req("POST", tp+"/members", w.admin, map[string]any{"user_id": w.memberID}), Status: 201, Contains: []string{`"email":"max@acme.test"`}},
		{Name: "add twice", Request: w.req("POST", tp+"/members", w.admin, map[string]any{"user_id": w.memberID}), Status: 409, Problem: "conflict"},
		{Name: "add another organisation's user", Request: w.req("POST", tp+"/members", w.admin, map[string]any{"user_id": w.otherUserID}), Status: 422,
			Problem: "validation_failed", Contains: []string{"body.user_id"}},
		{Name: "members", Request: w.req("GET", tp+"/members", w.admin, nil), Status: 200, Contains: []string{w.memberID}},
		{Name: "count", Request: w.req("GET", tp, w.admin, nil), Status: 200, Contains: []string{`"member_count":1`}},
		{Name: "remove member", Request: w.req("DELETE", tp+"/members/"+w.memberID, w.admin, nil), Status: 204},
		{Name: "remove again", Request: w.req("DELETE", tp+"/members/"+w.memberID, w.admin, nil), Status: 404, Problem: "not_found"},
		{Name: "empty", Request: w.req("GET", tp+"/members", w.admin, nil), Status: 200, Contains: []string{`"items":[]`}},
		{Name: "delete", Request: w.req("DELETE", tp, w.admin, nil), Status: 204},
		{Name: "deleted", Request: w.req("GET", tp, w.admin, nil), Status: 404, Problem: "not_found"},
	})
	for _, a := range []string{"team.created", "team.updated", "team.member_added", "team.member_removed", "team.deleted"} {
		if !w.audited(t, w.org, a, team) {
			t.Errorf("no audit entry %s", a)
		}
	}
}

// The organisation's settings: name, logo (a URL or a small PNG/JPEG inline)
// and mail domain (which restricts invitations only when asked to); invalid
// input names the field and changes nothing.
func TestAdminOrganizationSettings(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	png := "data:image/png;base64," + base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 200)...))
	bigPNG := "data:image/png;base64," + base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 100<<10)...))
	svg := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
	notPNG := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("GIF89a not a png"))
	patch := func(body map[string]any) webtest.Request { return w.req("PATCH", "/organization", w.admin, body) }
	w.s.Run(t, []webtest.Scenario{
		{Name: "get", Request: w.req("GET", "/organization", w.admin, nil), Status: 200, Contains: []string{`"name":"Acme"`, `"seats":4`, `"user_count":2`, `"plan_slug":"business"`}},
		{Name: "rename", Request: patch(map[string]any{"name": "  Acme Ltd  "}), Status: 200, Contains: []string{`"name":"Acme Ltd"`}},
		{Name: "logo inline", Request: patch(map[string]any{"logo_url": png}), Status: 200, Contains: []string{png}},
		{Name: "logo URL", Request: patch(map[string]any{"logo_url": "https://cdn.acme.test/logo.png"}), Status: 200, Contains: []string{`"logo_url":"https://cdn.acme.test/logo.png"`}},
		{Name: "mail domain", Request: patch(map[string]any{"mail_domain": "Acme.TEST"}), Status: 200, Contains: []string{`"mail_domain":"acme.test"`}},
		{Name: "empty name", Request: patch(map[string]any{"name": ""}), Status: 422, Problem: "validation_failed", Contains: []string{"body.name"}},
		{Name: "logo too big", Request: patch(map[string]any{"logo_url": bigPNG}), Status: 422, Problem: "validation_failed", Contains: []string{"body.logo_url", "100 KiB"}},
		{Name: "svg logo", Request: patch(map[string]any{"logo_url": svg}), Status: 422, Problem: "validation_failed", Contains: []string{"body.logo_url"}},
		{Name: "logo not what it says", Request: patch(map[string]any{"logo_url": notPNG}), Status: 422, Problem: "validation_failed", Contains: []string{"body.logo_url"}},
		{Name: "script logo", Request: patch(map[string]any{"logo_url": "javascript:alert(1)"}), Status: 422, Problem: "validation_failed", Contains: []string{"body.logo_url"}},
		{Name: "bad mail domain, good name", Request: patch(map[string]any{"mail_domain": "not a domain", "name": "Changed"}), Status: 422, Problem: "validation_failed",
			Contains: []string{"body.mail_domain"}},
		{Name: "nothing changed by refusals", Request: w.req("GET", "/organization", w.admin, nil), Status: 200,
			Contains: []string{`"name":"Acme Ltd"`, `"logo_url":"https://cdn.acme.test/logo.png"`, `"mail_domain":"acme.test"`}},
		{Name: "billing is not the admin's", Request: patch(map[string]any{"billing_email": "x@acme.test"}), Status: 422},
		// A mail domain alone limits nothing: people are invited at the
		// addresses they have.
		{Name: "invite elsewhere, not restricted", Request: w.req("POST", "/users", w.admin, map[string]any{"email": "first@gmail.test"}), Status: 201},
		{Name: "restrict without a domain", Request: patch(map[string]any{"mail_domain": "", "restrict_invitations_to_mail_domain": true}), Status: 422, Problem: "validation_failed",
			Contains: []string{"body.restrict_invitations_to_mail_domain"}},
		{Name: "still a domain, unrestricted", Request: w.req("GET", "/organization", w.admin, nil), Status: 200,
			Contains: []string{`"mail_domain":"acme.test"`, `"restrict_invitations_to_mail_domain":false`}},
		{Name: "restrict", Request: patch(map[string]any{"restrict_invitations_to_mail_domain": true}), Status: 200,
			Contains: []string{`"restrict_invitations_to_mail_domain":true`}},
		{Name: "invite elsewhere", Request: w.req("POST", "/users", w.admin, map[string]any{"email": "someone@gmail.test"}), Status: 422, Problem: "validation_failed",
			Contains: []string{"body.email", "acme.test"}},
		{Name: "invite at a subdomain", Request: w.req("POST", "/users", w.admin, map[string]any{"email": "someone@eu.acme.test"}), Status: 422, Problem: "validation_failed"},
		{Name: "invite at the domain", Request: w.req("POST", "/users", w.admin, map[string]any{"email": "someone@ACME.test"}), Status: 201},
		{Name: "the domain cannot go while restricted", Request: patch(map[string]any{"mail_domain": ""}), Status: 422, Problem: "validation_failed",
			Contains: []string{"body.mail_domain"}},
		{Name: "remove the domain and the restriction", Request: patch(map[string]any{"mail_domain": "", "restrict_invitations_to_mail_domain": false}), Status: 200,
			Contains: []string{`"mail_domain":""`, `"restrict_invitations_to_mail_domain":false`}},
		{Name: "invite elsewhere again", Request: w.req("POST", "/users", w.admin, map[string]any{"email": "someone@gmail.test"}), Status: 409, Problem: "seat_floor"}, // past the domain rule: only the seats are full
	})
	if !w.audited(t, w.org, "organization.updated", w.org) {
		t.Fatal("no audit entry organization.updated")
	}
}

// The subscription is read only: plan, seats and their use, quota and storage.
func TestAdminSubscription(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	w.invite(t, "pending@acme.test", "member")
	w.s.Run(t, []webtest.Scenario{
		{Name: "read", Request: w.req("GET", "/subscription", w.admin, nil), Status: 200, Contains: []string{`"plan_slug":"business"`, `"seats":4`,
			`"used_seats":3`, `"status":"active"`, fmt.Sprintf(`"quota_bytes":%d`, int64(1)<<40), `"storage_used_bytes":0`}},
		{Name: "member", Request: w.req("GET", "/subscription", w.member, nil), Status: 403, Problem: "insufficient_scope"},
	})
}

// A person who lost their authenticator and recovery codes: an admin turns
// their two-factor sign-in off; they sign in with their password alone, are
// told by e-mail, and the audit log says who did it. Not on → 409; a member
// cannot; an invitation has none.
func TestAdminResetTwoFactor(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	s, ctx := w.s, context.Background()
	inv := w.invite(t, "lost@acme.test", "member")
	w.accept(t, "lost@acme.test")
	lost := s.Token("lost@acme.test")
	p, err := s.Main.Identity.Authenticate(ctx, lost)
	if err != nil {
		t.Fatal(err)
	}
	setup, err := s.Main.Identity.SetUpTwoFactor(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Main.Identity.EnableTwoFactor(ctx, p, totpCode(t, setup.Secret, s.Clock.Now())); err != nil {
		t.Fatal(err)
	}
	signIn := func() error {
		_, _, err := s.Main.Identity.SignIn(ctx, identity.SignInInput{Email: "lost@acme.test", Password: "a long enough password"})
		return err
	}
	if err := signIn(); app.ErrorCode(err) != app.EUnauthorized {
		t.Fatalf("password alone with two-factor on: %v", err)
	}
	row := func() string {
		res := w.api("GET", "/users?q=lost", w.admin, nil)
		webtest.Check(t, res, webtest.Scenario{Status: 200})
		return string(res.Body)
	}
	if !strings.Contains(row(), `"two_factor":true`) {
		t.Fatalf("the list does not show two-factor on: %s", row())
	}
	pending := w.invite(t, "new@acme.test", "member")
	s.Run(t, []webtest.Scenario{
		{Name: "a member cannot", Request: w.req("POST", "/users/"+inv+"/reset-two-factor", w.member, nil), Status: 403},
		{Name: "not for an invitation", Request: w.req("POST", "/users/"+pending+"/reset-two-factor", w.admin, nil), Status: 409, Problem: "conflict",
			Contains: []string{"must be active or suspended"}},
		{Name: "another organisation's user", Request: w.req("POST", "/users/"+w.otherUserID+"/reset-two-factor", w.admin, nil), Status: 404},
		{Name: "reset", Request: w.req("POST", "/users/"+inv+"/reset-two-factor", w.admin, nil), Status: 200, Contains: []string{`"two_factor":false`}},
		{Name: "again: not on", Request: w.req("POST", "/users/"+inv+"/reset-two-factor", w.admin, nil), Status: 409, Problem: "conflict",
			Contains: []string{"no two-factor sign-in"}},
	})
	if err := signIn(); err != nil {
		t.Fatalf("password alone after the reset: %v", err)
	}
	if strings.Contains(row(), `"two_factor":true`) {
		t.Fatalf("the list still shows two-factor on: %s", row())
	}
	told := false
	for _, m := range w.mails(t, "lost@acme.test") {
		told = told || (m.Subject == "Two-factor sign-in turned off" && strings.Contains(m.Body, "/settings"))
	}
	if !told {
		t.Fatalf("no notice to the person: %+v", w.mails(t, "lost@acme.test"))
	}
	if !w.audited(t, w.org, "user.two_factor_reset", inv) {
		t.Fatal("no audit entry user.two_factor_reset")
	}
}

// An admin learns nothing of other organisations' users: inviting an address
// that is a user's of another organisation answers as an invitation does
// (and makes nothing; the address's owner is told), while an address of the
// admin's own organisation is a conflict, as the admin sees its users anyway.
func TestAdminInviteTellsNothingOfOtherOrganisations(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	free := w.api("POST", "/users", w.admin, map[string]any{"email": "free@elsewhere.test"})
	taken := w.api("POST", "/users", w.admin, map[string]any{"email": "gus@globex.test"})
	for _, res := range []*webtest.Response{free, taken} {
		webtest.Check(t, res, webtest.Scenario{Status: 201, Contains: []string{`"status":"invited"`, `"role_slug":"member"`}})
	}
	if free.Header.Get("Content-Type") != taken.Header.Get("Content-Type") || len(free.JSON()) != len(taken.JSON()) {
		t.Fatalf("the answers differ in shape:\n%s\n%s", free.Body, taken.Body)
	}
	if got := w.mails(t, "gus@globex.test"); len(got) != 1 || !strings.Contains(got[0].Subject, "tried to invite you") || strings.Contains(got[0].Body, "/invite/") {
		t.Fatalf("the owner of the address is not told (or got an invitation): %+v", got)
	}
	u, err := w.s.Main.Identity.UserByEmail(context.Background(), "gus@globex.test")
	if err != nil || u.OrgID != w.otherOrg || u.Status != "active" {
		t.Fatalf("the other organisation's user changed: %+v %v", u, err)
	}
	webtest.Check(t, w.api("POST", "/users", w.admin, map[string]any{"email": "free@elsewhere.test"}), webtest.Scenario{Status: 409, Problem: "conflict",
		Contains: []string{"of this organisation"}})
}
