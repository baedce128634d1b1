package web_test

import (
	"atrium/storage/sqldb"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"atrium/webtest"
)

type shareInfo struct {
	ID         string  `json:"id"`
	FileID     string  `json:"file_id"`
	Permission string  `json:"permission"`
	ExpiresAt  *string `json:"expires_at"`
	CreatedAt  string  `json:"created_at"`
	SharedWith *struct {
		UserID      string `json:"user_id"`
		Email       string `json:"email"`
		DisplayName string `json:"display_name"`
	} `json:"shared_with"`
	ShareLink *string `json:"share_link"`
}

type sharedLink struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	IsFolder    bool    `json:"is_folder"`
	MimeType    string  `json:"mime_type"`
	SizeBytes   int64   `json:"size_bytes"`
	Permission  string  `json:"permission"`
	ExpiresAt   *string `json:"expires_at"`
	Breadcrumbs []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"breadcrumbs"`
	Items []struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		IsFolder bool   `json:"is_folder"`
	} `json:"items"`
	Total int `json:"total"`
}

func (c driveClient) share(fileID string, body map[string]any) shareInfo {
	c.t.Helper()
	var sh shareInfo
	c.ok(201, "POST", "/api/v1/drive/"+fileID+"/shares", body, &sh)
	return sh
}

// linkToken returns the token of a link share: the last segment of share_link.
func linkToken(t testing.TB, s *webtest.Server, sh shareInfo) string {
	t.Helper()
	if sh.ShareLink == nil || !strings.HasPrefix(*sh.ShareLink, s.URL+"/s/") || sh.SharedWith != nil {
		t.Fatalf("link share %+v", sh)
	}
	tok := strings.TrimPrefix(*sh.ShareLink, s.URL+"/s/")
	if len(tok) < 22 || strings.ContainsAny(tok, "/+=?#") {
		t.Fatalf("token %q is not ≥128 URL-safe bits", tok)
	}
	return tok
}

// fetch GETs a presigned URL and returns status, body and Content-Disposition.
func fetch(t testing.TB, u string) (int, string, string) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header.Get("Content-Disposition")
}

// events counts outbox events of a type whose data has the given values (a
// nil value: the key holds null).
func events(t testing.TB, s *webtest.Server, typ string, data map[string]any) int64 {
	t.Helper()
	evs, _, err := sqldb.Outbox{DB: s.Main.DB}.Events(context.Background(), 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
next:
	for _, e := range evs {
		if e.Type != typ {
			continue
		}
		for k, v := range data {
			got, ok := e.Data[k]
			if !ok || (v == nil) != (got == nil) || (v != nil && fmt.Sprint(got) != fmt.Sprint(v)) {
				continue next
			}
		}
		n++
	}
	return n
}

func TestDriveShareWithUser(t *testing.T) {
	t.Parallel()
	s, ann := newDrive(t)
	bobCr := s.Bootstrap("Drive Org", "bob@example.test", "member")
	bob := driveClient{t: t, s: s, tok: bobCr.Token}
	eveCr := s.Bootstrap("Other Org", "eve@example.test", "admin")
	eve := driveClient{t: t, s: s, tok: eveCr.Token}

	project := ann.folder("Project", "")
	plan := ann.upload("plan.txt", project.ID, "text/plain", []byte("the plan"))
	sub := ann.folder("sub", project.ID)
	deep := ann.upload("deep.txt", sub.ID, "text/plain", []byte("deep"))
	private := ann.upload("private.txt", "", "text/plain", []byte("private"))

	// View share by e-mail (any case).
	sh := ann.share(project.ID, map[string]any{"email": "BOB@example.test"})
	if sh.Permission != "view" || sh.FileID != project.ID || sh.ShareLink != nil || sh.SharedWith == nil ||
		sh.SharedWith.UserID != bobCr.UserID || sh.SharedWith.Email != "bob@example.test" || sh.SharedWith.DisplayName == "" {
		t.Fatalf("user share %+v", sh)
	}
	if n := events(t, s, "drive.share.created", map[string]any{"file_id": project.ID, "share_id": sh.ID, "link": nil}); n != 1 {
		t.Errorf("drive.share.created events for the user share: %d", n)
	}
	shared := bob.list("/api/v1/drive/shared")
	if names(shared) != "Project" || shared.Items[0].OwnerID == bobCr.UserID {
		t.Fatalf("shared with bob: %+v", shared)
	}
	if !strings.Contains(string(bob.do("GET", "/api/v1/drive/shared", nil).Body), `"permission":"view"`) {
		t.Error("shared listing lacks the permission")
	}
	if past := bob.list("/api/v1/drive/shared?page=3&per_page=1"); len(past.Items) != 0 || past.Total != 1 {
		t.Errorf("a page past the end of Shared with me: %+v, want no items and the total 1", past)
	}
	if got := string(bob.download(plan.ID)); got != "the plan" {
		t.Fatalf("bob downloads %q", got)
	}
	if l := bob.list("/api/v1/drive/browse/" + sub.ID); names(l) != "deep.txt" || len(l.Breadcrumbs) != 2 {
		t.Fatalf("bob browses sub: %+v", l)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "view: detail", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + deep.ID + "/detail", Token: bob.tok}, Status: 200, Contains: []string{`"permission":"view"`}},
		{Name: "view: no rename", Request: webtest.Request{Method: "PATCH", Path: "/api/v1/drive/" + plan.ID + "/rename", Token: bob.tok, Body: map[string]any{"name": "x.txt"}}, Status: 403, Problem: "forbidden"},
		{Name: "view: no trash", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + plan.ID + "/trash", Token: bob.tok}, Status: 403, Problem: "forbidden"},
		{Name: "view: no upload", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/folders", Token: bob.tok, Body: map[string]any{"name": "new", "parent_id": project.ID}}, Status: 403, Problem: "forbidden"},
		{Name: "view: no share list", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + project.ID + "/shares", Token: bob.tok}, Status: 403, Problem: "forbidden"},
		{Name: "not shared: 404", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + private.ID + "/detail", Token: bob.tok}, Status: 404, Problem: "not_found"},
		{Name: "sharee cannot reshare", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: bob.tok, Body: map[string]any{"create_link": true}}, Status: 403, Problem: "forbidden"},
		{Name: "other org by e-mail", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok, Body: map[string]any{"email": "eve@example.test"}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.email"}},
		{Name: "other org by id", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok, Body: map[string]any{"user_id": eveCr.UserID}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.user_id"}},
		{Name: "not with the owner", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok, Body: map[string]any{"user_id": ann.meID(s)}}, Status: 422, Problem: "validation_failed"},
		{Name: "link and user", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok, Body: map[string]any{"create_link": true, "email": "bob@example.test"}}, Status: 422, Problem: "validation_failed"},
		{Name: "neither", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok, Body: map[string]any{}}, Status: 422, Problem: "validation_failed"},
		{Name: "bad permission", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok, Body: map[string]any{"email": "bob@example.test", "permission": "own"}}, Status: 422, Problem: "validation_failed"},
		{Name: "expiry in the past", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + project.ID + "/shares", Token: ann.tok, Body: map[string]any{"email": "bob@example.test", "expires_at": time.Now().Add(-time.Minute).Format(time.RFC3339)}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.expires_at"}},
	})
	// An outsider sees none of it.
	for _, p := range []string{"/api/v1/drive/" + project.ID + "/detail", "/api/v1/drive/" + plan.ID + "/download", "/api/v1/drive/browse/" + project.ID, "/api/v1/drive/" + project.ID + "/shares"} {
		if res := eve.do("GET", p, nil); res.StatusCode != 404 {
			t.Errorf("eve GET %s: %d %s", p, res.StatusCode, res.Body)
		}
	}
	if res := eve.do("DELETE", "/api/v1/drive/"+project.ID+"/shares/"+sh.ID, nil); res.StatusCode != 404 {
		t.Errorf("eve revokes: %d", res.StatusCode)
	}
	if l := eve.list("/api/v1/drive/shared"); l.Total != 0 {
		t.Errorf("eve's shared listing: %+v", l)
	}

	// Sharing again with the same user changes the permission of that share.
	sh2 := ann.share(project.ID, map[string]any{"user_id": bobCr.UserID, "permission": "edit"})
	if sh2.ID != sh.ID || sh2.Permission != "edit" {
		t.Fatalf("re-share %+v, want share %s with edit", sh2, sh.ID)
	}
	var list []shareInfo
	bob.ok(200, "GET", "/api/v1/drive/"+project.ID+"/shares", nil, &list) // edit may list
	if len(list) != 1 || list[0].Permission != "edit" || list[0].SharedWith == nil {
		t.Fatalf("shares %+v", list)
	}
	var renamed driveFile
	bob.ok(200, "PATCH", "/api/v1/drive/"+plan.ID+"/rename", map[string]any{"name": "plan-v2.txt"}, &renamed)
	if renamed.Name != "plan-v2.txt" {
		t.Fatalf("renamed %+v", renamed)
	}
	up := bob.upload("from-bob.txt", project.ID, "text/plain", []byte("bob was here"))
	if up.OwnerID != project.OwnerID || up.ParentID == nil || *up.ParentID != project.ID {
		t.Fatalf("bob's upload %+v: want it owned by the folder's owner", up)
	}
	if l := ann.list("/api/v1/drive/browse/" + project.ID); !strings.Contains(names(l), "from-bob.txt") {
		t.Fatalf("owner does not see bob's upload: %s", names(l))
	}
	webtest.Check(t, bob.do("POST", "/api/v1/drive/"+plan.ID+"/trash", nil), webtest.Scenario{Status: 403, Problem: "forbidden"})

	// Revoke: bob loses access at once.
	ann.ok(204, "DELETE", "/api/v1/drive/"+project.ID+"/shares/"+sh.ID, nil, nil)
	webtest.Check(t, bob.do("GET", "/api/v1/drive/"+plan.ID+"/detail", nil), webtest.Scenario{Status: 404, Problem: "not_found"})
	if l := bob.list("/api/v1/drive/shared"); l.Total != 0 {
		t.Fatalf("shared after revoke: %+v", l)
	}
	webtest.Check(t, ann.do("DELETE", "/api/v1/drive/"+project.ID+"/shares/"+sh.ID, nil), webtest.Scenario{Status: 404, Problem: "not_found"})

	// Expiry of a user share.
	exp := s.Clock.Now().Add(time.Hour).Format(time.RFC3339)
	esh := ann.share(private.ID, map[string]any{"email": "bob@example.test", "expires_at": exp})
	if esh.ExpiresAt == nil {
		t.Fatalf("no expiry: %+v", esh)
	}
	bob.ok(200, "GET", "/api/v1/drive/"+private.ID+"/detail", nil, nil)
	s.Clock.Advance(2 * time.Hour)
	webtest.Check(t, bob.do("GET", "/api/v1/drive/"+private.ID+"/detail", nil), webtest.Scenario{Status: 404})
	if l := bob.list("/api/v1/drive/shared"); l.Total != 0 {
		t.Fatalf("expired share listed: %+v", l)
	}

	// The audit log records shares.
	audit := string(ann.do("GET", "/api/v1/audit?limit=100", nil).Body)
	for _, want := range []string{`"share.created"`, `"share.updated"`, `"share.revoked"`, sh.ID} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit log lacks %s: %s", want, audit)
		}
	}
}

// meID returns the caller's user id (from a folder they create).
func (c driveClient) meID(s *webtest.Server) string {
	c.t.Helper()
	f := c.folder("me-"+time.Now().Format("150405.000000000"), "")
	return f.OwnerID
}

func TestDriveShareLink(t *testing.T) {
	t.Parallel()
	s, ann := newDrive(t)
	eve := driveClient{t: t, s: s, tok: s.Bootstrap("Other Org", "eve@example.test", "admin").Token}
	note := ann.upload("note.txt", "", "text/plain", []byte("hello"))
	pic := ann.upload("pic.png", "", "image/png", []byte("\x89PNG\r\n\x1a\nnot really"))
	album := ann.folder("Album", "")
	a := ann.upload("a.txt", album.ID, "text/plain", []byte("aaa"))
	inner := ann.folder("Inner", album.ID)
	b := ann.upload("b.txt", inner.ID, "text/plain", []byte("bbb"))
	outside := ann.upload("outside.txt", "", "text/plain", []byte("not shared"))
	gone := ann.upload("gone.txt", album.ID, "text/plain", []byte("trashed"))
	ann.ok(204, "POST", "/api/v1/drive/"+gone.ID+"/trash", nil, nil)

	view := ann.share(note.ID, map[string]any{"create_link": true})
	viewTok := linkToken(t, s, view)
	if view.Permission != "view" || view.ExpiresAt != nil {
		t.Fatalf("view link %+v", view)
	}
	if n := events(t, s, "drive.share.created", map[string]any{"file_id": note.ID, "share_id": view.ID, "link": *view.ShareLink}); n != 1 {
		t.Errorf("drive.share.created events for the link: %d", n)
	}
	// pub calls a shared-link endpoint without a credential; a string body is sent as a JSON string.
	pub := func(method, path string, body any) *webtest.Response {
		if str, ok := body.(string); ok {
			body, _ = json.Marshal(str)
		}
		return s.Do(webtest.Request{Method: method, Path: "/api/v1/drive/shared-link/" + path, Body: body})
	}

	// A file link: info, download, preview, content; writes need edit.
	var info sharedLink
	if res := pub("GET", viewTok, nil); res.StatusCode != 200 {
		t.Fatalf("info: %d %s", res.StatusCode, res.Body)
	} else {
		res.Decode(t, &info)
		if strings.Contains(string(res.Body), "owner") || strings.Contains(string(res.Body), `"items":[`) {
			t.Errorf("file link info says too much: %s", res.Body)
		}
	}
	if info.Name != "note.txt" || info.IsFolder || info.MimeType != "text/plain" || info.SizeBytes != 5 || info.Permission != "view" {
		t.Fatalf("info %+v", info)
	}
	var dl struct{ URL string }
	pub("GET", viewTok+"/download", nil).Decode(t, &dl)
	if code, body, cd := fetch(t, dl.URL); code != 200 || body != "hello" || !strings.Contains(cd, "attachment") {
		t.Fatalf("link download: %d %q %s", code, body, cd)
	}
	var pv map[string]string
	pub("GET", viewTok+"/preview", nil).Decode(t, &pv)
	if code, body, cd := fetch(t, pv["url"]); code != 200 || body != "hello" || !strings.Contains(cd, "inline") || pv["expires_at"] == "" {
		t.Fatalf("link preview: %d %q %s %v", code, body, cd, pv)
	}
	webtest.Check(t, pub("GET", viewTok+"/content", nil), webtest.Scenario{Status: 200, Contains: []string{`"hello"`}})
	webtest.Check(t, pub("PUT", viewTok+"/content", "new"), webtest.Scenario{Status: 403, Problem: "forbidden"})

	edit := ann.share(note.ID, map[string]any{"create_link": true, "permission": "edit"})
	editTok := linkToken(t, s, edit)
	if editTok == viewTok || edit.ID == view.ID {
		t.Fatal("a second link reuses the first")
	}
	var written driveFile
	if res := pub("PUT", editTok+"/content", "changed through a link\n"); res.StatusCode != 200 {
		t.Fatalf("write: %d %s", res.StatusCode, res.Body)
	} else {
		res.Decode(t, &written)
	}
	if written.ID != note.ID || written.Version != 2 || written.SizeBytes != int64(len("changed through a link\n")) {
		t.Fatalf("written %+v", written)
	}
	if got := string(ann.download(note.ID)); got != "changed through a link\n" {
		t.Fatalf("owner reads %q", got)
	}
	webtest.Check(t, pub("GET", viewTok+"/content", nil), webtest.Scenario{Status: 200, Contains: []string{`"changed through a link\n"`}})
	var vs []struct {
		Version   int    `json:"version"`
		CreatedBy string `json:"created_by"`
	}
	ann.ok(200, "GET", "/api/v1/drive/"+note.ID+"/versions", nil, &vs)
	if len(vs) != 2 || vs[0].CreatedBy != note.OwnerID {
		t.Fatalf("versions %+v: the link's creator made version 2", vs)
	}
	if n := events(t, s, "drive.file.updated", map[string]any{"file_id": note.ID, "change": "content", "version": 2}); n != 1 {
		t.Errorf("drive.file.updated events for the link write: %d", n)
	}
	// The organisation's quota applies to link writes.
	setQuota := func(n int64) {
		if _, err := s.Main.DB.Exec(context.Background(), `UPDATE plans SET quota_bytes = ? WHERE slug = 'enterprise'`, n); err != nil {
			t.Fatal(err)
		}
		s.Main.Identity.CredentialsChanged() // credentials carry the quota
	}
	setQuota(10)
	webtest.Check(t, pub("PUT", editTok+"/content", "more than the quota allows"), webtest.Scenario{Status: 507, Problem: "quota_exceeded"})
	setQuota(5 << 40)
	webtest.Check(t, pub("PUT", editTok+"/content", map[string]any{"not": "a string"}), webtest.Scenario{Status: 422})
	webtest.Check(t, pub("PUT", editTok+"/content", strings.Repeat("x", 1<<20+1)), webtest.Scenario{Status: 413, Problem: "payload_too_large"})

	// An image: preview yes, text content no.
	picTok := linkToken(t, s, ann.share(pic.ID, map[string]any{"create_link": true, "permission": "edit"}))
	webtest.Check(t, pub("GET", picTok+"/preview", nil), webtest.Scenario{Status: 200, Contains: []string{`"url"`}})
	webtest.Check(t, pub("GET", picTok+"/content", nil), webtest.Scenario{Status: 409, Problem: "conflict"})
	webtest.Check(t, pub("PUT", picTok+"/content", "text"), webtest.Scenario{Status: 409, Problem: "conflict"})

	// A folder link lists its items and reaches nothing outside.
	folderTok := linkToken(t, s, ann.share(album.ID, map[string]any{"create_link": true}))
	var fl sharedLink
	pub("GET", folderTok, nil).Decode(t, &fl)
	if !fl.IsFolder || fl.Name != "Album" || len(fl.Items) != 2 || fl.Items[0].Name != "Inner" || fl.Items[1].Name != "a.txt" || fl.Total != 2 {
		t.Fatalf("folder link %+v", fl)
	}
	var sl sharedLink
	pub("GET", folderTok+"?folder_id="+inner.ID, nil).Decode(t, &sl)
	if len(sl.Items) != 1 || sl.Items[0].ID != b.ID || len(sl.Breadcrumbs) != 2 || sl.Breadcrumbs[0].ID != album.ID || sl.Name != "Album" {
		t.Fatalf("subfolder %+v", sl)
	}
	var bl struct{ URL string }
	pub("GET", folderTok+"/download?file_id="+b.ID, nil).Decode(t, &bl)
	if code, body, _ := fetch(t, bl.URL); code != 200 || body != "bbb" {
		t.Fatalf("download inside the folder: %d %q", code, body)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "file inside", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + folderTok + "/download?file_id=" + a.ID}, Status: 200},
		{Name: "file outside", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + folderTok + "/download?file_id=" + outside.ID}, Status: 404, Problem: "not_found", NotContains: []string{"outside.txt"}},
		{Name: "preview outside", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + folderTok + "/preview?file_id=" + outside.ID}, Status: 404, Problem: "not_found"},
		{Name: "trashed inside", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + folderTok + "/download?file_id=" + gone.ID}, Status: 404, Problem: "not_found"},
		{Name: "folder outside", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + folderTok + "?folder_id=" + outside.ID}, Status: 404, Problem: "not_found"},
		{Name: "other item of another link", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + viewTok + "/download?file_id=" + a.ID}, Status: 404, Problem: "not_found"},
		{Name: "folder is no download", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + folderTok + "/download"}, Status: 409, Problem: "conflict"},
		{Name: "folder has no text", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + folderTok + "/content"}, Status: 409, Problem: "conflict"},
		{Name: "unknown token", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/nope"}, Status: 404, Problem: "not_found"},
		{Name: "outsider lists shares", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + album.ID + "/shares", Token: eve.tok}, Status: 404, Problem: "not_found"},
		{Name: "no credential lists shares", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + album.ID + "/shares"}, Status: 401},
	})
	if l := eve.list("/api/v1/drive/shared"); l.Total != 0 {
		t.Errorf("links show up in an outsider's shared listing: %+v", l)
	}

	// The page a person opens.
	page := s.Do(webtest.Request{Method: "GET", Path: "/s/" + viewTok})
	webtest.Check(t, page, webtest.Scenario{Status: 200, Contains: []string{"note.txt", `href="/s/` + viewTok + `/download"`, "Download"},
		Headers: map[string]string{"Cache-Control": "no-store", "X-Robots-Tag": "noindex, nofollow", "Content-Type": "text/html; charset=utf-8"}})
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/s/" + picTok}), webtest.Scenario{Status: 200, Contains: []string{`<img class="preview" src="/s/` + picTok + `/preview"`}})
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/s/" + folderTok}), webtest.Scenario{Status: 200,
		Contains: []string{"Album", `href="/s/` + folderTok + `/f/` + inner.ID + `"`, `href="/s/` + folderTok + `/download?file_id=` + a.ID + `"`}, NotContains: []string{"gone.txt", "outside.txt"}})
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/s/" + folderTok + "/f/" + inner.ID}), webtest.Scenario{Status: 200, Contains: []string{"b.txt", "Inner"}, NotContains: []string{"a.txt"}})
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/s/" + folderTok + "/f/" + outside.ID}), webtest.Scenario{Status: 404, NotContains: []string{"outside.txt"}})
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/s/" + folderTok + "/f/" + a.ID}), webtest.Scenario{Status: 404})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(s.URL + "/s/" + folderTok + "/download?file_id=" + b.ID)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 302 || !strings.Contains(res.Header.Get("Location"), "/blob/") {
		t.Fatalf("page download: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if code, body, _ := fetch(t, s.URL+"/s/"+folderTok+"/download?file_id="+b.ID); code != 200 || body != "bbb" {
		t.Fatalf("page download followed: %d %q", code, body)
	}

	// Names are escaped.
	evil := ann.upload("<img src=x onerror=alert(1)>.txt", "", "text/plain", []byte("x"))
	evilTok := linkToken(t, s, ann.share(evil.ID, map[string]any{"create_link": true}))
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/s/" + evilTok}), webtest.Scenario{Status: 200,
		Contains: []string{"&lt;img src=x onerror=alert(1)&gt;.txt"}, NotContains: []string{"<img src=x"}})

	// In a real browser.
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Log("chromium is absent: browser check skipped")
	} else {
		for _, c := range []struct{ path, want string }{
			{"/s/" + viewTok, `href="/s/` + viewTok + `/download"`},
			{"/s/" + folderTok + "/f/" + inner.ID, `href="/s/` + folderTok + `/download?file_id=` + b.ID + `"`},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			out, err := exec.CommandContext(ctx, "/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", s.URL+c.path).Output()
			cancel()
			if err != nil {
				t.Fatalf("chromium %s: %v", c.path, err)
			}
			dom := string(out)
			if !strings.Contains(dom, c.want) || !strings.Contains(dom, "Download") {
				t.Errorf("browser DOM of %s lacks %s: %s", c.path, c.want, dom)
			}
		}
	}

	// Expiry: every endpoint and the page answer 404.
	exp := ann.share(outside.ID, map[string]any{"create_link": true, "permission": "edit", "expires_at": s.Clock.Now().Add(time.Hour).Format(time.RFC3339)})
	expTok := linkToken(t, s, exp)
	webtest.Check(t, pub("GET", expTok, nil), webtest.Scenario{Status: 200, Contains: []string{`"expires_at":"`}})
	s.Clock.Advance(2 * time.Hour)
	checkGone(t, s, expTok, "outside.txt")

	// Revocation likewise.
	var shares []shareInfo
	ann.ok(200, "GET", "/api/v1/drive/"+album.ID+"/shares", nil, &shares)
	if len(shares) != 1 || shares[0].ShareLink == nil || !strings.HasSuffix(*shares[0].ShareLink, "/s/"+folderTok) {
		t.Fatalf("album shares %+v", shares)
	}
	ann.ok(204, "DELETE", "/api/v1/drive/"+album.ID+"/shares/"+shares[0].ID, nil, nil)
	checkGone(t, s, folderTok, "Album")

	// A link to an item in the trash is gone too, and comes back with it.
	ann.ok(204, "POST", "/api/v1/drive/"+note.ID+"/trash", nil, nil)
	checkGone(t, s, viewTok, "note.txt")
	ann.ok(200, "POST", "/api/v1/drive/"+note.ID+"/restore", nil, nil)
	webtest.Check(t, pub("GET", viewTok, nil), webtest.Scenario{Status: 200})
}

// checkGone asserts a link answers 404 on every endpoint and on its page, and
// names nothing it shared.
func checkGone(t *testing.T, s *webtest.Server, tok, name string) {
	t.Helper()
	body, _ := json.Marshal("x")
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/v1/drive/shared-link/" + tok},
		{"GET", "/api/v1/drive/shared-link/" + tok + "/download"},
		{"GET", "/api/v1/drive/shared-link/" + tok + "/preview"},
		{"GET", "/api/v1/drive/shared-link/" + tok + "/content"},
		{"PUT", "/api/v1/drive/shared-link/" + tok + "/content"},
	} {
		req := webtest.Request{Method: r.method, Path: r.path}
		if r.method == "PUT" {
			req.Body = body
		}
		webtest.Check(t, s.Do(req), webtest.Scenario{Status: 404, Problem: "not_found", NotContains: []string{name}})
	}
	for _, p := range []string{"/s/" + tok, "/s/" + tok + "/download", "/s/" + tok + "/preview"} {
		webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: p}), webtest.Scenario{Status: 404, Contains: []string{"Link not available"},
			NotContains: []string{name}, Headers: map[string]string{"Cache-Control": "no-store"}})
	}
}
