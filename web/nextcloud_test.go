package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"atrium/webtest"
)

// status.php answers anyone, whatever credential the client sends with it
// (nextcloudcmd sends its Basic credential with its first request).
func TestSyncClientStatus(t *testing.T) {
	t.Parallel()
	s := webtest.Shared(t)
	for _, basic := range [][2]string{{}, {"nobody@example.test", "wrong"}} {
		res := s.Do(webtest.Request{Method: "GET", Path: "/status.php", BasicID: basic[0], BasicPW: basic[1]})
		var st map[string]any
		res.Decode(t, &st)
		if res.StatusCode != 200 || st["installed"] != true || st["maintenance"] != false || st["productname"] != "Atrium" ||
			!strings.HasPrefix(st["version"].(string), "25.") {
			t.Fatalf("status.php with %q: %d %s", basic[0], res.StatusCode, res.Body)
		}
	}
}

// OCS: cloud/capabilities and cloud/user in v1 and v2, JSON and XML, with
// Basic (e-mail address and app password) as the clients sign in.
func TestSyncClientOCS(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "OCS Org", "ann@example.test", "admin")
	basic := webtest.Request{BasicID: ann.creds.Email, BasicPW: ann.creds.AppPassword}
	req := func(path string, header map[string]string) webtest.Request {
		r := basic
		r.Method, r.Path, r.Header = "GET", path, header
		return r
	}
	jsonHeader := map[string]string{"Content-Type": "application/json"}
	s.Run(t, []webtest.Scenario{
		{Name: "v1 capabilities JSON", Request: req("/ocs/v1.php/cloud/capabilities?format=json", nil), Status: 200,
			Contains: []string{`"statuscode":100`, `"webdav-root":"remote.php/webdav"`, `"supportedTypes":["SHA1","MD5"]`},
			Headers:  map[string]string{"Content-Type": "application/json; charset=utf-8"}},
		{Name: "v2 capabilities JSON by Accept", Request: req("/ocs/v2.php/cloud/capabilities", map[string]string{"Accept": "application/json"}),
			Status: 200, Contains: []string{`"statuscode":200`, `"major":25`}},
		{Name: "v1 capabilities XML", Request: req("/ocs/v1.php/cloud/capabilities", nil), Status: 200,
			Contains: []string{`<ocs><meta>`, `<statuscode>100</statuscode>`, `<webdav-root>remote.php/webdav</webdav-root>`, `<element>SHA1</element>`},
			Headers:  map[string]string{"Content-Type": "text/xml; charset=UTF-8"}},
		{Name: "v1 user JSON", Request: req("/ocs/v1.php/cloud/user?format=json", jsonHeader), Status: 200,
			Contains: []string{`"id":"` + ann.creds.UserID + `"`, `"email":"ann@example.test"`, `"display-name":`, `"quota":`}},
		{Name: "v2 user XML", Request: req("/ocs/v2.php/cloud/user", nil), Status: 200,
			Contains: []string{`<id>` + ann.creds.UserID + `</id>`, `<statuscode>200</statuscode>`}},
		{Name: "v1 user without a credential", Request: webtest.Request{Method: "GET", Path: "/ocs/v1.php/cloud/user?format=json"},
			Status: 401, Contains: []string{`"statuscode":997`}, Headers: map[string]string{"WWW-Authenticate": `Basic realm="atrium", charset="UTF-8"`}},
		{Name: "v1 user with a wrong password", Request: webtest.Request{Method: "GET", Path: "/ocs/v1.php/cloud/user?format=json",
			BasicID: ann.creds.Email, BasicPW: "wrong"}, Status: 401},
		{Name: "v1 unknown endpoint", Request: req("/ocs/v1.php/apps/unknown?format=json", nil), Status: 200, Contains: []string{`"statuscode":998`}},
		{Name: "v2 unknown endpoint", Request: req("/ocs/v2.php/apps/unknown?format=json", nil), Status: 404, Contains: []string{`"statuscode":404`}},
		{Name: "v2 a write", Request: webtest.Request{Method: "POST", Path: "/ocs/v2.php/cloud/user?format=json", BasicID: ann.creds.Email,
			BasicPW: ann.creds.AppPassword}, Status: 405},
	})
	// The JSON is what the clients parse.
	res := s.Do(req("/ocs/v1.php/cloud/user?format=json", nil))
	var body struct {
		OCS struct {
			Meta struct{ Status string }
			Data map[string]any
		}
	}
	if err := json.Unmarshal(res.Body, &body); err != nil || body.OCS.Meta.Status != "ok" || body.OCS.Data["id"] != ann.creds.UserID {
		t.Fatalf("user: %v %s", err, res.Body)
	}
}

var (
	ocPropfind = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">` +
		`<d:prop><d:resourcetype/><d:getetag/><d:getlastmodified/><d:getcontentlength/><oc:id/><oc:fileid/><oc:permissions/><oc:size/>` +
		`<oc:share-types/><oc:checksums/><nc:has-preview/></d:prop></d:propfind>`
	responseRE = regexp.MustCompile(`(?s)<D:response>.*?</D:response>`)
)

// propsOf answers a Depth 1 PROPFIND of the client's properties at a path
// of the clients' mount: the response elements by href.
func propsOf(t *testing.T, s *webtest.Server, u davUser, path string) map[string]string {
	t.Helper()
	res := s.Do(webtest.Request{Method: "PROPFIND", Path: path, BasicID: u.creds.Email, BasicPW: u.creds.AppPassword,
		Header: map[string]string{"Depth": "1", "Content-Type": "application/xml"}, Body: ocPropfind})
	if res.StatusCode != 207 {
		t.Fatalf("PROPFIND %s: %d %s", path, res.StatusCode, res.Body)
	}
	out := map[string]string{}
	for _, r := range responseRE.FindAllString(string(res.Body), -1) {
		href := regexp.MustCompile(`<D:href>([^<]*)</D:href>`).FindStringSubmatch(r)[1]
		out[href] = r
	}
	return out
}

// The mount at the clients' paths: remote.php/dav/files/<user id or e-mail>/
// and remote.php/webdav/, the same drive as /api/v1/webdav/; the oc: and nc:
// properties; the ids and tags a write answers; Shared with me read-only to
// the clients (oc:permissions).
func TestSyncClientMount(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Sync Org", "ann@example.test", "admin")
	bob := newDavUser(t, s, "Sync Org", "bob@example.test", "member")
	files := "/remote.php/dav/files/" + ann.creds.UserID
	basic := func(u davUser, method, path string, header map[string]string, body any) *webtest.Response {
		t.Helper()
		return s.Do(webtest.Request{Method: method, Path: path, BasicID: u.creds.Email, BasicPW: u.creds.AppPassword, Header: header, Body: body})
	}

	mk := basic(ann, "MKCOL", files+"/Docs", nil, nil)
	if mk.StatusCode != 201 || mk.Header.Get("OC-FileId") == "" {
		t.Fatalf("MKCOL: %d %v", mk.StatusCode, mk.Header)
	}
	put := basic(ann, "PUT", files+"/Docs/a%20b%20%23%25.txt", map[string]string{"X-OC-Mtime": "1500000000", "Content-Type": "text/plain"}, "hello")
	if put.StatusCode != 201 || put.Header.Get("X-OC-MTime") != "accepted" || put.Header.Get("OC-FileId") == "" ||
		put.Header.Get("OC-ETag") == "" || put.Header.Get("OC-ETag") != put.Header.Get("ETag") {
		t.Fatalf("PUT: %d %v", put.StatusCode, put.Header)
	}
	fileID := put.Header.Get("OC-FileId")
	ann.want(201, "PUT", "/Docs/pic.png", map[string]string{"Content-Type": "image/png"}, "\x89PNG")

	// The same drive at every mount point, and the href of the one asked.
	for _, root := range []string{files, "/remote.php/dav/files/ANN@example.test", "/remote.php/webdav", "/api/v1/webdav"} {
		props := propsOf(t, s, ann, root+"/Docs/")
		got, ok := props[strings.Replace(root, "ANN@", "ann@", 1)+"/Docs/a%20b%20%23%25.txt"]
		if root == "/remote.php/dav/files/ANN@example.test" {
			got, ok = props[root+"/Docs/a%20b%20%23%25.txt"]
		}
		if !ok {
			t.Fatalf("%s: hrefs %v", root, keys(props))
		}
		for _, want := range []string{`<fileid xmlns="http://owncloud.org/ns">` + fileID + `</fileid>`, `<id xmlns="http://owncloud.org/ns">` + fileID + `</id>`,
			`<permissions xmlns="http://owncloud.org/ns">RGDNVW</permissions>`, `<size xmlns="http://owncloud.org/ns">5</size>`,
			`<share-types xmlns="http://owncloud.org/ns"/>`, `<has-preview xmlns="http://nextcloud.org/ns">false</has-preview>`,
			`<checksum>SHA1:aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d MD5:5d41402abc4b2a76b9719d911017c592</checksum>`,
			`Fri, 14 Jul 2017 02:40:00 GMT`, `<D:getetag>` + strings.ReplaceAll(put.Header.Get("ETag"), `"`, "&quot;") + `</D:getetag>`} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: no %s in %s", root, want, got)
			}
		}
		if pic := props[strings.Replace(root, "ANN@", "ann@", 1)+"/Docs/pic.png"]; root == files && !strings.Contains(pic, `<has-preview xmlns="http://nextcloud.org/ns">true</has-preview>`) {
			t.Errorf("pic.png: %s", pic)
		}
	}
	// Another user's files, or a name that is nobody's, are not found.
	for _, path := range []string{"/remote.php/dav/files/" + bob.creds.UserID + "/", "/remote.php/dav/files/bob@example.test/Docs", "/remote.php/dav/files/"} {
		if res := basic(ann, "PROPFIND", path, map[string]string{"Depth": "0"}, nil); res.StatusCode != 404 {
			t.Errorf("PROPFIND %s: %d", path, res.StatusCode)
		}
	}

	// The root and Shared with me have tags and ids too; the root's changes
	// with any change below it.
	root := propsOf(t, s, ann, files+"/")
	tag := regexp.MustCompile(`<D:getetag>([^<]+)</D:getetag>`)
	before := tag.FindStringSubmatch(root[files+"/"])
	if before == nil || !strings.Contains(root[files+"/"], "RGDNVCK") || tag.FindStringSubmatch(root[files+"/Shared%20with%20me/"]) == nil {
		t.Fatalf("root: %v", root)
	}
	// A move across mount points: the Destination may name any of them.
	mv := basic(ann, "MOVE", files+"/Docs/pic.png", map[string]string{"Destination": s.URL + "/remote.php/webdav/pic.png"}, nil)
	if mv.StatusCode != 201 || mv.Header.Get("OC-FileId") == "" || mv.Header.Get("OC-ETag") == "" {
		t.Fatalf("MOVE: %d %v %s", mv.StatusCode, mv.Header, mv.Body)
	}
	after := tag.FindStringSubmatch(propsOf(t, s, ann, files+"/")[files+"/"])
	if after[1] == before[1] {
		t.Errorf("the root's tag %s did not change with a move", after[1])
	}

	// Shared with me: read-only to the clients, whatever the share grants.
	docs := ann.rest.list("/api/v1/drive/browse").Items
	for _, f := range docs {
		if f.Name == "Docs" {
			ann.rest.ok(201, "POST", "/api/v1/drive/"+f.ID+"/shares", map[string]any{"email": "bob@example.test", "permission": "edit"}, nil)
		}
	}
	// The owner sees what they shared and how (oc:share-types: 0 a user,
	// 1 a team or the organisation, 3 a link), each kind once; an expired
	// share is not shown.
	var picID string
	for _, f := range ann.rest.list("/api/v1/drive/browse").Items {
		if f.Name == "pic.png" {
			picID = f.ID
		}
	}
	ann.rest.ok(201, "POST", "/api/v1/drive/"+picID+"/shares", map[string]any{"create_link": true}, nil)
	ann.rest.ok(201, "POST", "/api/v1/drive/"+picID+"/shares", map[string]any{"create_link": true}, nil)
	ann.rest.ok(201, "POST", "/api/v1/drive/"+picID+"/shares", map[string]any{"organization": true}, nil)
	ann.rest.ok(201, "POST", "/api/v1/drive/"+fileID+"/shares", map[string]any{"create_link": true}, nil)
	if _, err := s.Main.DB.Exec(context.Background(), `UPDATE drive_shares SET expires_at = 1 WHERE file_id = ?`, fileID); err != nil {
		t.Fatal(err)
	}
	mine := propsOf(t, s, ann, files+"/")
	for href, want := range map[string]string{
		files + "/Docs/":   `<share-types xmlns="http://owncloud.org/ns"><share-type>0</share-type></share-types>`,
		files + "/pic.png": `<share-types xmlns="http://owncloud.org/ns"><share-type>1</share-type><share-type>3</share-type></share-types>`,
		files + "/":        `<share-types xmlns="http://owncloud.org/ns"/>`,
	} {
		if !strings.Contains(mine[href], want) {
			t.Errorf("%s: no %s in %s", href, want, mine[href])
		}
	}
	if docs := propsOf(t, s, ann, files+"/Docs/"); !strings.Contains(docs[files+"/Docs/a%20b%20%23%25.txt"], `<share-types xmlns="http://owncloud.org/ns"/>`) {
		t.Errorf("a file whose one share expired: %v", docs)
	}
	// A folder's oc:size is the bytes of the files below it, at any depth,
	// counted again when something below it changes.
	folderSize := func(want string) {
		t.Helper()
		for _, p := range []map[string]string{propsOf(t, s, ann, files+"/"), propsOf(t, s, ann, files+"/Docs/")} {
			if got := p[files+"/Docs/"]; !strings.Contains(got, `<size xmlns="http://owncloud.org/ns">`+want+`</size>`) {
				t.Fatalf("Docs: want oc:size %s in %s", want, got)
			}
		}
	}
	folderSize("5")
	basic(ann, "MKCOL", files+"/Docs/Sub", nil, nil)
	basic(ann, "MKCOL", files+"/Docs/Sub/Deeper", nil, nil)
	basic(ann, "PUT", files+"/Docs/Sub/Deeper/x.txt", nil, "abc")
	folderSize("8")
	if sub := propsOf(t, s, ann, files+"/Docs/")[files+"/Docs/Sub/"]; !strings.Contains(sub, `<size xmlns="http://owncloud.org/ns">3</size>`) {
		t.Fatalf("Sub: %s", sub)
	}
	basic(ann, "DELETE", files+"/Docs/Sub/Deeper/x.txt", nil, nil)
	folderSize("5")
	bobFiles := "/remote.php/dav/files/" + bob.creds.UserID
	shared := propsOf(t, s, bob, bobFiles+"/Shared%20with%20me/")
	if d := shared[bobFiles+"/Shared%20with%20me/Docs/"]; !strings.Contains(d, `<share-types xmlns="http://owncloud.org/ns"/>`) {
		t.Errorf("Docs shared with bob shows ann's shares to bob: %s", d)
	}
	if !strings.Contains(shared[bobFiles+"/Shared%20with%20me/"], `<permissions xmlns="http://owncloud.org/ns">G</permissions>`) ||
		!strings.Contains(shared[bobFiles+"/Shared%20with%20me/Docs/"], `<permissions xmlns="http://owncloud.org/ns">SG</permissions>`) {
		t.Fatalf("Shared with me: %v", shared)
	}
	inDocs := propsOf(t, s, bob, bobFiles+"/Shared%20with%20me/Docs/")
	if f := inDocs[bobFiles+"/Shared%20with%20me/Docs/a%20b%20%23%25.txt"]; !strings.Contains(f, `<permissions xmlns="http://owncloud.org/ns">SG</permissions>`) {
		t.Fatalf("a shared file: %v", inDocs)
	}
	if res := basic(bob, "PUT", bobFiles+"/Shared%20with%20me/Docs/new.txt", nil, "x"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("PUT into Shared with me: %d", res.StatusCode)
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
