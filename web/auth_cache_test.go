package web_test

import (
	"context"
	"testing"

	"atrium/app/identity"
	"atrium/webtest"
)

// TestCredentialCacheInvalidation: a personal access token and an app
// password are verified from an in-memory cache, and every change to who may
// do what takes effect on the very next request — no waiting for the cache to
// expire (the test clock does not move).
func TestCredentialCacheInvalidation(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ctx := context.Background()

	type creds struct{ pat, patID, appPW, appPWID, userID, org string }
	// fresh bootstraps a user of a new organisation with a PAT and an app
	// password made through the self-service API.
	n := 0
	fresh := func(t *testing.T, role string) (webtest.Creds, creds) {
		t.Helper()
		n++
		org := "Cache " + string(rune('A'+n))
		u := s.Bootstrap(org, "cache"+string(rune('a'+n))+"@example.test", role)
		tok := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/me/tokens", Token: u.Token, Body: map[string]any{"name": "cache"}})
		pw := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/me/app-passwords", Token: u.Token, Body: map[string]any{"label": "cache"}})
		if tok.StatusCode != 201 || pw.StatusCode != 201 {
			t.Fatalf("create credentials: %d %s / %d %s", tok.StatusCode, tok.Body, pw.StatusCode, pw.Body)
		}
		return u, creds{pat: tok.JSON()["token"].(string), patID: tok.JSON()["id"].(string),
			appPW: pw.JSON()["password"].(string), appPWID: pw.JSON()["id"].(string), userID: u.UserID, org: org}
	}
	me := func(c creds) webtest.Request { return webtest.Request{Method: "GET", Path: "/api/v1/me", Token: c.pat} }
	dav := func(email string, c creds) webtest.Request {
		return webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", BasicID: email, BasicPW: c.appPW, Header: map[string]string{"Depth": "0"}}
	}
	// warm answers each request twice, so that the second comes from the cache.
	warm := func(t *testing.T, reqs ...webtest.Request) {
		t.Helper()
		for _, r := range reqs {
			for range 2 {
				if res := s.Do(r); res.StatusCode >= 300 {
					t.Fatalf("%s %s before the change: %d %s", r.Method, r.Path, res.StatusCode, res.Body)
				}
			}
		}
	}

	t.Run("revoking a token", func(t *testing.T) {
		u, c := fresh(t, "member")
		warm(t, me(c))
		webtest.Check(t, s.Do(webtest.Request{Method: "DELETE", Path: "/api/v1/me/tokens/" + c.patID, Token: u.Token}), webtest.Scenario{Status: 204})
		webtest.Check(t, s.Do(me(c)), webtest.Scenario{Request: me(c), Status: 401, Problem: "unauthorized"})
	})
	t.Run("revoking an app password", func(t *testing.T) {
		u, c := fresh(t, "member")
		warm(t, dav(u.Email, c))
		webtest.Check(t, s.Do(webtest.Request{Method: "DELETE", Path: "/api/v1/me/app-passwords/" + c.appPWID, Token: u.Token}), webtest.Scenario{Status: 204})
		webtest.Check(t, s.Do(dav(u.Email, c)), webtest.Scenario{Request: dav(u.Email, c), Status: 401})
	})
	t.Run("suspending the user", func(t *testing.T) {
		u, c := fresh(t, "member")
		warm(t, me(c), dav(u.Email, c))
		if err := s.Main.Identity.SetUserStatus(ctx, "", c.userID, identity.UserSuspended); err != nil {
			t.Fatal(err)
		}
		webtest.Check(t, s.Do(me(c)), webtest.Scenario{Request: me(c), Status: 403, Problem: "forbidden"})
		if res := s.Do(dav(u.Email, c)); res.StatusCode != 401 && res.StatusCode != 403 {
			t.Fatalf("WebDAV of a suspended user: %d %s", res.StatusCode, res.Body)
		}
	})
	t.Run("suspending the organisation", func(t *testing.T) {
		u, c := fresh(t, "member")
		warm(t, me(c), dav(u.Email, c))
		if err := s.Main.Identity.SetOrgStatus(ctx, "", u.OrganizationID, identity.OrgSuspended); err != nil {
			t.Fatal(err)
		}
		webtest.Check(t, s.Do(me(c)), webtest.Scenario{Request: me(c), Status: 403, Problem: "org_suspended"})
		if res := s.Do(dav(u.Email, c)); res.StatusCode != 401 && res.StatusCode != 403 {
			t.Fatalf("WebDAV in a suspended organisation: %d %s", res.StatusCode, res.Body)
		}
	})
	t.Run("a renamed organisation shows at once", func(t *testing.T) {
		u, c := fresh(t, "admin")
		warm(t, me(c))
		res := s.Do(webtest.Request{Method: "PATCH", Path: "/api/v1/admin/organization", Token: u.Token, Body: map[string]any{"name": "Renamed Cache Org"}})
		webtest.Check(t, res, webtest.Scenario{Status: 200})
		webtest.Check(t, s.Do(me(c)), webtest.Scenario{Request: me(c), Status: 200, Contains: []string{"Renamed Cache Org"}})
	})
	t.Run("a role change narrows the scopes", func(t *testing.T) {
		u, c := fresh(t, "admin")
		audit := webtest.Request{Method: "GET", Path: "/api/v1/audit", Token: c.pat}
		warm(t, audit)
		// A second admin of the organisation makes the first a member.
		other := s.Bootstrap(c.org, "other-"+u.Email, "admin")
		res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/admin/users/" + c.userID + "/change-role", Token: other.Token,
			Body: map[string]any{"role_slug": "member"}})
		webtest.Check(t, res, webtest.Scenario{Status: 200})
		webtest.Check(t, s.Do(audit), webtest.Scenario{Request: audit, Status: 403, Problem: "insufficient_scope"})
	})
}
