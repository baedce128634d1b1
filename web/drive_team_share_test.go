package web_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"atrium/webtest"
)

// teamShareInfo is a ShareInfo with the team and organisation recipients.
type teamShareInfo struct {
	shareInfo
	SharedWithTeam *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"shared_with_team"`
	SharedWithOrganization bool `json:"shared_with_organization"`
}

func (c driveClient) teamShare(fileID string, body map[string]any) teamShareInfo {
	c.t.Helper()
	var sh teamShareInfo
	c.ok(201, "POST", "/api/v1/drive/"+fileID+"/shares", body, &sh)
	return sh
}

// admin sends a request to the admin API.
func (c driveClient) admin(status int, method, path string, body any) map[string]any {
	c.t.Helper()
	res := c.s.Do(webtest.Request{Method: method, Path: "/api/v1/admin" + path, Token: c.tok, Body: body})
	if res.StatusCode != status {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, res.Body, status)
	}
	var v map[string]any
	_ = json.Unmarshal(res.Body, &v)
	return v
}

// sees reports whether c finds the shared item root in Shared with me, can
// read the item id at or below it, and finds it by a word of its name in
// search.
func (c driveClient) sees(root, id, word string) (listed, readable, found bool) {
	c.t.Helper()
	for _, it := range c.list("/api/v1/drive/shared").Items {
		if it.ID == root {
			listed = true
		}
	}
	readable = c.do("GET", "/api/v1/drive/"+id+"/detail", nil).StatusCode == 200
	for _, h := range c.search(q(word)).Hits {
		if h.ID == id {
			found = true
		}
	}
	return listed, readable, found
}

func (c driveClient) wantSees(who, root, id, word string, want bool) {
	c.t.Helper()
	l, r, f := c.sees(root, id, word)
	if l != want || r != want || f != want {
		c.t.Errorf("%s: listed %v, readable %v, found %v; want all %v", who, l, r, f, want)
	}
}

// A team share reaches every member as the membership is at each request:
// a member added sees the item at once, one removed, suspended or deleted
// loses it at once, in the listing, a read and search.
func TestDriveShareWithTeam(t *testing.T) {
	t.Parallel()
	s, ann := newDrive(t)
	bob := newDavUser(t, s, "Drive Org", "bob@example.test", "member")
	carol := newDavUser(t, s, "Drive Org", "carol@example.test", "member")
	eve := newDavUser(t, s, "Other Org", "eve@example.test", "admin")

	team := ann.admin(201, "POST", "/teams", map[string]any{"name": "Design"})["id"].(string)
	ann.admin(201, "POST", "/teams/"+team+"/members", map[string]any{"user_id": bob.creds.UserID})
	otherTeam := eve.rest.admin(201, "POST", "/teams", map[string]any{"name": "Globex"})["id"].(string)

	project := ann.folder("Moodboards", "")
	brief := ann.upload("brief-zanzibar.txt", project.ID, "text/plain", []byte("the brief"))

	sh := ann.teamShare(project.ID, map[string]any{"team_id": team})
	if sh.Permission != "view" || sh.SharedWithTeam == nil || sh.SharedWithTeam.ID != team || sh.SharedWithTeam.Name != "Design" ||
		sh.SharedWith != nil || sh.ShareLink != nil || sh.SharedWithOrganization {
		t.Fatalf("team share %+v", sh)
	}
	if n := events(t, s, "drive.share.created", map[string]any{"file_id": project.ID, "share_id": sh.ID, "team_id": team, "link": nil}); n != 1 {
		t.Errorf("drive.share.created events for the team share: %d", n)
	}
	var list []teamShareInfo
	ann.ok(200, "GET", "/api/v1/drive/"+project.ID+"/shares", nil, &list)
	if len(list) != 1 || list[0].SharedWithTeam == nil || list[0].SharedWithTeam.Name != "Design" {
		t.Fatalf("shares %+v", list)
	}

	bob.rest.wantSees("bob, a member", project.ID, brief.ID, "zanzibar", true)
	bob.rest.wantSees("bob, the folder", project.ID, project.ID, "Moodboards", true)
	if got := string(bob.rest.download(brief.ID)); got != "the brief" {
		t.Errorf("bob downloads %q", got)
	}
	carol.rest.wantSees("carol, not yet a member", project.ID, brief.ID, "zanzibar", false)
	eve.rest.wantSees("eve, another organisation", project.ID, brief.ID, "zanzibar", false)

	s.Run(t, []webtest.Scenario{
		{Name: "a team of another organisation", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok,
			Body: map[string]any{"team_id": otherTeam}}, Status: 404, Problem: "not_found"},
		{Name: "an unknown team", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok,
			Body: map[string]any{"team_id": "nope"}}, Status: 404, Problem: "not_found"},
		{Name: "a team and a user", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok,
			Body: map[string]any{"team_id": team, "email": "carol@example.test"}}, Status: 422, Problem: "validation_failed"},
		{Name: "a team and the organisation", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok,
			Body: map[string]any{"team_id": team, "organization": true}}, Status: 422, Problem: "validation_failed"},
		{Name: "a member does not reshare", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: bob.rest.tok,
			Body: map[string]any{"team_id": team}}, Status: 403, Problem: "forbidden"},
		{Name: "view: no upload", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/folders", Token: bob.rest.tok,
			Body: map[string]any{"name": "new", "parent_id": project.ID}}, Status: 403, Problem: "forbidden"},
	})

	// Anyone of the organisation finds the teams to share with; its admins
	// see what is shared with each.
	s.Run(t, []webtest.Scenario{
		{Name: "teams to share with", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/share-teams", Token: carol.rest.tok},
			Status: 200, Contains: []string{`"id":"` + team + `"`, `"name":"Design"`}, NotContains: []string{"Globex"}},
		{Name: "what is shared with the team", Request: webtest.Request{Method: "GET", Path: "/api/v1/admin/teams/" + team + "/shares", Token: ann.tok},
			Status: 200, Contains: []string{`"id":"` + sh.ID + `"`, `"file_id":"` + project.ID + `"`, `"file_name":"Moodboards"`, `"is_folder":true`, `"permission":"view"`, `"owner_name":`}},
		{Name: "not for members", Request: webtest.Request{Method: "GET", Path: "/api/v1/admin/teams/" + team + "/shares", Token: bob.rest.tok},
			Status: 403, Problem: "insufficient_scope"},
		{Name: "not another organisation's team", Request: webtest.Request{Method: "GET", Path: "/api/v1/admin/teams/" + otherTeam + "/shares", Token: ann.tok},
			Status: 404, Problem: "not_found"},
	})

	// The mount shows the folder under Shared with me, read-only.
	if g := bob.want(200, "GET", "/Shared%20with%20me/Moodboards/brief-zanzibar.txt", nil, nil); string(g.Body) != "the brief" {
		t.Errorf("bob reads through the mount: %q", g.Body)
	}
	bob.want(403, "PUT", "/Shared%20with%20me/Moodboards/new.txt", nil, "no")

	// Joining: carol sees it at once.
	ann.admin(201, "POST", "/teams/"+team+"/members", map[string]any{"user_id": carol.creds.UserID})
	carol.rest.wantSees("carol, added", project.ID, brief.ID, "zanzibar", true)
	carol.want(200, "GET", "/Shared%20with%20me/Moodboards/brief-zanzibar.txt", nil, nil)

	// Sharing again with the team changes that share: edit lets members write.
	sh2 := ann.teamShare(project.ID, map[string]any{"team_id": team, "permission": "edit"})
	if sh2.ID != sh.ID || sh2.Permission != "edit" {
		t.Fatalf("re-share %+v, want share %s with edit", sh2, sh.ID)
	}
	up := bob.rest.upload("from-bob.txt", project.ID, "text/plain", []byte("bob was here"))
	if up.OwnerID != project.OwnerID {
		t.Errorf("bob's upload is owned by %s, want the folder's owner", up.OwnerID)
	}
	bob.want(403, "PUT", "/Shared%20with%20me/Moodboards/new.txt", nil, "the mount stays read-only")

	// Leaving: bob loses it at once, everywhere.
	ann.admin(204, "DELETE", "/teams/"+team+"/members/"+bob.creds.UserID, nil)
	bob.rest.wantSees("bob, removed", project.ID, brief.ID, "zanzibar", false)
	webtest.Check(t, bob.rest.do("GET", "/api/v1/drive/"+brief.ID+"/download", nil), webtest.Scenario{Status: 404, Problem: "not_found"})
	bob.want(404, "GET", "/Shared%20with%20me/Moodboards/brief-zanzibar.txt", nil, nil)
	carol.rest.wantSees("carol, still a member", project.ID, brief.ID, "zanzibar", true)

	// Suspended, carol is refused; active again, she has it back.
	ann.admin(200, "POST", "/users/"+carol.creds.UserID+"/suspend", nil)
	webtest.Check(t, carol.rest.do("GET", "/api/v1/drive/"+brief.ID+"/detail", nil), webtest.Scenario{Status: 403, Problem: "forbidden"})
	ann.admin(200, "POST", "/users/"+carol.creds.UserID+"/activate", nil)
	carol.rest.wantSees("carol, active again", project.ID, brief.ID, "zanzibar", true)

	// Revoked: nobody has it.
	ann.ok(204, "DELETE", "/api/v1/drive/"+project.ID+"/shares/"+sh.ID, nil, nil)
	carol.rest.wantSees("carol, after the revocation", project.ID, brief.ID, "zanzibar", false)

	// A deleted team takes its shares with it.
	sh3 := ann.teamShare(project.ID, map[string]any{"team_id": team})
	carol.rest.wantSees("carol, shared again", project.ID, brief.ID, "zanzibar", true)
	ann.admin(204, "DELETE", "/teams/"+team, nil)
	carol.rest.wantSees("carol, team deleted", project.ID, brief.ID, "zanzibar", false)
	webtest.Check(t, ann.do("DELETE", "/api/v1/drive/"+project.ID+"/shares/"+sh3.ID, nil), webtest.Scenario{Status: 404, Problem: "not_found"})

	audit := string(ann.do("GET", "/api/v1/audit?limit=100", nil).Body)
	for _, want := range []string{`"share.created"`, `"share.updated"`, `"share.revoked"`, sh.ID, sh3.ID} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit log lacks %s", want)
		}
	}
}

// An organisation share reaches every user of the owner's organisation,
// those who join later included, and nobody outside it.
func TestDriveShareWithOrganization(t *testing.T) {
	t.Parallel()
	s, ann := newDrive(t)
	bob := newDavUser(t, s, "Drive Org", "bob@example.test", "member")
	eve := newDavUser(t, s, "Other Org", "eve@example.test", "admin")

	handbook := ann.upload("handbook-quetzal.txt", "", "text/plain", []byte("welcome"))
	sh := ann.teamShare(handbook.ID, map[string]any{"organization": true})
	if !sh.SharedWithOrganization || sh.SharedWith != nil || sh.SharedWithTeam != nil || sh.ShareLink != nil || sh.Permission != "view" {
		t.Fatalf("organisation share %+v", sh)
	}
	if n := events(t, s, "drive.share.created", map[string]any{"file_id": handbook.ID, "share_id": sh.ID, "organization": true}); n != 1 {
		t.Errorf("drive.share.created events for the organisation share: %d", n)
	}
	bob.rest.wantSees("bob", handbook.ID, handbook.ID, "quetzal", true)
	bob.want(200, "GET", "/Shared%20with%20me/handbook-quetzal.txt", nil, nil)
	eve.rest.wantSees("eve, another organisation", handbook.ID, handbook.ID, "quetzal", false)

	// The owner does not find their own item among what is shared with them.
	if l := ann.list("/api/v1/drive/shared"); l.Total != 0 {
		t.Errorf("the owner's Shared with me: %+v", l)
	}

	// Someone who joins later has it at once.
	dan := newDavUser(t, s, "Drive Org", "dan@example.test", "member")
	dan.rest.wantSees("dan, new", handbook.ID, handbook.ID, "quetzal", true)

	// Shared twice with bob — with the organisation to view, with him to
	// edit — the item shows once, with the broader permission.
	ann.share(handbook.ID, map[string]any{"user_id": bob.creds.UserID, "permission": "edit"})
	shared := bob.rest.list("/api/v1/drive/shared")
	if shared.Total != 1 || len(shared.Items) != 1 {
		t.Fatalf("bob's Shared with me lists %d items, want the one", shared.Total)
	}
	if !strings.Contains(string(bob.rest.do("GET", "/api/v1/drive/shared", nil).Body), `"permission":"edit"`) {
		t.Error("the broader permission is not the one shown")
	}
	if r := bob.rest.search(q("quetzal")); r.TotalHits != 1 {
		t.Errorf("bob's search finds the item %d times", r.TotalHits)
	}
	var renamed driveFile
	bob.rest.ok(200, "PATCH", "/api/v1/drive/"+handbook.ID+"/rename", map[string]any{"name": "handbook-quetzal-v2.txt"}, &renamed)
	webtest.Check(t, dan.rest.do("PATCH", "/api/v1/drive/"+handbook.ID+"/rename", map[string]any{"name": "x.txt"}), webtest.Scenario{Status: 403, Problem: "forbidden"})

	// Sharing with the organisation again changes that share.
	if sh2 := ann.teamShare(handbook.ID, map[string]any{"organization": true, "permission": "edit"}); sh2.ID != sh.ID {
		t.Errorf("a second organisation share %s, want the first (%s) changed", sh2.ID, sh.ID)
	}

	// A deleted user is gone; revoking reaches everyone else.
	ann.admin(204, "DELETE", "/users/"+dan.creds.UserID, nil)
	ann.ok(204, "DELETE", "/api/v1/drive/"+handbook.ID+"/shares/"+sh.ID, nil, nil)
	bob.rest.wantSees("bob, still shared with directly", handbook.ID, handbook.ID, "quetzal", true)
	dan2 := newDavUser(t, s, "Drive Org", "dan2@example.test", "member")
	dan2.rest.wantSees("a new user after the revocation", handbook.ID, handbook.ID, "quetzal", false)
}

// In the web app, a member signed in sees the team's folder under Shared with
// me, opens it and downloads from it; removed from the team during the
// session, the next page no longer lists it and the folder and its file
// answer 404.
func TestWebAppTeamShareEndsWithMembership(t *testing.T) {
	t.Parallel()
	s, ann := newDrive(t)
	bob := person(t, s, "Drive Org", "bob@example.test", "member")
	team := ann.admin(201, "POST", "/teams", map[string]any{"name": "Design"})["id"].(string)
	ann.admin(201, "POST", "/teams/"+team+"/members", map[string]any{"user_id": bob.UserID})
	folder := ann.folder("Team plans", "")
	file := ann.upload("roadmap.txt", folder.ID, "text/plain", []byte("the roadmap"))
	ann.teamShare(folder.ID, map[string]any{"team_id": team})

	b := newBrowser(t, s)
	b.mustSignIn("bob@example.test", testPassword)
	if p := b.get("/drive/shared"); p.StatusCode != 200 || !strings.Contains(p.Body, "Team plans") {
		t.Fatalf("Shared with me: %d, lists the team's folder: %v", p.StatusCode, strings.Contains(p.Body, "Team plans"))
	}
	if p := b.get("/drive/" + folder.ID); p.StatusCode != 200 || !strings.Contains(p.Body, "roadmap.txt") {
		t.Fatalf("the shared folder: %d", p.StatusCode)
	}
	if p := b.get("/drive/" + file.ID + "/download"); p.StatusCode != 303 {
		t.Fatalf("download: %d, want 303 to the file", p.StatusCode)
	}

	ann.admin(204, "DELETE", "/teams/"+team+"/members/"+bob.UserID, nil)
	if p := b.get("/drive/shared"); p.StatusCode != 200 || strings.Contains(p.Body, "Team plans") {
		t.Errorf("Shared with me after leaving the team: %d, still lists the folder: %v", p.StatusCode, strings.Contains(p.Body, "Team plans"))
	}
	for _, path := range []string{"/drive/" + folder.ID, "/drive/" + file.ID + "/download"} {
		if p := b.get(path); p.StatusCode != 404 {
			t.Errorf("GET %s after leaving the team: %d, want 404", path, p.StatusCode)
		}
	}
}

// Shared with me is one order across its pages, whichever way the server
// reads a page: bob (26 of the organisation's 32 files shared with him) is
// read along the organisation's items in name order, carol (2) by sorting
// her shared items. Folders come first; an item shared twice (directly and
// through a team) is listed once; a trashed item, an unshared one and bob's
// own file shared with his team are not listed.
func TestDriveSharedWithMePages(t *testing.T) {
	t.Parallel()
	s, ann := newDrive(t)
	bob := newDavUser(t, s, "Drive Org", "bob@example.test", "member")
	carol := newDavUser(t, s, "Drive Org", "carol@example.test", "member")
	team := ann.admin(201, "POST", "/teams", map[string]any{"name": "Readers"})["id"].(string)
	ann.admin(201, "POST", "/teams/"+team+"/members", map[string]any{"user_id": bob.creds.UserID})

	var bobSees, carolSees []string
	for _, name := range []string{"Beta Folder", "alpha folder"} {
		ann.teamShare(ann.folder(name, "").ID, map[string]any{"team_id": team})
	}
	bobSees = append(bobSees, "alpha folder", "Beta Folder")
	for i := range 30 {
		name := fmt.Sprintf("file-%02d.txt", i)
		f := ann.upload(name, "", "text/plain", []byte(name))
		switch {
		case i%5 == 4: // not shared
		case i == 3: // shared, then trashed
			ann.teamShare(f.ID, map[string]any{"team_id": team})
			ann.ok(204, "POST", "/api/v1/drive/"+f.ID+"/trash", nil, nil)
		default:
			ann.teamShare(f.ID, map[string]any{"team_id": team})
			bobSees = append(bobSees, name)
		}
		if i == 10 || i == 20 {
			ann.share(f.ID, map[string]any{"user_id": carol.creds.UserID})
			carolSees = append(carolSees, name)
		}
	}
	twice := ann.upload("zz-twice.txt", "", "text/plain", []byte("twice"))
	ann.teamShare(twice.ID, map[string]any{"team_id": team})
	ann.share(twice.ID, map[string]any{"user_id": bob.creds.UserID, "permission": "edit"})
	bobSees = append(bobSees, "zz-twice.txt")
	own := bob.rest.upload("bob-own.txt", "", "text/plain", []byte("mine"))
	bob.rest.teamShare(own.ID, map[string]any{"team_id": team})

	pages := func(c driveClient, query string) (got []string, total int) {
		t.Helper()
		for page := 1; ; page++ {
			l := c.list(fmt.Sprintf("/api/v1/drive/shared?per_page=5&page=%d%s", page, query))
			total = l.Total
			for _, it := range l.Items {
				got = append(got, it.Name)
				if it.Name == "zz-twice.txt" && it.Permission != "edit" {
					t.Errorf("zz-twice.txt: permission %q, want edit (the broader of its two shares)", it.Permission)
				}
			}
			if page >= l.TotalPages {
				return got, total
			}
		}
	}
	reversed := func(names []string) []string {
		out := slices.Clone(names)
		folders := 0
		for folders < len(out) && strings.HasSuffix(strings.ToLower(out[folders]), "folder") {
			folders++
		}
		slices.Reverse(out[:folders])
		slices.Reverse(out[folders:])
		return out
	}
	var tens []string
	for _, n := range bobSees {
		if strings.HasPrefix(n, "file-1") {
			tens = append(tens, n)
		}
	}
	for _, c := range []struct {
		who    string
		client driveClient
		query  string
		want   []string
	}{
		{"bob by name", bob.rest, "&sort_by=name&sort_order=asc", bobSees},
		{"bob by default", bob.rest, "", bobSees},
		{"bob by name, Z to A", bob.rest, "&sort_by=name&sort_order=desc", reversed(bobSees)},
		{"bob, names with file-1", bob.rest, "&sort_by=name&sort_order=asc&q=file-1", tens},
		{"carol by name", carol.rest, "&sort_by=name&sort_order=asc", carolSees},
	} {
		got, total := pages(c.client, c.query)
		if !slices.Equal(got, c.want) || total != len(c.want) {
			t.Errorf("%s: %d items %v,\nwant %d %v", c.who, total, got, len(c.want), c.want)
		}
	}
}
