package web_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"atrium/app/identity"
	"atrium/webtest"
	"atrium/wire"
)

type driveFile struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	IsFolder    bool    `json:"is_folder"`
	MimeType    string  `json:"mime_type"`
	MimeGroup   string  `json:"mime_group"`
	SizeBytes   int64   `json:"size_bytes"`
	ParentID    *string `json:"parent_id"`
	OwnerID     string  `json:"owner_id"`
	OwnerName   string  `json:"owner_name"`
	Status      string  `json:"status"`
	Version     int     `json:"version"`
	ContentHash string  `json:"content_hash"`
	IsFavorite  bool    `json:"is_favorite"`
	TrashedAt   *string `json:"trashed_at"`
	Permission  string  `json:"permission"`
	Metadata    struct {
		Description string            `json:"description"`
		Tags        []string          `json:"tags"`
		Custom      map[string]string `json:"custom"`
	} `json:"metadata"`
}

type driveListing struct {
	Folder      *driveFile `json:"folder"`
	Breadcrumbs []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"breadcrumbs"`
	Items      []driveFile `json:"items"`
	Page       int         `json:"page"`
	PerPage    int         `json:"per_page"`
	Total      int         `json:"total"`
	TotalPages int         `json:"total_pages"`
}

// driveClient drives the REST API for one user.
type driveClient struct {
	t   testing.TB
	s   *webtest.Server
	tok string
}

func (c driveClient) do(method, path string, body any) *webtest.Response {
	c.t.Helper()
	return c.s.Do(webtest.Request{Method: method, Path: path, Token: c.tok, Body: body})
}

func (c driveClient) ok(status int, method, path string, body any, v any) {
	c.t.Helper()
	res := c.do(method, path, body)
	if res.StatusCode != status {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, res.Body, status)
	}
	if v != nil {
		res.Decode(c.t, v)
	}
}

func (c driveClient) folder(name, parent string) driveFile {
	c.t.Helper()
	var f driveFile
	c.ok(201, "POST", "/api/v1/drive/folders", map[string]any{"name": name, "parent_id": parent}, &f)
	return f
}

// putURL sends body to a presigned upload URL.
func putURL(t testing.TB, u, contentType string, body []byte) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("PUT", u, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

type uploadTicket struct {
	UploadURL string    `json:"upload_url"`
	File      driveFile `json:"file"`
}

// upload runs the three steps and returns the confirmed file.
func (c driveClient) upload(name, parent, mimeType string, content []byte) driveFile {
	c.t.Helper()
	var tk uploadTicket
	c.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": name, "parent_id": parent, "mime_type": mimeType, "size": len(content)}, &tk)
	if res := putURL(c.t, tk.UploadURL, mimeType, content); res.StatusCode != 200 {
		c.t.Fatalf("PUT upload: %d", res.StatusCode)
	}
	var f driveFile
	c.ok(200, "POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil, &f)
	return f
}

func (c driveClient) download(id string) []byte {
	c.t.Helper()
	var l struct {
		URL string `json:"url"`
	}
	c.ok(200, "GET", "/api/v1/drive/"+id+"/download", nil, &l)
	res, err := http.Get(l.URL)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		c.t.Fatalf("GET download URL: %d %s", res.StatusCode, b)
	}
	return b
}

func (c driveClient) list(path string) driveListing {
	c.t.Helper()
	var l driveListing
	c.ok(200, "GET", path, nil, &l)
	return l
}

func names(l driveListing) string {
	var n []string
	for _, f := range l.Items {
		n = append(n, f.Name)
	}
	return strings.Join(n, ",")
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

func newDrive(t *testing.T) (*webtest.Server, driveClient) {
	s := webtest.New(t)
	cr := s.Bootstrap("Drive Org", "ann@example.test", "admin")
	return s, driveClient{t: t, s: s, tok: cr.Token}
}

func TestDriveThreeStepUpload(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	content := []byte("hello, drive\n")

	var tk uploadTicket
	c.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "hello.txt", "mime_type": "text/plain", "size": len(content)}, &tk)
	if tk.File.Status != "pending" || tk.File.ID == "" || !strings.Contains(tk.UploadURL, "/blob/u/") {
		t.Fatalf("ticket %+v", tk)
	}
	// Pending: invisible in browse; confirm before the bytes → 409.
	if l := c.list("/api/v1/drive/browse"); l.Total != 0 {
		t.Fatalf("pending file listed: %+v", l)
	}
	webtest.Check(t, c.do("POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil), webtest.Scenario{Status: 409, Problem: "conflict"})
	// The PUT checks the declared type and size, and needs no bearer.
	// Its errors are whole problems, like every other error of the API.
	req, _ := http.NewRequest("PUT", tk.UploadURL, bytes.NewReader(content))
	req.Header.Set("Content-Type", "image/png")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	json.NewDecoder(res.Body).Decode(&p)
	res.Body.Close()
	if res.StatusCode != 422 || p["code"] != "validation_failed" || p["type"] != s.URL+"/problems/validation_failed" ||
		!strings.HasPrefix(fmt.Sprint(p["instance"]), "urn:request:") || p["detail"] == "" {
		t.Fatalf("wrong content type: %d %v", res.StatusCode, p)
	}
	if res := putURL(t, tk.UploadURL, "text/plain", content[:5]); res.StatusCode != 422 {
		t.Fatalf("wrong length: %d", res.StatusCode)
	}
	if res := putURL(t, tk.UploadURL+"x", "text/plain", content); res.StatusCode != 403 && res.StatusCode != 401 {
		t.Fatalf("tampered URL: %d", res.StatusCode)
	}
	if n := presignKept(t, s, tk.File.ID, content); n != 0 {
		t.Fatalf("refused PUTs kept %d things", n)
	}
	if res := putURL(t, tk.UploadURL, "text/plain", content); res.StatusCode != 200 {
		t.Fatalf("PUT: %d", res.StatusCode)
	}
	var f driveFile
	c.ok(200, "POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil, &f)
	if f.Status != "active" || f.Version != 1 || f.ContentHash != sha(content) || f.SizeBytes != int64(len(content)) ||
		f.MimeGroup != "text" || f.OwnerName == "" {
		t.Fatalf("confirmed %+v", f)
	}
	if got := c.download(f.ID); !bytes.Equal(got, content) {
		t.Fatalf("download %q", got)
	}
	// Range on the presigned URL.
	var l struct{ URL string }
	c.ok(200, "GET", "/api/v1/drive/"+f.ID+"/download", nil, &l)
	req, _ = http.NewRequest("GET", l.URL, nil)
	req.Header.Set("Range", "bytes=7-11")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 206 || string(b) != "drive" || !strings.Contains(res.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("range: %d %q %s", res.StatusCode, b, res.Header.Get("Content-Disposition"))
	}

	// A second upload of the same name is a new version of the same file.
	v2 := []byte("second version")
	f2 := c.upload("HELLO.txt", "", "text/plain", v2)
	if f2.ID != f.ID || f2.Version != 2 || f2.ContentHash != sha(v2) || f2.Name != "hello.txt" {
		t.Fatalf("new version %+v", f2)
	}
	var vs []struct {
		ID          string `json:"id"`
		Version     int    `json:"version"`
		ContentHash string `json:"content_hash"`
		CreatedBy   string `json:"created_by"`
	}
	c.ok(200, "GET", "/api/v1/drive/"+f.ID+"/versions", nil, &vs)
	if len(vs) != 2 || vs[0].Version != 2 || vs[1].ContentHash != sha(content) || vs[1].CreatedBy == "" {
		t.Fatalf("versions %+v", vs)
	}
	var f3 driveFile
	c.ok(200, "POST", "/api/v1/drive/"+f.ID+"/versions/"+vs[1].ID+"/restore", nil, &f3)
	if f3.Version != 3 || f3.ContentHash != sha(content) {
		t.Fatalf("restored %+v", f3)
	}
	if got := c.download(f.ID); !bytes.Equal(got, content) {
		t.Fatalf("download after restore %q", got)
	}
	var vl struct{ URL string }
	c.ok(200, "GET", "/api/v1/drive/"+f.ID+"/versions/"+vs[0].ID+"/download", nil, &vl)
	if vres, err := http.Get(vl.URL); err != nil || vres.StatusCode != 200 {
		t.Fatalf("version download: %v", err)
	} else {
		vb, _ := io.ReadAll(vres.Body)
		vres.Body.Close()
		if !bytes.Equal(vb, v2) {
			t.Fatalf("version 2 bytes %q", vb)
		}
	}
	// Versions count towards storage.
	var u struct {
		UsedBytes  int64 `json:"used_bytes"`
		QuotaBytes int64 `json:"quota_bytes"`
		FileCount  int64 `json:"file_count"`
	}
	c.ok(200, "GET", "/api/v1/drive/storage", nil, &u)
	if want := int64(2*len(content) + len(v2)); u.UsedBytes != want || u.FileCount != 1 || u.QuotaBytes <= 0 {
		t.Fatalf("storage %+v, want used %d", u, want)
	}
	// Idempotent upload request.
	hdr := map[string]string{"Idempotency-Key": "up-1"}
	r1 := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/upload", Token: c.tok, Header: hdr, Body: map[string]any{"name": "i.txt", "size": 1}})
	r2 := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/upload", Token: c.tok, Header: hdr, Body: map[string]any{"name": "i.txt", "size": 1}})
	if r1.StatusCode != 201 || r2.StatusCode != 201 || r2.Header.Get("X-Idempotency-Replayed") != "true" || !bytes.Equal(r1.Body, r2.Body) {
		t.Fatalf("idempotent upload: %d %d %s", r1.StatusCode, r2.StatusCode, r2.Header.Get("X-Idempotency-Replayed"))
	}
}

func TestDriveNamesAndTree(t *testing.T) {
	t.Parallel()
	_, c := newDrive(t)
	docs := c.folder("Docs", "")
	sub := c.folder("Sub", docs.ID)
	deep := c.folder("Deep", sub.ID)
	c.upload("a.txt", docs.ID, "text/plain", []byte("a"))

	bad := []string{"", ".", "..", "a/b", "nul\x00", "tab\there", strings.Repeat("é", 128), "   "}
	for _, n := range bad {
		res := c.do("POST", "/api/v1/drive/folders", map[string]any{"name": n})
		if res.StatusCode != 422 {
			t.Errorf("name %q: %d %s", n, res.StatusCode, res.Body)
		}
	}
	webtest.Check(t, c.do("POST", "/api/v1/drive/folders", map[string]any{"name": "docs"}), webtest.Scenario{Status: 409, Problem: "conflict"})
	webtest.Check(t, c.do("PATCH", "/api/v1/drive/"+sub.ID+"/rename", map[string]any{"name": "A.TXT"}), webtest.Scenario{Status: 409, Problem: "conflict"})
	// Move never into itself or below.
	webtest.Check(t, c.do("PATCH", "/api/v1/drive/"+docs.ID+"/move", map[string]any{"target_folder_id": deep.ID}), webtest.Scenario{Status: 422, Problem: "validation_failed"})
	webtest.Check(t, c.do("PATCH", "/api/v1/drive/"+docs.ID+"/move", map[string]any{"target_folder_id": docs.ID}), webtest.Scenario{Status: 422, Problem: "validation_failed"})
	var moved driveFile
	c.ok(200, "PATCH", "/api/v1/drive/"+deep.ID+"/move", map[string]any{"target_folder_id": ""}, &moved)
	if moved.ParentID != nil {
		t.Fatalf("moved to root: %+v", moved)
	}
	// Breadcrumbs.
	c.ok(200, "PATCH", "/api/v1/drive/"+deep.ID+"/move", map[string]any{"target_folder_id": sub.ID}, nil)
	l := c.list("/api/v1/drive/browse/" + deep.ID)
	if len(l.Breadcrumbs) != 3 || l.Breadcrumbs[0].Name != "Docs" || l.Breadcrumbs[2].Name != "Deep" || l.Folder == nil {
		t.Fatalf("breadcrumbs %+v", l.Breadcrumbs)
	}
	// Copy of a folder: everything live is copied, the name numbered.
	var cp driveFile
	c.ok(201, "POST", "/api/v1/drive/"+docs.ID+"/copy", nil, &cp)
	if cp.Name != "Docs (1)" || cp.ID == docs.ID {
		t.Fatalf("copy %+v", cp)
	}
	if n := names(c.list("/api/v1/drive/browse/" + cp.ID)); n != "Sub,a.txt" {
		t.Fatalf("copied children %q", n)
	}
	// Trash a folder: it leaves browse, its children go with it; restore into
	// the root when the original parent is gone.
	c.ok(204, "POST", "/api/v1/drive/"+sub.ID+"/trash", nil, nil)
	if n := names(c.list("/api/v1/drive/browse/" + docs.ID)); n != "a.txt" {
		t.Fatalf("after trash %q", n)
	}
	webtest.Check(t, c.do("GET", "/api/v1/drive/browse/"+deep.ID, nil), webtest.Scenario{Status: 404, Problem: "not_found"})
	if n := names(c.list("/api/v1/drive/trash")); n != "Sub" {
		t.Fatalf("trash %q", n)
	}
	webtest.Check(t, c.do("POST", "/api/v1/drive/"+deep.ID+"/restore", nil), webtest.Scenario{Status: 409, Problem: "conflict"})
	c.ok(204, "DELETE", "/api/v1/drive/"+docs.ID, nil, nil)
	var restored driveFile
	c.ok(200, "POST", "/api/v1/drive/"+sub.ID+"/restore", nil, &restored)
	if restored.ParentID != nil || restored.TrashedAt != nil {
		t.Fatalf("restored %+v", restored)
	}
	if n := names(c.list("/api/v1/drive/browse/" + sub.ID)); n != "Deep" {
		t.Fatalf("restored children %q", n)
	}
	// Empty trash and permanent delete.
	c.ok(204, "POST", "/api/v1/drive/"+cp.ID+"/trash", nil, nil)
	c.ok(204, "DELETE", "/api/v1/drive/trash", nil, nil)
	webtest.Check(t, c.do("GET", "/api/v1/drive/"+cp.ID+"/detail", nil), webtest.Scenario{Status: 404, Problem: "not_found"})
	if n := names(c.list("/api/v1/drive/browse")); n != "Sub" {
		t.Fatalf("root after all %q", n)
	}
	var u struct {
		UsedBytes int64 `json:"used_bytes"`
		FileCount int64 `json:"file_count"`
	}
	c.ok(200, "GET", "/api/v1/drive/storage", nil, &u)
	if u.UsedBytes != 0 || u.FileCount != 0 {
		t.Fatalf("storage after deleting everything %+v", u)
	}
}

func TestDriveListing(t *testing.T) {
	t.Parallel()
	_, c := newDrive(t)
	c.folder("zeta", "")
	c.upload("b.pdf", "", "application/pdf", []byte("%PDF-1.4 b"))
	c.upload("a.png", "", "image/png", []byte("png"))
	c.upload("c.txt", "", "text/plain", []byte("cccccccccc"))
	c.ok(200, "POST", "/api/v1/drive/"+c.list("/api/v1/drive/browse?q=c.t").Items[0].ID+"/favorite", nil, nil)

	cases := []struct{ query, want string }{
		{"", "zeta,a.png,b.pdf,c.txt"},
		{"?sort_by=name&sort_order=desc", "zeta,c.txt,b.pdf,a.png"},
		{"?sort_by=size_bytes", "zeta,c.txt,b.pdf,a.png"},
		{"?per_page=2&page=2", "b.pdf,c.txt"},
		{"?limit=1&offset=1", "a.png"},
		{"?mime_group=pdf", "b.pdf"},
		{"?mime_types=image/png&mime_types=text/plain", "a.png,c.txt"},
		{"?is_folder=true", "zeta"},
		{"?q=P", "a.png,b.pdf"},
		{"?filter=size_bytes:gt:3&filter=name:contains:.", "b.pdf,c.txt"},
		{"?or_filter=name:eq:A.PNG&or_filter=is_favorite:eq:true", "a.png,c.txt"},
		{"?filter=name:prefix:ze", "zeta"},
	}
	for _, tc := range cases {
		if got := names(c.list("/api/v1/drive/browse" + tc.query)); got != tc.want {
			t.Errorf("browse%s = %q, want %q", tc.query, got, tc.want)
		}
	}
	l := c.list("/api/v1/drive/browse?per_page=3")
	if l.Total != 4 || l.TotalPages != 2 || l.PerPage != 3 || l.Page != 1 {
		t.Errorf("pagination %+v", l)
	}
	for _, q := range []string{"filter=size:gt:1", "filter=size_bytes:gt:x", "filter=nocolon", "or_filter=name:like:x", "sort_by=owner", "per_page=501"} {
		res := c.do("GET", "/api/v1/drive/browse?"+q, nil)
		webtest.Check(t, res, webtest.Scenario{Status: 422, Problem: "validation_failed"})
	}
	res := c.do("GET", "/api/v1/drive/browse?filter=size_bytes:gt:x", nil)
	if !strings.Contains(string(res.Body), "query.filter[0]") {
		t.Errorf("malformed filter not named: %s", res.Body)
	}
	var bd struct {
		Categories []struct {
			MimeGroup string `json:"mime_group"`
			Bytes     int64  `json:"bytes"`
			Count     int64  `json:"count"`
		} `json:"categories"`
		LargestFiles []driveFile `json:"largest_files"`
	}
	c.ok(200, "GET", "/api/v1/drive/storage/breakdown", nil, &bd)
	got := map[string]int64{}
	for _, cat := range bd.Categories {
		got[cat.MimeGroup] = cat.Bytes
	}
	if got["pdf"] != 10 || got["image"] != 3 || got["text"] != 10 || len(bd.LargestFiles) != 3 || bd.LargestFiles[0].SizeBytes != 10 {
		t.Errorf("breakdown %+v", bd)
	}
}

func TestDriveMetadataFavoriteComments(t *testing.T) {
	t.Parallel()
	_, c := newDrive(t)
	f := c.upload("notes.md", "", "", []byte("# notes"))
	if f.MimeType != "text/markdown" {
		t.Errorf("mime from extension: %q", f.MimeType)
	}
	var m driveFile
	c.ok(200, "PATCH", "/api/v1/drive/"+f.ID+"/metadata", map[string]any{"description": "my notes", "tags": []string{"a", "b", "a"}, "custom": map[string]string{"k": "v"}}, &m)
	if m.Metadata.Description != "my notes" || strings.Join(m.Metadata.Tags, ",") != "a,b" || m.Metadata.Custom["k"] != "v" {
		t.Errorf("metadata %+v", m.Metadata)
	}
	var fav driveFile
	c.ok(200, "POST", "/api/v1/drive/"+f.ID+"/favorite", nil, &fav)
	if !fav.IsFavorite {
		t.Error("favorite not set")
	}
	c.ok(200, "POST", "/api/v1/drive/"+f.ID+"/favorite", nil, &fav)
	if fav.IsFavorite {
		t.Error("favorite not toggled back")
	}
	var ch1, ch2 map[string]string
	c.ok(200, "GET", "/api/v1/drive/"+f.ID+"/comments", nil, &ch1)
	c.ok(200, "GET", "/api/v1/drive/"+f.ID+"/comments", nil, &ch2)
	if ch1["channel_id"] == "" || ch1["channel_id"] != ch2["channel_id"] {
		t.Errorf("comments channel %v %v", ch1, ch2)
	}
}

func TestDriveAccess(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	f := c.upload("secret.txt", "", "text/plain", []byte("secret"))
	other := s.Bootstrap("Other Org", "eve@example.test", "admin")
	colleague := s.Bootstrap("Drive Org", "bob@example.test", "member")
	readOnly := s.Token("ann@example.test", "drive:read")
	noDrive := s.Token("ann@example.test", "contacts:read")

	// A starter organisation has no drive; a token without a user cannot act.
	ctx := context.Background()
	org, err := s.Main.Identity.EnsureOrg(ctx, identity.EnsureOrgInput{Name: "Starter Org", PlanSlug: "starter", Seats: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Main.Identity.EnsureUser(ctx, org.ID, identity.EnsureUserInput{Email: "sam@starter.test", Role: "admin"}); err != nil {
		t.Fatal(err)
	}
	starter := s.Token("sam@starter.test")
	var sp struct{ ID string }
	c.ok(201, "POST", "/api/v1/developer/service-principals", map[string]any{"name": "robot", "scopes": []string{"drive:read"}}, &sp)
	var spTok struct{ Token string }
	c.ok(201, "POST", "/api/v1/developer/service-principals/"+sp.ID+"/tokens", map[string]any{}, &spTok)

	paths := []struct{ method, path string }{
		{"GET", "/api/v1/drive/" + f.ID + "/detail"},
		{"GET", "/api/v1/drive/" + f.ID + "/download"},
		{"PATCH", "/api/v1/drive/" + f.ID + "/rename"},
		{"POST", "/api/v1/drive/" + f.ID + "/trash"},
		{"DELETE", "/api/v1/drive/" + f.ID},
		{"GET", "/api/v1/drive/" + f.ID + "/versions"},
		{"GET", "/api/v1/drive/browse/" + f.ID},
	}
	for _, p := range paths {
		for _, tok := range []string{other.Token, colleague.Token} {
			res := s.Do(webtest.Request{Method: p.method, Path: p.path, Token: tok, Body: map[string]any{"name": "x"}})
			if res.StatusCode != 404 || strings.Contains(string(res.Body), "secret") {
				t.Errorf("%s %s by outsider: %d %s", p.method, p.path, res.StatusCode, res.Body)
			}
		}
	}
	s.Run(t, []webtest.Scenario{
		{Name: "no credential", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/browse"}, Status: 401, Problem: "unauthorized"},
		{Name: "read scope cannot write", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/folders", Token: readOnly, Body: map[string]any{"name": "x"}}, Status: 403, Problem: "insufficient_scope"},
		{Name: "read scope reads", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/browse", Token: readOnly}, Status: 200, Contains: []string{"secret.txt"}},
		{Name: "plan without drive", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/browse", Token: starter}, Status: 403, Problem: "feature_not_in_plan"},
		{Name: "token without a user", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/browse", Token: spTok.Token}, Status: 403, Problem: "no_bound_user"},
		{Name: "no drive scope", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/browse", Token: noDrive}, Status: 403, Problem: "insufficient_scope"},
	})
}

func TestDriveQuotaBoundary(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	ctx := context.Background()
	if _, err := s.Main.DB.Exec(ctx, `UPDATE plans SET quota_bytes = 100 WHERE slug = 'enterprise'`); err != nil {
		t.Fatal(err)
	}
	s.Main.Identity.CredentialsChanged() // credentials carry the quota
	tok := s.Token("ann@example.test")   // a fresh token sees the new quota
	c.tok = tok
	c.upload("a.bin", "", "application/octet-stream", make([]byte, 60))
	webtest.Check(t, c.do("POST", "/api/v1/drive/upload", map[string]any{"name": "b.bin", "size": 41}), webtest.Scenario{Status: 507, Problem: "quota_exceeded"})
	c.upload("b.bin", "", "application/octet-stream", make([]byte, 40)) // exactly the quota
	webtest.Check(t, c.do("POST", "/api/v1/drive/upload", map[string]any{"name": "c.bin", "size": 1}), webtest.Scenario{Status: 507, Problem: "quota_exceeded"})
	webtest.Check(t, c.do("POST", "/api/v1/drive/"+c.list("/api/v1/drive/browse?q=a.bin").Items[0].ID+"/copy", nil), webtest.Scenario{Status: 507, Problem: "quota_exceeded"})
	// Announced within quota, but the organisation fills up before the bytes
	// arrive: the PUT is refused before anything is kept.
	c.ok(204, "DELETE", "/api/v1/drive/"+c.list("/api/v1/drive/browse?q=b.bin").Items[0].ID, nil, nil)
	var tk uploadTicket
	c.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "late.bin", "size": 30}, &tk)
	c.upload("filler.bin", "", "application/octet-stream", make([]byte, 20))
	if res := putURL(t, tk.UploadURL, "application/octet-stream", make([]byte, 30)); res.StatusCode != 507 {
		t.Fatalf("PUT over quota: %d", res.StatusCode)
	}
	if n := presignKept(t, s, tk.File.ID, make([]byte, 30)); n != 0 {
		t.Fatalf("the PUT over quota kept %d things", n)
	}
}

// presignKept counts what the presigned PUTs of body for pending file fileID
// kept: the body as a small content, and the bytes noted on its upload.
func presignKept(t *testing.T, s *webtest.Server, fileID string, body []byte) int {
	t.Helper()
	db := openRO(t, s)
	defer db.Close()
	h := sha256.Sum256(body)
	var n int
	if err := db.QueryRow(`SELECT (SELECT COUNT(*) FROM drive_small_blobs WHERE hash = ?)
		+ (SELECT COUNT(*) FROM drive_uploads WHERE file_id = ? AND content_hash <> '')`, hex.EncodeToString(h[:]), fileID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDriveConfirmIntoTrashedFolder(t *testing.T) {
	t.Parallel()
	_, c := newDrive(t)
	dir := c.folder("gone", "")
	var tk uploadTicket
	c.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "late.txt", "parent_id": dir.ID, "mime_type": "text/plain", "size": 2}, &tk)
	putURL(t, tk.UploadURL, "text/plain", []byte("hi"))
	c.ok(204, "POST", "/api/v1/drive/"+dir.ID+"/trash", nil, nil)
	webtest.Check(t, c.do("POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil), webtest.Scenario{Status: 409, Problem: "conflict"})
}

// TestDriveConfirmRefusals: a confirmation that cannot be made says why
// (409, or 404 for a file the caller cannot see) and changes nothing; the
// one that can, after the bytes, activates the file once.
func TestDriveConfirmRefusals(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	bob := driveClient{t: t, s: s, tok: s.Bootstrap("Other Org", "bob@example.test", "admin").Token}
	var tk uploadTicket
	c.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "late.txt", "mime_type": "text/plain", "size": 2}, &tk)
	confirm := "/api/v1/drive/" + tk.File.ID + "/confirm"
	type rc struct {
		name string
		c    driveClient
		sc   webtest.Scenario
	}
	refusals := func(phase string, cases []rc) {
		for _, tc := range cases {
			t.Run(phase+"/"+tc.name, func(t *testing.T) { webtest.Check(t, tc.c.do("POST", confirm, nil), tc.sc) })
		}
	}
	refusals("before the bytes", []rc{
		{"the announcer", c, webtest.Scenario{Status: 409, Problem: "conflict", Contains: []string{"No bytes have arrived for this upload yet"}}},
		{"another organisation", bob, webtest.Scenario{Status: 404, Problem: "not_found"}},
	})
	putURL(t, tk.UploadURL, "text/plain", []byte("hi"))
	refusals("after the bytes", []rc{
		{"another organisation", bob, webtest.Scenario{Status: 404, Problem: "not_found"}},
	})
	var f driveFile
	c.ok(200, "POST", confirm, nil, &f)
	if f.Status != "active" || f.SizeBytes != 2 {
		t.Fatalf("confirmed: %+v", f)
	}
	refusals("after the confirmation", []rc{
		{"again", c, webtest.Scenario{Status: 409, Problem: "conflict", Contains: []string{"The file has no upload waiting for confirmation."}}},
	})
	if l := c.list("/api/v1/drive/browse"); l.Total != 1 {
		t.Errorf("the drive lists %d items, want the one file", l.Total)
	}
}

func TestDriveConcurrency(t *testing.T) {
	t.Parallel()
	_, c := newDrive(t)
	dir := c.folder("busy", "")
	var files []driveFile
	for i := range 50 {
		files = append(files, c.upload(fmt.Sprintf("r%02d.txt", i), dir.ID, "text/plain", []byte{byte(i)}))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for i := range 50 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			content := []byte(fmt.Sprintf("file %d", i))
			var tk uploadTicket
			res := c.do("POST", "/api/v1/drive/upload", map[string]any{"name": fmt.Sprintf("u%02d.txt", i), "parent_id": dir.ID, "mime_type": "text/plain", "size": len(content)})
			if res.StatusCode != 201 {
				errs <- fmt.Sprintf("upload %d: %d %s", i, res.StatusCode, res.Body)
				return
			}
			res.Decode(t, &tk)
			if r := putURL(t, tk.UploadURL, "text/plain", content); r.StatusCode != 200 {
				errs <- fmt.Sprintf("put %d: %d", i, r.StatusCode)
				return
			}
			if r := c.do("POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil); r.StatusCode != 200 {
				errs <- fmt.Sprintf("confirm %d: %d %s", i, r.StatusCode, r.Body)
			}
		}()
		go func() {
			defer wg.Done()
			if r := c.do("PATCH", "/api/v1/drive/"+files[i].ID+"/rename", map[string]any{"name": fmt.Sprintf("renamed-%02d.txt", i)}); r.StatusCode != 200 {
				errs <- fmt.Sprintf("rename %d: %d %s", i, r.StatusCode, r.Body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	l := c.list("/api/v1/drive/browse/" + dir.ID + "?per_page=500")
	if l.Total != 100 {
		t.Fatalf("total %d, want 100", l.Total)
	}
	seen := map[string]bool{}
	for _, f := range l.Items {
		if seen[strings.ToLower(f.Name)] || f.Status != "active" {
			t.Errorf("item %+v duplicated or not active", f)
		}
		seen[strings.ToLower(f.Name)] = true
	}

	// Two concurrent creates of the same name: one wins, one 409.
	codes := make(chan int, 2)
	for range 2 {
		go func() {
			codes <- c.do("POST", "/api/v1/drive/folders", map[string]any{"name": "Twin", "parent_id": dir.ID}).StatusCode
		}()
	}
	a, b := <-codes, <-codes
	if a+b != 201+409 {
		t.Fatalf("twin creates: %d and %d", a, b)
	}
}

func TestDriveMaintenance(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	content := []byte("kept bytes")
	// Uploads never confirmed disappear after 24 h with their pending files
	// (two: the sweep removes several at once).
	var tk, tk2 uploadTicket
	c.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "never.txt", "mime_type": "text/plain", "size": 3}, &tk)
	putURL(t, tk.UploadURL, "text/plain", []byte("abc"))
	c.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "never again.txt", "mime_type": "text/plain", "size": 3}, &tk2)
	f := c.upload("kept.txt", "", "text/plain", content)
	gone := c.upload("gone.txt", "", "text/plain", []byte("to be purged"))
	c.ok(204, "POST", "/api/v1/drive/"+gone.ID+"/trash", nil, nil)

	s.Clock.Advance(25 * time.Hour)
	if _, err := s.Main.Drive.Maintain(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tk := range []uploadTicket{tk, tk2} {
		webtest.Check(t, c.do("GET", "/api/v1/drive/"+tk.File.ID+"/detail", nil), webtest.Scenario{Status: 404})
		if res := putURL(t, tk.UploadURL, "text/plain", []byte("abc")); res.StatusCode == 200 {
			t.Error("expired upload accepted bytes")
		}
	}
	db := openRO(t, s)
	var left int
	if err := db.QueryRow(`SELECT count(*) FROM drive_uploads`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d uploads left after the sweep (%v)", left, err)
	}
	db.Close()
	// Trash older than 30 days is purged; its blob goes after the grace period,
	// while shared content stays.
	s.Clock.Advance(31 * 24 * time.Hour)
	first, err := s.Main.Drive.Maintain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	webtest.Check(t, c.do("GET", "/api/v1/drive/"+gone.ID+"/detail", nil), webtest.Scenario{Status: 404})
	s.Clock.Advance(2 * time.Hour)
	done, err := s.Main.Drive.Maintain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if first["blobs_deleted"]+done["blobs_deleted"] != 2 || first["trash_purged"] != 1 {
		t.Errorf("maintenance %v then %v: want the expired upload's and the purged file's blobs deleted", first, done)
	}
	if got := c.download(f.ID); !bytes.Equal(got, content) {
		t.Fatalf("kept file lost: %q", got)
	}
}

// TestDriveDemo: the demo seeds a folder tree with real files, once.
func TestDriveDemo(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ctx := context.Background()
	var creds []wire.DemoCredential
	for range 2 {
		var err error
		if creds, err = wire.SeedDemo(ctx, s.Main); err != nil {
			t.Fatal(err)
		}
	}
	for _, cr := range creds {
		if cr.Email != "bob@acme.example" {
			continue
		}
		c := driveClient{t: t, s: s, tok: cr.Token}
		if got := names(c.list("/api/v1/drive/browse")); got != "Documents,Pictures,Reports" {
			t.Fatalf("demo root %q", got)
		}
		pics := c.list("/api/v1/drive/browse?q=Pictures").Items[0]
		png := c.list("/api/v1/drive/browse/" + pics.ID).Items[0]
		if png.MimeGroup != "image" || !bytes.HasPrefix(c.download(png.ID), []byte("\x89PNG")) {
			t.Fatalf("demo picture %+v", png)
		}
		reports := c.list("/api/v1/drive/browse?q=Reports").Items[0]
		pdf := c.list("/api/v1/drive/browse/" + reports.ID).Items[0]
		if b := c.download(pdf.ID); !bytes.HasPrefix(b, []byte("%PDF-1.4")) || !bytes.Contains(b, []byte("Annual report of Bob")) {
			t.Fatalf("demo pdf %q", b)
		}
		return
	}
	t.Fatal("no demo user bob")
}
