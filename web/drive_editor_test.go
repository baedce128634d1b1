package web_test

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"atrium/webtest"
	"atrium/wire"
)

// fakeDiscovery is a Collabora-like discovery (edit actions by extension, no
// placeholders) plus an ONLYOFFICE-like view action with placeholders.
const fakeDiscovery = `<?xml version="1.0" encoding="utf-8"?>
<wopi-discovery><net-zone name="external-http">
 <app name="writer">
  <action default="true" name="edit" ext="odt" urlsrc="EDITOR/browser/dist/cool.html?"/>
  <action name="edit" ext="docx" urlsrc="EDITOR/browser/dist/cool.html?"/>
  <action name="view" ext="odt" urlsrc="EDITOR/view?&lt;ui=UI_LLCC&amp;&gt;&lt;thm=THEME_ID&amp;&gt;&lt;dchat=DISABLE_CHAT&amp;&gt;"/>
 </app>
 <app name="calc"><action name="edit" ext="ods" urlsrc="EDITOR/browser/dist/cool.html?"/></app>
 <app name="impress"><action name="edit" ext="odp" urlsrc="EDITOR/browser/dist/cool.html?"/></app>
</net-zone></wopi-discovery>`

// newFakeEditor serves a WOPI discovery and counts its fetches.
func newFakeEditor(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	var ts *httptest.Server
	ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hosting/discovery" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		w.Header().Set("Content-Type", "text/xml")
		w.Write([]byte(strings.ReplaceAll(fakeDiscovery, "EDITOR", ts.URL)))
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

func withEditor(u string) webtest.Option { return func(c *wire.Config) { c.Editor.URL = u } }

type editSession struct {
	EditURL        string     `json:"edit_url"`
	AccessToken    string     `json:"access_token"`
	AccessTokenTTL int64      `json:"access_token_ttl"`
	ExpiresAt      time.Time  `json:"expires_at"`
	Editor         string     `json:"editor"`
	Action         string     `json:"action"`
	FileID         string     `json:"file_id"`
	WOPISrc        string     `json:"wopi_src"`
	File           *driveFile `json:"file"`
}

type editorUser struct {
	UserID      string `json:"user_id"`
	DisplayName string `json:"display_name"`
	Email       string `json:"email"`
	Guest       bool   `json:"guest"`
	Since       string `json:"since"`
	ExpiresAt   string `json:"expires_at"`
}

// wopiCall is a call of the editor to the WOPI endpoints of file id.
func wopiCall(s *webtest.Server, method, id, sub, tok string, header map[string]string, body any) *webtest.Response {
	p := "/wopi/files/" + id
	if sub != "" {
		p += "/" + sub
	}
	return s.Do(webtest.Request{Method: method, Path: p + "?access_token=" + url.QueryEscape(tok), Header: header, Body: body})
}

func wopiOp(override string, kv ...string) map[string]string {
	h := map[string]string{"X-WOPI-Override": override}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return h
}

// wantWOPI checks a WOPI answer's status and, when lock is not nil, its
// X-WOPI-Lock header (present, possibly empty).
func wantWOPI(t *testing.T, res *webtest.Response, status int, lock *string) {
	t.Helper()
	if res.StatusCode != status {
		t.Fatalf("%s %s: %d %s, want %d", res.Request.Method, res.Request.URL.Path, res.StatusCode, res.Body, status)
	}
	if lock != nil {
		if v := res.Header.Values("X-WOPI-Lock"); len(v) != 1 || v[0] != *lock {
			t.Fatalf("X-WOPI-Lock %q, want %q", v, *lock)
		}
	}
}

func ptr(s string) *string { return &s }

func TestEditorWOPIFlow(t *testing.T) {
	t.Parallel()
	editor, hits := newFakeEditor(t)
	s := webtest.New(t, withEditor(editor.URL))
	ann := newDavUser(t, s, "Drive Org", "ann@example.test", "admin")
	bob := newDavUser(t, s, "Drive Org", "bob@example.test", "member")
	f := ann.rest.upload("report.odt", "", "application/vnd.oasis.opendocument.text", []byte("v1 content"))
	other := ann.rest.upload("other.odt", "", "application/vnd.oasis.opendocument.text", []byte("other"))
	ann.rest.share(f.ID, map[string]any{"user_id": bob.creds.UserID, "permission": "edit"})

	var es editSession
	ann.rest.ok(200, "GET", "/api/v1/drive/"+f.ID+"/edit-url?lang=de-CH&theme=dark", nil, &es)
	wopiSrc := s.URL + "/wopi/files/" + f.ID
	if want := editor.URL + "/browser/dist/cool.html?WOPISrc=" + url.QueryEscape(wopiSrc) + "&lang=de-CH&theme=dark"; es.EditURL != want {
		t.Fatalf("edit_url %s, want %s", es.EditURL, want)
	}
	if es.Editor != "collabora" || es.Action != "edit" || es.FileID != f.ID || es.WOPISrc != wopiSrc || len(es.AccessToken) < 40 {
		t.Fatalf("session %+v", es)
	}
	if ttl := time.UnixMilli(es.AccessTokenTTL); ttl.Sub(time.Now()) < 9*time.Hour || ttl.Sub(time.Now()) > 11*time.Hour || !ttl.Equal(es.ExpiresAt) {
		t.Fatalf("access_token_ttl %v, expires_at %v", ttl, es.ExpiresAt)
	}
	tok := es.AccessToken

	// CheckFileInfo, by query parameter and by bearer header.
	res := wopiCall(s, "GET", f.ID, "", tok, nil, nil)
	wantWOPI(t, res, 200, nil)
	var info map[string]any
	res.Decode(t, &info)
	for k, v := range map[string]any{"BaseFileName": "report.odt", "Size": 10.0, "OwnerId": ann.creds.UserID, "UserId": ann.creds.UserID,
		"Version": "1", "UserCanWrite": true, "SupportsLocks": true, "SupportsGetLock": true,
		"SupportsUpdate": true, "SupportsRename": false, "ReadOnly": false} {
		if info[k] != v {
			t.Errorf("CheckFileInfo %s = %v, want %v", k, info[k], v)
		}
	}
	if n, _ := info["UserFriendlyName"].(string); n == "" || n == "Guest" {
		t.Errorf("UserFriendlyName %q", n)
	}
	if lm, _ := info["LastModifiedTime"].(string); !strings.HasSuffix(lm, "Z") {
		t.Errorf("LastModifiedTime %q", lm)
	}
	res = s.Do(webtest.Request{Method: "GET", Path: "/wopi/files/" + f.ID, Token: tok})
	wantWOPI(t, res, 200, nil)

	// GetFile.
	res = wopiCall(s, "GET", f.ID, "contents", tok, nil, nil)
	wantWOPI(t, res, 200, nil)
	if string(res.Body) != "v1 content" || res.Header.Get("X-WOPI-ItemVersion") != "1" {
		t.Fatalf("GetFile: %q version %s", res.Body, res.Header.Get("X-WOPI-ItemVersion"))
	}

	// Lock, and the lock mismatches.
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("LOCK", "X-WOPI-Lock", "L1"), nil), 200, nil)
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("LOCK", "X-WOPI-Lock", "L1"), nil), 200, nil) // same id: refresh
	mismatches := []struct {
		name   string
		header map[string]string
		sub    string
	}{
		{"lock with another id", wopiOp("LOCK", "X-WOPI-Lock", "L2"), ""},
		{"refresh another id", wopiOp("REFRESH_LOCK", "X-WOPI-Lock", "L2"), ""},
		{"unlock another id", wopiOp("UNLOCK", "X-WOPI-Lock", "L2"), ""},
		{"relock from another id", wopiOp("LOCK", "X-WOPI-Lock", "L3", "X-WOPI-OldLock", "L2"), ""},
		{"put without the lock", wopiOp("PUT"), "contents"},
		{"put with another lock", wopiOp("PUT", "X-WOPI-Lock", "L2"), "contents"},
	}
	for _, m := range mismatches {
		t.Run(m.name, func(t *testing.T) {
			wantWOPI(t, wopiCall(s, "POST", f.ID, m.sub, tok, m.header, "new bytes"), 409, ptr("L1"))
		})
	}
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("GET_LOCK"), nil), 200, ptr("L1"))

	// The user is listed as an editor while the lock lives.
	var eds []editorUser
	ann.rest.ok(200, "GET", "/api/v1/drive/"+f.ID+"/editors", nil, &eds)
	if len(eds) != 1 || eds[0].UserID != ann.creds.UserID || eds[0].Email != "ann@example.test" || eds[0].ExpiresAt == "" || eds[0].Guest {
		t.Fatalf("editors %+v", eds)
	}

	// PutFile: a new version through the drive, visible over REST.
	res = wopiCall(s, "POST", f.ID, "contents", tok, wopiOp("PUT", "X-WOPI-Lock", "L1"), "v2 content")
	wantWOPI(t, res, 200, nil)
	if res.Header.Get("X-WOPI-ItemVersion") != "2" || !strings.Contains(string(res.Body), "LastModifiedTime") {
		t.Fatalf("PutFile: %s %s", res.Header.Get("X-WOPI-ItemVersion"), res.Body)
	}
	var d driveFile
	ann.rest.ok(200, "GET", "/api/v1/drive/"+f.ID+"/detail", nil, &d)
	if d.Version != 2 || d.SizeBytes != 10 || d.ContentHash != sha([]byte("v2 content")) {
		t.Fatalf("after PutFile: %+v", d)
	}
	if got := string(ann.rest.download(f.ID)); got != "v2 content" {
		t.Fatalf("download %q", got)
	}
	if n := events(t, s, "drive.file.updated", map[string]any{"file_id": f.ID, "change": "content", "version": 2}); n != 1 {
		t.Fatalf("%d drive.file.updated events", n)
	}

	// While the editor holds the lock, the file mount refuses writes without
	// its token, the owner's included, and REST refuses other users.
	ann.want(423, "PUT", "/report.odt", nil, "from webdav")
	ann.want(423, "DELETE", "/report.odt", nil, nil)
	ann.want(423, "MOVE", "/report.odt", map[string]string{"Destination": "/api/v1/webdav/moved.odt"}, nil)
	bob.rest.ok(423, "PATCH", "/api/v1/drive/"+f.ID+"/rename", map[string]any{"name": "bob.odt"}, nil)
	// The mount shows the editor's lock without its WOPI lock id.
	res = ann.want(207, "PROPFIND", "/report.odt", map[string]string{"Depth": "0"}, propfindAll)
	if !strings.Contains(string(res.Body), "<D:owner>online editor</D:owner>") || strings.Contains(string(res.Body), "L1") {
		t.Fatalf("lockdiscovery: %s", res.Body)
	}

	// A second user joins the session: listed, and saving with the session's lock.
	var bes editSession
	bob.rest.ok(200, "GET", "/api/v1/drive/"+f.ID+"/edit-url", nil, &bes)
	wantWOPI(t, wopiCall(s, "GET", f.ID, "", bes.AccessToken, nil, nil), 200, nil)
	ann.rest.ok(200, "GET", "/api/v1/drive/"+f.ID+"/editors", nil, &eds)
	if len(eds) != 2 {
		t.Fatalf("editors with bob %+v", eds)
	}
	// Who is in the session is the database's, as every node sees it (not
	// one process's memory).
	presence := func() int {
		t.Helper()
		var n int
		if err := s.Main.DB.QueryRow(context.Background(), `SELECT count(*) FROM drive_editor_presence WHERE file_id = ?`, f.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := presence(); n != 2 {
		t.Fatalf("%d presences stored, want 2", n)
	}
	res = wopiCall(s, "POST", f.ID, "contents", bes.AccessToken, wopiOp("PUT", "X-WOPI-Lock", "L1"), "v3 by bob")
	wantWOPI(t, res, 200, nil)

	// Collabora's timestamp: a save based on an older state is refused.
	res = wopiCall(s, "GET", f.ID, "", tok, nil, nil)
	res.Decode(t, &info)
	stamp := info["LastModifiedTime"].(string)
	wantWOPI(t, wopiCall(s, "POST", f.ID, "contents", tok, wopiOp("PUT", "X-WOPI-Lock", "L1", "X-COOL-WOPI-Timestamp", stamp), "v4"), 200, nil)
	res = wopiCall(s, "POST", f.ID, "contents", tok, wopiOp("PUT", "X-WOPI-Lock", "L1", "X-COOL-WOPI-Timestamp", stamp), "v5")
	wantWOPI(t, res, 409, nil)
	if !strings.Contains(string(res.Body), `"COOLStatusCode":1010`) {
		t.Fatalf("stale save: %s", res.Body)
	}

	// UnlockAndRelock, RefreshLock, Unlock.
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("LOCK", "X-WOPI-Lock", "L3", "X-WOPI-OldLock", "L1"), nil), 200, nil)
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("GET_LOCK"), nil), 200, ptr("L3"))
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("REFRESH_LOCK", "X-WOPI-Lock", "L3"), nil), 200, nil)
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("UNLOCK", "X-WOPI-Lock", "L1"), nil), 409, ptr("L3"))
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("UNLOCK", "X-WOPI-Lock", "L3"), nil), 200, nil)
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("GET_LOCK"), nil), 200, ptr(""))
	ann.rest.ok(200, "GET", "/api/v1/drive/"+f.ID+"/editors", nil, &eds)
	if len(eds) != 0 || presence() != 0 {
		t.Fatalf("editors after unlock %+v, %d stored", eds, presence())
	}
	// Unlocked: the mount writes again, and the editor may not overwrite a
	// non-empty file without a lock.
	ann.want(204, "PUT", "/report.odt", nil, "from webdav")
	for _, op := range []map[string]string{wopiOp("UNLOCK", "X-WOPI-Lock", "L3"), wopiOp("REFRESH_LOCK", "X-WOPI-Lock", "L3")} {
		wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, op, nil), 409, ptr(""))
	}
	wantWOPI(t, wopiCall(s, "POST", f.ID, "contents", tok, wopiOp("PUT", "X-WOPI-Lock", "L3"), "x"), 409, ptr(""))

	// A WebDAV lock is another client's lock for the editor.
	davTok := ann.lock("/report.odt", "exclusive", nil)
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("LOCK", "X-WOPI-Lock", "L4"), nil), 409, ptr(""))
	ann.want(204, "UNLOCK", "/report.odt", map[string]string{"Lock-Token": "<" + davTok + ">"}, nil)

	// PutRelativeFile: a new file beside the original, with its own token.
	res = wopiCall(s, "POST", f.ID, "", tok, wopiOp("PUT_RELATIVE", "X-WOPI-SuggestedTarget", "+AOk-t+AOk-.odt"), "relative")
	wantWOPI(t, res, 200, nil)
	var rel struct{ Name, Url string }
	res.Decode(t, &rel)
	u, err := url.Parse(rel.Url)
	if err != nil || rel.Name != "été.odt" || !strings.HasPrefix(rel.Url, s.URL+"/wopi/files/") || u.Query().Get("access_token") == "" {
		t.Fatalf("PutRelativeFile: %+v", rel)
	}
	relID := strings.TrimPrefix(u.Path, "/wopi/files/")
	wantWOPI(t, wopiCall(s, "GET", relID, "contents", u.Query().Get("access_token"), nil, nil), 200, nil)
	res = wopiCall(s, "POST", f.ID, "", tok, wopiOp("PUT_RELATIVE", "X-WOPI-RelativeTarget", "+AOk-t+AOk-.odt"), "again")
	wantWOPI(t, res, 409, nil)
	if v := res.Header.Get("X-WOPI-ValidRelativeTarget"); v != "+AOk-t+AOk- (1).odt" {
		t.Fatalf("valid relative target %q", v)
	}
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", tok, wopiOp("RENAME_FILE", "X-WOPI-RequestedName", "x"), nil), 501, nil)

	// Tokens: another file's, garbage, none, and expired → 401.
	refused := []struct{ name, id, tok string }{
		{"token of another file", other.ID, tok},
		{"garbage token", f.ID, "garbage"},
		{"tampered token", f.ID, tok[:10] + "A" + tok[11:]},
		{"no token", f.ID, ""},
	}
	for _, r := range refused {
		t.Run(r.name, func(t *testing.T) {
			wantWOPI(t, wopiCall(s, "GET", r.id, "", r.tok, nil, nil), 401, nil)
			wantWOPI(t, wopiCall(s, "GET", r.id, "contents", r.tok, nil, nil), 401, nil)
		})
	}
	s.Clock.Advance(10*time.Hour + time.Minute)
	wantWOPI(t, wopiCall(s, "GET", f.ID, "", tok, nil, nil), 401, nil)
	if hits.Load() != 1 {
		t.Errorf("discovery fetched %d times, want once (cached)", hits.Load())
	}
}

func TestEditorViewAndAccess(t *testing.T) {
	t.Parallel()
	editor, _ := newFakeEditor(t)
	s := webtest.New(t, withEditor(editor.URL))
	ann := newDavUser(t, s, "Drive Org", "ann@example.test", "admin")
	carol := newDavUser(t, s, "Drive Org", "carol@example.test", "member")
	eve := newDavUser(t, s, "Other Org", "eve@example.test", "admin")
	f := ann.rest.upload("report.odt", "", "application/vnd.oasis.opendocument.text", []byte("v1"))
	zipFile := ann.rest.upload("a.zip", "", "application/zip", []byte("PK"))
	folder := ann.rest.folder("Docs", "")
	ann.rest.share(f.ID, map[string]any{"user_id": carol.creds.UserID, "permission": "view"})

	var es editSession
	carol.rest.ok(200, "GET", "/api/v1/drive/"+f.ID+"/edit-url?lang=fr&theme=dark", nil, &es)
	if want := editor.URL + "/view?ui=fr&thm=2&WOPISrc=" + url.QueryEscape(s.URL+"/wopi/files/"+f.ID); es.Action != "view" || es.EditURL != want {
		t.Fatalf("view session %+v, want %s", es, want)
	}
	res := wopiCall(s, "GET", f.ID, "", es.AccessToken, nil, nil)
	wantWOPI(t, res, 200, nil)
	if info := res.JSON(); info["UserCanWrite"] != false || info["ReadOnly"] != true {
		t.Fatalf("view CheckFileInfo %v", info)
	}
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", es.AccessToken, wopiOp("LOCK", "X-WOPI-Lock", "C"), nil), 401, nil)
	wantWOPI(t, wopiCall(s, "POST", f.ID, "contents", es.AccessToken, wopiOp("PUT"), "x"), 401, nil)

	readTok := s.Token("ann@example.test", "drive:read")
	s.Run(t, []webtest.Scenario{
		{Name: "another organisation", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + f.ID + "/edit-url", Token: eve.creds.Token}, Status: 404, Problem: "not_found"},
		{Name: "a folder", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + folder.ID + "/edit-url", Token: ann.creds.Token}, Status: 409, Problem: "conflict"},
		{Name: "a type the editor lacks", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + zipFile.ID + "/edit-url", Token: ann.creds.Token}, Status: 501, Problem: "editor_unavailable"},
		{Name: "bad lang", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + f.ID + "/edit-url?lang=%3Cscript%3E", Token: ann.creds.Token}, Status: 422, Problem: "validation_failed"},
		{Name: "edit-url needs drive:write", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + f.ID + "/edit-url", Token: readTok}, Status: 403, Problem: "insufficient_scope"},
		{Name: "editors with drive:read", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + f.ID + "/editors", Token: readTok}, Status: 200, Contains: []string{"[]"}},
		{Name: "create-document needs drive:write", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/create-document", Token: readTok, Body: map[string]any{"type": "odt"}}, Status: 403, Problem: "insufficient_scope"},
	})

	// Revoking the share ends the session's access.
	var shares []struct {
		ID string `json:"id"`
	}
	ann.rest.ok(200, "GET", "/api/v1/drive/"+f.ID+"/shares", nil, &shares)
	ann.rest.ok(204, "DELETE", "/api/v1/drive/"+f.ID+"/shares/"+shares[0].ID, nil, nil)
	wantWOPI(t, wopiCall(s, "GET", f.ID, "", es.AccessToken, nil, nil), 404, nil)
}

func TestEditorCreateDocument(t *testing.T) {
	t.Parallel()
	editor, _ := newFakeEditor(t)
	s := webtest.New(t, withEditor(editor.URL))
	ann := newDavUser(t, s, "Drive Org", "ann@example.test", "admin")
	docs := ann.rest.folder("Docs", "")
	tests := []struct {
		body       map[string]any
		name, mime string
	}{
		{map[string]any{"name": "Plan", "type": "odt", "parent_id": docs.ID}, "Plan.odt", "application/vnd.oasis.opendocument.text"},
		{map[string]any{"name": "Plan", "type": "odt", "parent_id": docs.ID}, "Plan (1).odt", "application/vnd.oasis.opendocument.text"},
		{map[string]any{"type": "ods"}, "New spreadsheet.ods", "application/vnd.oasis.opendocument.spreadsheet"},
		{map[string]any{"name": "Slides.odp"}, "Slides.odp", "application/vnd.oasis.opendocument.presentation"},
		{map[string]any{"name": "Letter", "type": "docx"}, "Letter.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var es editSession
			ann.rest.ok(201, "POST", "/api/v1/drive/create-document", tt.body, &es)
			if es.File == nil || es.File.Name != tt.name || es.File.MimeType != tt.mime || es.File.Version != 1 || es.FileID != es.File.ID ||
				!strings.Contains(es.EditURL, url.QueryEscape(s.URL+"/wopi/files/"+es.FileID)) {
				t.Fatalf("session %+v file %+v", es, es.File)
			}
			b := ann.rest.download(es.FileID)
			zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatalf("not a zip: %v", err)
			}
			if strings.HasSuffix(tt.name, ".docx") {
				if zr.File[0].Name != "[Content_Types].xml" {
					t.Fatalf("first entry %s", zr.File[0].Name)
				}
			} else {
				first := zr.File[0]
				rc, _ := first.Open()
				var mt bytes.Buffer
				mt.ReadFrom(rc)
				if first.Name != "mimetype" || first.Method != zip.Store || mt.String() != tt.mime {
					t.Fatalf("first entry %s (method %d): %q", first.Name, first.Method, mt.String())
				}
			}
			res := wopiCall(s, "GET", es.FileID, "", es.AccessToken, nil, nil)
			wantWOPI(t, res, 200, nil)
			if info := res.JSON(); info["BaseFileName"] != tt.name || info["Size"] != float64(len(b)) {
				t.Fatalf("CheckFileInfo %v", info)
			}
		})
	}
	if n := events(t, s, "drive.file.created", map[string]any{"name": "Letter.docx"}); n != 1 {
		t.Fatalf("%d drive.file.created events", n)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "name and type disagree", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/create-document", Token: ann.creds.Token,
			Body: map[string]any{"name": "a.docx", "type": "odt"}}, Status: 422, Problem: "validation_failed"},
		{Name: "unknown type", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/create-document", Token: ann.creds.Token,
			Body: map[string]any{"type": "pdf"}}, Status: 422, Problem: "validation_failed"},
		{Name: "no such folder", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/create-document", Token: ann.creds.Token,
			Body: map[string]any{"type": "odt", "parent_id": "nope"}}, Status: 404, Problem: "not_found"},
	})
}

func TestEditorUnavailable(t *testing.T) {
	t.Parallel()
	noSoffice := filepath.Join(t.TempDir(), "soffice") // no soffice either
	s := webtest.New(t, func(c *wire.Config) { c.Editor.SofficePath = noSoffice })
	ann := newDavUser(t, s, "Drive Org", "ann@example.test", "admin")
	f := ann.rest.upload("report.docx", "", "", []byte("docx"))
	odt := ann.rest.upload("report.odt", "", "", []byte("odt"))
	sh := ann.rest.share(f.ID, map[string]any{"create_link": true, "permission": "edit"})
	link := linkToken(t, s, sh)
	tok := ann.creds.Token
	s.Run(t, []webtest.Scenario{
		{Name: "edit-url", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + f.ID + "/edit-url", Token: tok}, Status: 501, Problem: "editor_unavailable"},
		{Name: "create-document", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/create-document", Token: tok, Body: map[string]any{"name": "x.odt"}}, Status: 501, Problem: "editor_unavailable"},
		{Name: "shared-link edit-url", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + link + "/edit-url"}, Status: 501, Problem: "editor_unavailable"},
		{Name: "editors is empty", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + f.ID + "/editors", Token: tok}, Status: 200, Contains: []string{"[]"}},
		{Name: "save-as-odf without soffice", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + f.ID + "/save-as-odf", Token: tok}, Status: 501, Problem: "editor_unavailable", Contains: []string{"soffice"}},
		{Name: "save-as-odf of an odt", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + odt.ID + "/save-as-odf", Token: tok}, Status: 422, Problem: "validation_failed"},
		{Name: "WOPI without an editor", Request: webtest.Request{Method: "GET", Path: "/wopi/files/" + f.ID + "?access_token=x"}, Status: 401},
	})
	if l := ann.rest.list("/api/v1/drive/browse"); l.Total != 2 {
		t.Fatalf("items after refused create-document: %s", names(l))
	}
}

func TestEditorSharedLink(t *testing.T) {
	t.Parallel()
	editor, _ := newFakeEditor(t)
	s := webtest.New(t, withEditor(editor.URL))
	ann := newDavUser(t, s, "Drive Org", "ann@example.test", "admin")
	f := ann.rest.upload("report.odt", "", "", []byte("v1"))
	edit := ann.rest.share(f.ID, map[string]any{"create_link": true, "permission": "edit"})
	view := ann.rest.share(f.ID, map[string]any{"create_link": true, "permission": "view"})
	folder := ann.rest.folder("Docs", "")
	folderLink := ann.rest.share(folder.ID, map[string]any{"create_link": true, "permission": "edit"})
	editTok, viewTok := linkToken(t, s, edit), linkToken(t, s, view)

	res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + editTok + "/edit-url?lang=en"})
	if res.StatusCode != 200 {
		t.Fatalf("edit link: %d %s", res.StatusCode, res.Body)
	}
	var es editSession
	res.Decode(t, &es)
	if es.Action != "edit" || es.FileID != f.ID || es.File != nil {
		t.Fatalf("link session %+v", es)
	}
	res = wopiCall(s, "GET", f.ID, "", es.AccessToken, nil, nil)
	wantWOPI(t, res, 200, nil)
	if info := res.JSON(); info["IsAnonymousUser"] != true || info["UserCanWrite"] != true || info["UserCanNotWriteRelative"] != true || info["UserFriendlyName"] != "Guest" {
		t.Fatalf("guest CheckFileInfo %v", info)
	}
	wantWOPI(t, wopiCall(s, "POST", f.ID, "", es.AccessToken, wopiOp("LOCK", "X-WOPI-Lock", "G"), nil), 200, nil)
	wantWOPI(t, wopiCall(s, "POST", f.ID, "contents", es.AccessToken, wopiOp("PUT", "X-WOPI-Lock", "G"), "by guest"), 200, nil)
	var eds []editorUser
	ann.rest.ok(200, "GET", "/api/v1/drive/"+f.ID+"/editors", nil, &eds)
	if len(eds) != 1 || !eds[0].Guest || eds[0].UserID != "" {
		t.Fatalf("editors %+v", eds)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "view link", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + viewTok + "/edit-url"}, Status: 403, Problem: "forbidden"},
		{Name: "folder link", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + linkToken(t, s, folderLink) + "/edit-url"}, Status: 409, Problem: "conflict"},
		{Name: "unknown link", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/nope/edit-url"}, Status: 404, Problem: "not_found"},
	})
	ann.rest.ok(204, "DELETE", "/api/v1/drive/"+f.ID+"/shares/"+edit.ID, nil, nil)
	s.Run(t, []webtest.Scenario{
		{Name: "revoked link", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + editTok + "/edit-url"}, Status: 404, Problem: "not_found"},
	})
	wantWOPI(t, wopiCall(s, "GET", f.ID, "", es.AccessToken, nil, nil), 401, nil)
}

// fakeSofficeScript behaves like soffice --convert-to: it writes
// <outdir>/<base>.<ext> holding "converted:" and the source; a source
// containing FAIL makes it fail.
const fakeSofficeScript = `#!/bin/sh
out=""; ext=""; in=""
while [ $# -gt 0 ]; do
  case "$1" in
    --outdir) out="$2"; shift;;
    --convert-to) ext="$2"; shift;;
    *) in="$1";;
  esac
  shift
done
if grep -q FAIL "$in"; then echo "Error: source file could not be loaded" >&2; exit 1; fi
base=$(basename "$in"); base="${base%.*}"
printf 'converted:' > "$out/$base.$ext"
cat "$in" >> "$out/$base.$ext"
`

func TestSaveAsODF(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "soffice"), []byte(fakeSofficeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	s := webtest.New(t, func(c *wire.Config) { c.Editor.SofficePath = filepath.Join(dir, "soffice") })
	ann := newDavUser(t, s, "Drive Org", "ann@example.test", "admin")
	bob := newDavUser(t, s, "Drive Org", "bob@example.test", "member")
	docs := ann.rest.folder("Docs", "")
	tests := []struct{ src, mime, want, wantMime string }{
		{"Report.docx", "", "Report.odt", "application/vnd.oasis.opendocument.text"},
		{"Report.docx", "", "Report (1).odt", "application/vnd.oasis.opendocument.text"},
		{"Budget.xls", "application/vnd.ms-excel", "Budget.ods", "application/vnd.oasis.opendocument.spreadsheet"},
		{"Deck.pptx", "", "Deck.odp", "application/vnd.oasis.opendocument.presentation"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			src := ann.rest.upload(tt.src, docs.ID, tt.mime, []byte("bytes of "+tt.src))
			var out driveFile
			ann.rest.ok(201, "POST", "/api/v1/drive/"+src.ID+"/save-as-odf", nil, &out)
			if out.Name != tt.want || out.MimeType != tt.wantMime || out.ParentID == nil || *out.ParentID != docs.ID || out.ID == src.ID {
				t.Fatalf("converted %+v", out)
			}
			if got := string(ann.rest.download(out.ID)); got != "converted:bytes of "+tt.src {
				t.Fatalf("content %q", got)
			}
		})
	}
	bad := ann.rest.upload("broken.docx", "", "", []byte("FAIL"))
	folderless := ann.rest.upload("shared.docx", docs.ID, "", []byte("shared"))
	ann.rest.share(folderless.ID, map[string]any{"user_id": bob.creds.UserID, "permission": "view"})
	s.Run(t, []webtest.Scenario{
		{Name: "soffice fails", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + bad.ID + "/save-as-odf", Token: ann.creds.Token}, Status: 422, Problem: "validation_failed", Contains: []string{"could not convert"}},
		{Name: "a folder", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + docs.ID + "/save-as-odf", Token: ann.creds.Token}, Status: 422, Problem: "validation_failed"},
	})
	// Shared for viewing: the copy goes to the caller's own root.
	var out driveFile
	bob.rest.ok(201, "POST", "/api/v1/drive/"+folderless.ID+"/save-as-odf", nil, &out)
	if out.Name != "shared.odt" || out.ParentID != nil || out.OwnerID != bob.creds.UserID {
		t.Fatalf("bob's copy %+v", out)
	}
}
