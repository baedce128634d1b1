package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"atrium/app"
	"atrium/webtest"
)

// davUser is one user of the WebDAV mount.
type davUser struct {
	t     testing.TB
	s     *webtest.Server
	creds webtest.Creds
	rest  driveClient
}

func newDavUser(t testing.TB, s *webtest.Server, org, email, role string) davUser {
	cr := s.Bootstrap(org, email, role)
	return davUser{t: t, s: s, creds: cr, rest: driveClient{t: t, s: s, tok: cr.Token}}
}

// do sends a WebDAV request with Basic authentication; path is below /api/v1/webdav.
func (u davUser) do(method, path string, header map[string]string, body any) *webtest.Response {
	u.t.Helper()
	h := map[string]string{"Content-Type": "application/octet-stream"}
	for k, v := range header {
		h[k] = v
	}
	return u.s.Do(webtest.Request{Method: method, Path: "/api/v1/webdav" + path, BasicID: u.creds.Email, BasicPW: u.creds.AppPassword,
		Header: h, Body: body})
}

func (u davUser) want(status int, method, path string, header map[string]string, body any) *webtest.Response {
	u.t.Helper()
	res := u.do(method, path, header, body)
	if res.StatusCode != status {
		u.t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, res.Body, status)
	}
	return res
}

const propfindAll = `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`

var lockBody = `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:%s/></D:lockscope><D:locktype><D:write/></D:locktype>` +
	`<D:owner><D:href>mailto:ann@example.test</D:href></D:owner></D:lockinfo>`

func (u davUser) lock(path, scope string, header map[string]string) string {
	u.t.Helper()
	res := u.do("LOCK", path, header, fmt.Sprintf(lockBody, scope))
	if res.StatusCode != 200 && res.StatusCode != 201 {
		u.t.Fatalf("LOCK %s: %d %s", path, res.StatusCode, res.Body)
	}
	tok := strings.Trim(res.Header.Get("Lock-Token"), "<>")
	if !strings.HasPrefix(tok, "opaquelocktoken:") || !strings.Contains(string(res.Body), tok) {
		u.t.Fatalf("LOCK %s: token %q, body %s", path, tok, res.Body)
	}
	return tok
}

func ifToken(tok string) map[string]string { return map[string]string{"If": "(<" + tok + ">)"} }

// share shares an item with a user directly in the store (the sharing door is
// not this test's subject).
func share(t *testing.T, s *webtest.Server, owner davUser, fileID, userID, perm string) {
	t.Helper()
	_, err := s.Main.DB.Exec(context.Background(), `INSERT INTO drive_shares (id, organization_id, file_id, owner_id, created_by, user_id,
		permission, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, app.NewID(), owner.creds.OrganizationID, fileID, owner.creds.UserID,
		owner.creds.UserID, userID, perm, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
}

func TestWebDAVMethods(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")

	opt := ann.want(200, "OPTIONS", "/", nil, nil)
	if opt.Header.Get("DAV") != "1, 2" || opt.Header.Get("MS-Author-Via") != "DAV" || !strings.Contains(opt.Header.Get("Allow"), "PROPFIND") {
		t.Fatalf("OPTIONS headers %v", opt.Header)
	}
	ann.want(201, "MKCOL", "/Docs", nil, nil)
	ann.want(201, "PUT", "/Docs/note.txt", map[string]string{"Content-Type": "text/plain"}, "version one\n")
	put := ann.want(204, "PUT", "/Docs/note.txt", map[string]string{"Content-Type": "text/plain"}, "version two, longer\n")
	etag := put.Header.Get("ETag")
	if len(etag) != 45 {
		t.Fatalf("ETag %q", etag)
	}
	// Finder's resource forks and folder settings are stored like any file.
	ann.want(201, "PUT", "/Docs/._note.txt", nil, "\x00\x05\x16\x07")
	ann.want(201, "PUT", "/Docs/.DS_Store", nil, "Bud1")

	docs := ann.rest.list("/api/v1/drive/browse")
	if len(docs.Items) != 1 || docs.Items[0].Name != "Docs" || !docs.Items[0].IsFolder {
		t.Fatalf("root %+v", docs.Items)
	}
	inDocs := ann.rest.list("/api/v1/drive/browse/" + docs.Items[0].ID)
	var note driveFile
	for _, f := range inDocs.Items {
		if f.Name == "note.txt" {
			note = f
		}
	}
	if note.Version != 2 || note.MimeType != "text/plain" || len(inDocs.Items) != 3 {
		t.Fatalf("Docs %+v", inDocs.Items)
	}

	get := ann.want(200, "GET", "/Docs/note.txt", map[string]string{"Translate": "f"}, nil)
	if string(get.Body) != "version two, longer\n" || get.Header.Get("ETag") != etag || get.Header.Get("Last-Modified") == "" {
		t.Fatalf("GET %q %v", get.Body, get.Header)
	}
	rng := ann.want(206, "GET", "/Docs/note.txt", map[string]string{"Range": "bytes=8-10"}, nil)
	if string(rng.Body) != "two" {
		t.Fatalf("range %q", rng.Body)
	}
	ann.want(304, "GET", "/Docs/note.txt", map[string]string{"If-None-Match": etag}, nil)
	head := ann.want(200, "HEAD", "/Docs/note.txt", nil, nil)
	if head.Header.Get("Content-Length") != "20" {
		t.Fatalf("HEAD %v", head.Header)
	}

	pf := ann.want(207, "PROPFIND", "/Docs/", map[string]string{"Depth": "1"}, propfindAll)
	for _, want := range []string{"<D:href>/api/v1/webdav/Docs/</D:href>", "<D:href>/api/v1/webdav/Docs/note.txt</D:href>",
		"<D:getcontentlength>20</D:getcontentlength>", "<D:getetag>" + strings.ReplaceAll(etag, `"`, "&quot;") + "</D:getetag>",
		"<D:collection/>", "<D:supportedlock>"} {
		if !strings.Contains(string(pf.Body), want) {
			t.Errorf("PROPFIND lacks %s: %s", want, pf.Body)
		}
	}
	root := ann.want(207, "PROPFIND", "/", map[string]string{"Depth": "1"}, nil)
	if !strings.Contains(string(root.Body), "/api/v1/webdav/Shared%20with%20me/") {
		t.Errorf("root lacks the shared folder: %s", root.Body)
	}

	// PROPPATCH: a dead property is stored and read back; Win32LastModifiedTime is honoured.
	ann.want(207, "PROPPATCH", "/Docs/note.txt", nil, `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:">`+
		`<D:set><D:prop><Z:Win32LastModifiedTime>Wed, 01 Jan 2020 10:00:00 GMT</Z:Win32LastModifiedTime>`+
		`<x:color xmlns:x="http://example.com/ns">blue</x:color></D:prop></D:set></D:propertyupdate>`)
	pp := ann.want(207, "PROPFIND", "/Docs/note.txt", map[string]string{"Depth": "0"},
		`<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getlastmodified/><c:color xmlns:c="http://example.com/ns"/><c:none xmlns:c="http://example.com/ns"/></D:prop></D:propfind>`)
	for _, want := range []string{"Wed, 01 Jan 2020 10:00:00 GMT", `<color xmlns="http://example.com/ns">blue</color>`, "404 Not Found"} {
		if !strings.Contains(string(pp.Body), want) {
			t.Errorf("PROPFIND after PROPPATCH lacks %s: %s", want, pp.Body)
		}
	}

	ann.want(201, "COPY", "/Docs/note.txt", map[string]string{"Destination": s.URL + "/api/v1/webdav/copy.txt"}, nil)
	ann.want(201, "MOVE", "/copy.txt", map[string]string{"Destination": "/api/v1/webdav/Docs/moved.txt"}, nil)
	// COPY keeps the dead properties.
	if pc := ann.want(207, "PROPFIND", "/Docs/moved.txt", map[string]string{"Depth": "0"}, propfindAll); !strings.Contains(string(pc.Body), ">blue</color>") {
		t.Errorf("copied properties: %s", pc.Body)
	}
	ann.want(201, "COPY", "/Docs/", map[string]string{"Destination": "/webdav/Docs2/"}, nil)
	if l := ann.want(207, "PROPFIND", "/Docs2/", map[string]string{"Depth": "1"}, nil); !strings.Contains(string(l.Body), "Docs2/moved.txt") {
		t.Errorf("copied folder: %s", l.Body)
	}
	ann.want(201, "COPY", "/Docs/", map[string]string{"Destination": "/webdav/Empty/", "Depth": "0"}, nil)
	if l := ann.want(207, "PROPFIND", "/Empty/", map[string]string{"Depth": "1"}, nil); strings.Count(string(l.Body), "<D:response>") != 1 {
		t.Errorf("shallow copy has members: %s", l.Body)
	}
	ann.want(204, "DELETE", "/Docs2/", nil, nil)
	if tr := ann.rest.list("/api/v1/drive/trash"); len(tr.Items) != 1 || tr.Items[0].Name != "Docs2" {
		t.Fatalf("trash %+v", tr.Items)
	}

	// The alias and a bearer token reach the same drive.
	alias := s.Do(webtest.Request{Method: "PROPFIND", Path: "/webdav/Docs/note.txt", Token: ann.creds.Token, Header: map[string]string{"Depth": "0"}})
	webtest.Check(t, alias, webtest.Scenario{Status: 207, Contains: []string{"<D:href>/webdav/Docs/note.txt</D:href>"}})

	big := map[string]string{"Content-Type": "text/plain"}
	s.Run(t, []webtest.Scenario{
		{Name: "MKCOL existing", Request: davReq(ann, "MKCOL", "/Docs", nil, nil), Status: 405},
		{Name: "MKCOL without parent", Request: davReq(ann, "MKCOL", "/nope/sub", nil, nil), Status: 409, Problem: "conflict"},
		{Name: "MKCOL with a body", Request: davReq(ann, "MKCOL", "/withbody", nil, "<x/>"), Status: 415},
		{Name: "PUT without parent", Request: davReq(ann, "PUT", "/nope/a.txt", big, "x"), Status: 409, Problem: "conflict"},
		{Name: "PUT on a folder", Request: davReq(ann, "PUT", "/Docs", big, "x"), Status: 405},
		{Name: "PUT If-None-Match on existing", Request: davReq(ann, "PUT", "/Docs/note.txt", map[string]string{"If-None-Match": "*"}, "x"), Status: 412},
		{Name: "GET missing", Request: davReq(ann, "GET", "/Docs/missing.txt", nil, nil), Status: 404, Problem: "not_found"},
		{Name: "DELETE missing", Request: davReq(ann, "DELETE", "/missing", nil, nil), Status: 404},
		{Name: "PROPFIND missing", Request: davReq(ann, "PROPFIND", "/missing", map[string]string{"Depth": "0"}, nil), Status: 404},
		{Name: "PROPFIND Depth infinity", Request: davReq(ann, "PROPFIND", "/", map[string]string{"Depth": "infinity"}, nil), Status: 403,
			Contains: []string{"<D:propfind-finite-depth/>"}},
		{Name: "PROPFIND without Depth", Request: davReq(ann, "PROPFIND", "/", nil, nil), Status: 403, Contains: []string{"propfind-finite-depth"}},
		{Name: "PROPFIND bad XML", Request: davReq(ann, "PROPFIND", "/", map[string]string{"Depth": "0"}, "<D:propfind xmlns:D='DAV:'><D:prop>"), Status: 400},
		{Name: "COPY without overwrite", Request: davReq(ann, "COPY", "/Docs/note.txt", map[string]string{"Destination": "/api/v1/webdav/Docs/moved.txt", "Overwrite": "F"}, nil), Status: 412},
		{Name: "COPY overwrites", Request: davReq(ann, "COPY", "/Docs/note.txt", map[string]string{"Destination": "/api/v1/webdav/Docs/moved.txt"}, nil), Status: 204},
		{Name: "COPY without destination", Request: davReq(ann, "COPY", "/Docs/note.txt", nil, nil), Status: 400},
		{Name: "COPY into itself", Request: davReq(ann, "COPY", "/Docs/", map[string]string{"Destination": "/api/v1/webdav/Docs/inner/"}, nil), Status: 403},
		{Name: "MOVE to another server", Request: davReq(ann, "MOVE", "/Docs/note.txt", map[string]string{"Destination": "http://elsewhere.test/api/v1/webdav/x"}, nil), Status: 502},
		{Name: "MOVE to a missing folder", Request: davReq(ann, "MOVE", "/Docs/note.txt", map[string]string{"Destination": "/api/v1/webdav/no/x"}, nil), Status: 409},
		{Name: "DELETE the root", Request: davReq(ann, "DELETE", "/", nil, nil), Status: 403},
		{Name: "unknown method", Request: davReq(ann, "PATCH", "/Docs/note.txt", nil, nil), Status: 405},
	})
}

func davReq(u davUser, method, path string, header map[string]string, body any) webtest.Request {
	h := map[string]string{"Content-Type": "application/octet-stream"}
	for k, v := range header {
		h[k] = v
	}
	return webtest.Request{Method: method, Path: "/api/v1/webdav" + path, BasicID: u.creds.Email, BasicPW: u.creds.AppPassword, Header: h, Body: body}
}

func TestWebDAVAuth(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	s := w.s
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	// boss@acme.test accepts an invitation and so has an account password.
	w.createOrg(t, w.tok, "Acme", "boss@acme.test")
	tok := w.lastToken(t, "boss@acme.test", "invite")
	webtest.Check(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/invitations/" + tok + "/accept", Body: map[string]any{"password": "a long enough password"}}),
		webtest.Scenario{Status: 200})
	basic := map[string]string{"WWW-Authenticate": `Basic realm="atrium", charset="UTF-8"`}
	s.Run(t, []webtest.Scenario{
		{Name: "no credential", Request: webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", Header: map[string]string{"Depth": "0"}}, Status: 401, Problem: "unauthorized", Headers: basic},
		{Name: "no credential on the alias", Request: webtest.Request{Method: "GET", Path: "/webdav/"}, Status: 401, Headers: basic},
		{Name: "account password refused", Request: webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", BasicID: "boss@acme.test", BasicPW: "a long enough password",
			Header: map[string]string{"Depth": "0"}}, Status: 401, Problem: "unauthorized", Headers: basic, Contains: []string{"Use an app password, not the account password."}},
		// A token sent as the Basic password is not mistaken for an account password.
		{Name: "PAT as the Basic password on WebDAV", Request: webtest.Request{Method: "PROPFIND", Path: "/webdav/", BasicID: ann.creds.Email, BasicPW: ann.creds.Token,
			Header: map[string]string{"Depth": "0"}}, Status: 401, Problem: "unauthorized", Headers: basic,
			Contains: []string{"access token", "Authorization: Bearer", "app password"}, NotContains: []string{"account password"}},
		{Name: "PAT as the Basic password on DAV", Request: webtest.Request{Method: "PROPFIND", Path: "/dav/", BasicID: ann.creds.Email, BasicPW: ann.creds.Token,
			Header: map[string]string{"Depth": "0"}}, Status: 401, Problem: "unauthorized", Headers: basic,
			Contains: []string{"Authorization: Bearer"}, NotContains: []string{"account password"}},
		{Name: "app password", Request: davReq(ann, "PROPFIND", "/", map[string]string{"Depth": "0"}, nil), Status: 207},
		{Name: "bearer", Request: webtest.Request{Method: "PROPFIND", Path: "/webdav/", Token: ann.creds.Token, Header: map[string]string{"Depth": "0"}}, Status: 207},
	})
}

func TestWebDAVRateLimit(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	for i := 0; i < 10; i++ {
		res := s.Do(webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", BasicID: ann.creds.Email, BasicPW: "wrong-" + fmt.Sprint(i)})
		if res.StatusCode != 401 {
			t.Fatalf("attempt %d: %d", i, res.StatusCode)
		}
	}
	for _, pw := range []string{"wrong again", ann.creds.AppPassword} {
		res := s.Do(webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", BasicID: ann.creds.Email, BasicPW: pw, Header: map[string]string{"Depth": "0"}})
		webtest.Check(t, res, webtest.Scenario{Status: 429, Problem: "rate_limited"})
		if ra := res.Header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Fatalf("Retry-After %q", ra)
		}
	}
	// Bearer tokens are not affected.
	webtest.Check(t, s.Do(webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", Token: ann.creds.Token, Header: map[string]string{"Depth": "0"}}),
		webtest.Scenario{Status: 207})
}

func TestWebDAVLocks(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	bob := newDavUser(t, s, "Dav Org", "bob@example.test", "member")
	ann.want(201, "MKCOL", "/Team", nil, nil)
	ann.want(201, "PUT", "/Team/plan.txt", nil, "v1")
	folder := ann.rest.list("/api/v1/drive/browse").Items[0]
	plan := ann.rest.list("/api/v1/drive/browse/" + folder.ID).Items[0]
	share(t, s, ann, folder.ID, bob.creds.UserID, "edit")

	tok := ann.lock("/Team/plan.txt", "exclusive", map[string]string{"Timeout": "Second-600"})
	pf := ann.want(207, "PROPFIND", "/Team/plan.txt", map[string]string{"Depth": "0"},
		`<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>`)
	for _, want := range []string{tok, "<D:exclusive/>", "<D:lockroot><D:href>/api/v1/webdav/Team/plan.txt</D:href></D:lockroot>", "mailto:ann@example.test"} {
		if !strings.Contains(string(pf.Body), want) {
			t.Errorf("lockdiscovery lacks %s: %s", want, pf.Body)
		}
	}
	rename := func(c driveClient) *webtest.Response {
		return c.do("PATCH", "/api/v1/drive/"+plan.ID+"/rename", map[string]any{"name": "plan2.txt"})
	}
	s.Run(t, []webtest.Scenario{
		// The lock matrix: the owner with the token, the owner without it, another user.
		{Name: "owner without token", Request: davReq(ann, "PUT", "/Team/plan.txt", nil, "v2"), Status: 423, Problem: "locked"},
		{Name: "owner with a wrong token", Request: davReq(ann, "PUT", "/Team/plan.txt", ifToken("opaquelocktoken:nope"), "v2"), Status: 423},
		{Name: "owner DELETE without token", Request: davReq(ann, "DELETE", "/Team/plan.txt", nil, nil), Status: 423},
		{Name: "owner MOVE without token", Request: davReq(ann, "MOVE", "/Team/plan.txt", map[string]string{"Destination": "/api/v1/webdav/x.txt"}, nil), Status: 423},
		{Name: "owner PROPPATCH without token", Request: davReq(ann, "PROPPATCH", "/Team/plan.txt", nil,
			`<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x">1</x></D:prop></D:set></D:propertyupdate>`), Status: 423},
		{Name: "second exclusive lock", Request: davReq(ann, "LOCK", "/Team/plan.txt", nil, fmt.Sprintf(lockBody, "exclusive")), Status: 423},
		{Name: "shared lock over exclusive", Request: davReq(ann, "LOCK", "/Team/plan.txt", nil, fmt.Sprintf(lockBody, "shared")), Status: 423},
		{Name: "owner with token", Request: davReq(ann, "PUT", "/Team/plan.txt", ifToken(tok), "v2"), Status: 204},
		{Name: "token with a wrong etag", Request: davReq(ann, "PUT", "/Team/plan.txt", map[string]string{"If": `(<` + tok + `> ["nope"])`}, "v3"), Status: 412},
		{Name: "other user over REST", Request: webtest.Request{Method: "PATCH", Path: "/api/v1/drive/" + plan.ID + "/rename", Token: bob.creds.Token,
			Body: map[string]any{"name": "bob.txt"}}, Status: 423, Problem: "locked"},
		{Name: "refresh", Request: davReq(ann, "LOCK", "/Team/plan.txt", map[string]string{"If": "(<" + tok + ">)", "Timeout": "Second-100"}, nil), Status: 200,
			Contains: []string{"Second-100"}},
		{Name: "refresh with an unknown token", Request: davReq(ann, "LOCK", "/Team/plan.txt", ifToken("opaquelocktoken:nope"), nil), Status: 412},
		{Name: "unlock with an unknown token", Request: davReq(ann, "UNLOCK", "/Team/plan.txt", map[string]string{"Lock-Token": "<opaquelocktoken:nope>"}, nil), Status: 409},
		{Name: "other user cannot unlock", Request: webtest.Request{Method: "UNLOCK", Path: "/api/v1/webdav/Shared%20with%20me/Team/plan.txt", BasicID: bob.creds.Email,
			BasicPW: bob.creds.AppPassword, Header: map[string]string{"Lock-Token": "<" + tok + ">"}}, Status: 403},
	})
	// Over REST, too, a write holds the lock only by presenting its token in an
	// If header: another user is refused, and so is the owner without it.
	webtest.Check(t, rename(bob.rest), webtest.Scenario{Status: 423, Problem: "locked"})
	var tk uploadTicket
	bob.rest.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "plan.txt", "parent_id": folder.ID, "size": 3}, &tk)
	if res := putURL(t, tk.UploadURL, "text/plain", []byte("bob")); res.StatusCode != 200 {
		t.Fatalf("PUT upload: %d", res.StatusCode)
	}
	webtest.Check(t, bob.rest.do("POST", "/api/v1/drive/"+plan.ID+"/confirm", nil), webtest.Scenario{Status: 423, Problem: "locked"})
	webtest.Check(t, bob.rest.do("POST", "/api/v1/drive/"+plan.ID+"/trash", nil), webtest.Scenario{Status: 403})
	webtest.Check(t, rename(ann.rest), webtest.Scenario{Status: 423, Problem: "locked"})
	webtest.Check(t, s.Do(webtest.Request{Method: "PATCH", Path: "/api/v1/drive/" + plan.ID + "/rename", Token: ann.creds.Token,
		Header: ifToken(tok), Body: map[string]any{"name": "plan2.txt"}}), webtest.Scenario{Status: 200})
	ann.want(204, "UNLOCK", "/Team/plan2.txt", map[string]string{"Lock-Token": "<" + tok + ">"}, nil)
	webtest.Check(t, bob.rest.do("PATCH", "/api/v1/drive/"+plan.ID+"/rename", map[string]any{"name": "plan.txt"}), webtest.Scenario{Status: 200})

	// A deep lock on the folder protects what is in it and what is added to it;
	// it expires after its timeout.
	ftok := ann.lock("/Team/", "exclusive", nil)
	s.Run(t, []webtest.Scenario{
		{Name: "member in a locked folder", Request: davReq(ann, "PUT", "/Team/plan.txt", nil, "v4"), Status: 423},
		{Name: "new member of a locked folder", Request: davReq(ann, "PUT", "/Team/new.txt", nil, "n"), Status: 423},
		{Name: "new member with the folder's token", Request: davReq(ann, "PUT", "/Team/new.txt", ifToken(ftok), "n"), Status: 201},
		{Name: "other user adds over REST", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/folders", Token: bob.creds.Token,
			Body: map[string]any{"name": "sub", "parent_id": folder.ID}}, Status: 423, Problem: "locked"},
		{Name: "lock below a deep lock", Request: davReq(ann, "LOCK", "/Team/plan.txt", nil, fmt.Sprintf(lockBody, "exclusive")), Status: 423},
	})
	s.Clock.Advance(31 * time.Minute)
	ann.want(204, "PUT", "/Team/plan.txt", nil, "v5")
	done, err := s.Main.Drive.Maintain(context.Background())
	if err != nil || done["locks_expired"] < 1 {
		t.Fatalf("maintenance did not sweep the expired lock: %v %v", done, err)
	}

	// Shared locks coexist; a LOCK on an unmapped URL creates an empty file.
	t1 := ann.lock("/Team/shared.txt", "shared", nil)
	t2 := ann.lock("/Team/shared.txt", "shared", nil)
	if t1 == t2 {
		t.Fatal("same token twice")
	}
	ann.want(204, "PUT", "/Team/shared.txt", ifToken(t2), "s")
	ann.want(204, "UNLOCK", "/Team/shared.txt", map[string]string{"Lock-Token": "<" + t1 + ">"}, nil)
	ann.want(423, "PUT", "/Team/shared.txt", nil, "s")
}

func TestWebDAVSharedWithMe(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	bob := newDavUser(t, s, "Dav Org", "bob@example.test", "member")
	f := bob.rest.folder("Reports", "")
	bob.rest.upload("q1.txt", f.ID, "text/plain", []byte("first quarter"))
	share(t, s, bob, f.ID, ann.creds.UserID, "edit")

	l := ann.want(207, "PROPFIND", "/Shared%20with%20me/", map[string]string{"Depth": "1"}, nil)
	if !strings.Contains(string(l.Body), "/api/v1/webdav/Shared%20with%20me/Reports/") {
		t.Fatalf("shared listing: %s", l.Body)
	}
	if g := ann.want(200, "GET", "/Shared%20with%20me/Reports/q1.txt", nil, nil); string(g.Body) != "first quarter" {
		t.Fatalf("GET %q", g.Body)
	}
	ro := "read_only"
	s.Run(t, []webtest.Scenario{
		{Name: "PUT", Request: davReq(ann, "PUT", "/Shared%20with%20me/Reports/q1.txt", nil, "x"), Status: 403, Problem: ro},
		{Name: "PUT new", Request: davReq(ann, "PUT", "/Shared%20with%20me/Reports/q2.txt", nil, "x"), Status: 403, Problem: ro},
		{Name: "MKCOL", Request: davReq(ann, "MKCOL", "/Shared%20with%20me/Reports/sub", nil, nil), Status: 403, Problem: ro},
		{Name: "MKCOL in the virtual folder", Request: davReq(ann, "MKCOL", "/Shared%20with%20me/new", nil, nil), Status: 403, Problem: ro},
		{Name: "DELETE", Request: davReq(ann, "DELETE", "/Shared%20with%20me/Reports/q1.txt", nil, nil), Status: 403, Problem: ro},
		{Name: "MOVE out", Request: davReq(ann, "MOVE", "/Shared%20with%20me/Reports/q1.txt", map[string]string{"Destination": "/api/v1/webdav/q1.txt"}, nil), Status: 403, Problem: ro},
		{Name: "COPY in", Request: davReq(ann, "COPY", "/", map[string]string{"Destination": "/api/v1/webdav/Shared%20with%20me/x/"}, nil), Status: 403},
		{Name: "PROPPATCH", Request: davReq(ann, "PROPPATCH", "/Shared%20with%20me/Reports/q1.txt", nil, `<D:propertyupdate xmlns:D="DAV:"/>`), Status: 403, Problem: ro},
		{Name: "LOCK", Request: davReq(ann, "LOCK", "/Shared%20with%20me/Reports/q1.txt", nil, fmt.Sprintf(lockBody, "exclusive")), Status: 403, Problem: ro},
		{Name: "COPY out", Request: davReq(ann, "COPY", "/Shared%20with%20me/Reports/q1.txt", map[string]string{"Destination": "/api/v1/webdav/mine.txt"}, nil), Status: 201},
	})
	if g := ann.want(200, "GET", "/mine.txt", nil, nil); string(g.Body) != "first quarter" {
		t.Fatalf("copy %q", g.Body)
	}
}

func TestWebDAVPutLimits(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	ann.want(201, "PUT", "/keep.txt", nil, "the old version")

	// A PUT cut off half-way leaves the old version intact.
	raw := func(req string) string {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, _ := bufio.NewReader(conn).ReadString('\n')
		return line
	}
	auth := "Authorization: Basic " + basicAuth(ann.creds.Email, ann.creds.AppPassword) + "\r\n"
	raw("PUT /api/v1/webdav/keep.txt HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: 1000\r\n\r\n" + strings.Repeat("n", 500))
	if g := ann.want(200, "GET", "/keep.txt", nil, nil); string(g.Body) != "the old version" {
		t.Fatalf("after an interrupted PUT: %q", g.Body)
	}
	if vs := ann.rest.do("GET", "/api/v1/drive/"+ann.rest.list("/api/v1/drive/browse").Items[0].ID+"/versions", nil); strings.Count(string(vs.Body), `"version":`) != 1 {
		t.Fatalf("versions %s", vs.Body)
	}
	// More than 512 MiB announced → 413 before a byte is read.
	status := raw("PUT /api/v1/webdav/big.bin HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: 536870913\r\n\r\n")
	if !strings.Contains(status, " 413 ") {
		t.Fatalf("oversized PUT: %q", status)
	}

	// Over quota → 507.
	if _, err := s.Main.DB.Exec(context.Background(), `UPDATE plans SET quota_bytes = 100 WHERE slug = 'enterprise'`); err != nil {
		t.Fatal(err)
	}
	s.Main.Identity.CredentialsChanged() // credentials carry the quota
	webtest.Check(t, s.Do(davReq(ann, "PUT", "/full.bin", nil, strings.Repeat("x", 200))), webtest.Scenario{Status: 507, Problem: "quota_exceeded"})
	if res := ann.do("GET", "/full.bin", nil, nil); res.StatusCode != 404 {
		t.Fatalf("GET after refused PUT: %d", res.StatusCode)
	}
}

func basicAuth(user, pw string) string {
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth(user, pw)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}

// TestWebDAVPutByPath: a PUT without an If header leaves its path to the
// write, which walks it and decides the preconditions in its transaction
// (small contents) or before the bytes and again in it (larger ones). What a
// client sees is the mount's usual answer, and a refused PUT changes nothing.
func TestWebDAVPutByPath(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Put Org", "ann@example.test", "admin")
	ann.want(201, "MKCOL", "/Docs", nil, nil)
	ann.want(201, "PUT", "/Docs/a.txt", map[string]string{"Content-Type": "text/x-notes"}, "one")
	ann.want(201, "PUT", "/plain.txt", nil, "plain")
	tag := ann.want(200, "HEAD", "/Docs/a.txt", nil, nil).Header.Get("ETag")
	large := strings.Repeat("L", 100<<10) // over the 64 KiB kept in the database

	// state is every item as "version size type", by path.
	state := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		var walk func(prefix, path string)
		walk = func(prefix, path string) {
			for _, f := range ann.rest.list(path).Items {
				out[prefix+f.Name] = fmt.Sprintf("%d %d %s", f.Version, f.SizeBytes, f.MimeType)
				if f.IsFolder {
					walk(prefix+f.Name+"/", "/api/v1/drive/browse/"+f.ID)
				}
			}
		}
		walk("", "/api/v1/drive/browse")
		return out
	}
	noType := map[string]string{"Content-Type": ""}
	cases := []struct {
		name    string
		path    string
		header  map[string]string
		body    string
		status  int
		problem string
		headers map[string]string
		// changed are the items the PUT adds or changes (path: "version size type").
		changed map[string]string
	}{
		{name: "new file in a folder", path: "/Docs/b.txt", header: map[string]string{"Content-Type": "text/plain"}, body: "bee", status: 201,
			headers: map[string]string{"Location": "/api/v1/webdav/Docs/b.txt"}, changed: map[string]string{"Docs/b.txt": "1 3 text/plain"}},
		{name: "new file at the root", path: "/top.txt", header: map[string]string{"Content-Type": "text/plain"}, body: "top", status: 201,
			headers: map[string]string{"Location": "/api/v1/webdav/top.txt"}, changed: map[string]string{"top.txt": "1 3 text/plain"}},
		{name: "new version keeps the type when none is sent", path: "/Docs/a.txt", header: noType, body: "two!", status: 204,
			changed: map[string]string{"Docs/a.txt": "2 4 text/x-notes"}},
		{name: "name matched without case", path: "/docs/A.TXT", header: map[string]string{"Content-Type": "text/x-notes"}, body: "three", status: 204,
			changed: map[string]string{"Docs/a.txt": "3 5 text/x-notes"}},
		{name: "missing folder", path: "/Nope/c.txt", body: "c", status: 409, problem: "conflict"},
		{name: "a file on the way", path: "/plain.txt/c.txt", body: "c", status: 409, problem: "conflict"},
		{name: "a folder at the path", path: "/Docs", body: "x", status: 405, headers: map[string]string{"Allow": "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK"}},
		{name: "If-Match another tag", path: "/Docs/a.txt", header: map[string]string{"If-Match": tag}, body: "x", status: 412, problem: "precondition_failed"},
		{name: "If-Match on nothing", path: "/Docs/none.txt", header: map[string]string{"If-Match": "*"}, body: "x", status: 412},
		{name: "If-None-Match * on a file", path: "/plain.txt", header: map[string]string{"If-None-Match": "*"}, body: "x", status: 412},
		{name: "If-None-Match * on nothing", path: "/Docs/fresh.txt", header: map[string]string{"If-None-Match": "*", "Content-Type": "text/plain"}, body: "new", status: 201,
			changed: map[string]string{"Docs/fresh.txt": "1 3 text/plain"}},
		{name: "large: If-None-Match * on a file", path: "/plain.txt", header: map[string]string{"If-None-Match": "*"}, body: large, status: 412},
		{name: "large: missing folder", path: "/Nope/big.bin", body: large, status: 409, problem: "conflict"},
		{name: "large: a folder at the path", path: "/Docs", body: large, status: 405},
		{name: "large: new file", path: "/Docs/big.txt", header: map[string]string{"Content-Type": "text/plain"}, body: large, status: 201,
			changed: map[string]string{"Docs/big.txt": fmt.Sprintf("1 %d text/plain", len(large))}},
		{name: "large: new version", path: "/Docs/big.txt", header: noType, body: large + "!", status: 204,
			changed: map[string]string{"Docs/big.txt": fmt.Sprintf("2 %d text/plain", len(large)+1)}},
	}
	for _, c := range cases {
		before := state()
		res := s.Do(davReq(ann, "PUT", c.path, c.header, c.body))
		webtest.Check(t, res, webtest.Scenario{Status: c.status, Problem: c.problem, Headers: c.headers})
		if c.status < 300 && res.Header.Get("ETag") == "" {
			t.Errorf("%s: no ETag", c.name)
		}
		want := maps.Clone(before)
		maps.Copy(want, c.changed)
		if got := state(); !maps.Equal(got, want) {
			t.Errorf("%s: items %v, want %v", c.name, got, want)
		}
	}
	// The content is the last one written, under the name it was made with.
	if g := ann.want(200, "GET", "/Docs/a.txt", nil, nil); string(g.Body) != "three" {
		t.Fatalf("a.txt: %q", g.Body)
	}
}

// MKCOLs of one path at once: one makes the folder, every other answers
// 405 as when it came second (RFC 4918 §9.3.1), never 409.
func TestWebDAVMkcolRace(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	for round := range 5 {
		path := fmt.Sprintf("/race-%d", round)
		statuses := make(chan int, 6)
		start := make(chan struct{})
		for range 6 {
			go func() {
				<-start
				statuses <- ann.do("MKCOL", path, nil, nil).StatusCode
			}()
		}
		close(start)
		got := map[int]int{}
		for range 6 {
			got[<-statuses]++
		}
		if got[201] != 1 || got[405] != 5 {
			t.Errorf("%s: statuses %v, want one 201 and five 405", path, got)
		}
	}
}
