package web_test

import (
	"context"
	"strings"
	"testing"

	"atrium/app/identity"
	"atrium/webtest"
)

// The organisation admin's pages: an admin gets them (and the Admin link), a
// member gets 404 (and no link), a stranger the sign-in page; user text on
// them is escaped.
func TestWebAppAdminPages(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ctx := context.Background()
	boss := person(t, s, "Admin Pages Org", "boss@adminpages.test", "admin")
	const xss = `<img src=x onerror=alert(1)>`
	mem, err := s.Main.Identity.EnsureUser(ctx, boss.OrganizationID, identity.EnsureUserInput{Email: "mem@adminpages.test", FirstName: "Mia", LastName: xss, Role: "member"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Main.Identity.SetAccountPassword(ctx, mem.ID, testPassword); err != nil {
		t.Fatal(err)
	}
	// The member stores a file: the usage chart names them.
	driveClient{t: t, s: s, tok: s.Token(mem.Email)}.upload("notes.txt", "", "text/plain", []byte("some notes"))

	pages := []struct{ path, has string }{
		{"/admin", `id="invite-open"`},
		{"/admin/teams", `id="team-create"`},
		{"/admin/usage", "Storage by user"},
		{"/admin/audit", `id="audit-filter"`},
	}
	admin := newBrowser(t, s)
	admin.mustSignIn(boss.Email, testPassword)
	member := newBrowser(t, s)
	member.mustSignIn(mem.Email, testPassword)
	stranger := newBrowser(t, s)
	for _, pg := range pages {
		t.Run(pg.path, func(t *testing.T) {
			p := admin.get(pg.path)
			if p.StatusCode != 200 || !strings.Contains(p.Body, pg.has) || !strings.Contains(p.Body, `aria-label="Administration"`) {
				t.Fatalf("admin: %d %s", p.StatusCode, p.Body)
			}
			if !strings.Contains(p.Body, `<a href="/admin" aria-current="page">Admin</a>`) {
				t.Fatal("the Admin link of the navigation is not current")
			}
			if p := member.get(pg.path); p.StatusCode != 404 || strings.Contains(p.Body, pg.has) {
				t.Fatalf("member: %d", p.StatusCode)
			}
			if p := stranger.get(pg.path); p.StatusCode != 303 || !strings.HasPrefix(p.Header.Get("Location"), "/signin?next=") {
				t.Fatalf("signed out: %d %s", p.StatusCode, p.Header.Get("Location"))
			}
		})
	}
	if p := member.get("/settings"); strings.Contains(p.Body, `href="/admin"`) {
		t.Fatal("a member sees the Admin link")
	}

	p := admin.get("/admin/usage")
	for _, want := range []string{"mem@adminpages.test", "Mia &lt;img src=x onerror=alert(1)&gt;", "Plan: Enterprise", "Text", "10 B"} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the usage page lacks %q", want)
		}
	}
	if strings.Contains(p.Body, "<img src=x") {
		t.Fatal("the name is not escaped on the usage page")
	}
}
