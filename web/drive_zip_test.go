package web_test

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"atrium/app/drive"
	"atrium/webtest"
)

// zipOf reads a ZIP answer: entry name → content (folders: ""), and the
// headers by name.
func zipOf(t *testing.T, res *webtest.Response) (map[string]string, map[string]*zip.FileHeader) {
	t.Helper()
	if res.StatusCode != 200 {
		t.Fatalf("zip: %d %s", res.StatusCode, res.Body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/zip" {
		t.Fatalf("Content-Type %q", ct)
	}
	zr, err := zip.NewReader(bytes.NewReader(res.Body), int64(len(res.Body)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	files, heads := map[string]string{}, map[string]*zip.FileHeader{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("open %s: %v", f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("read %s: %v", f.Name, err)
		}
		if _, dup := files[f.Name]; dup {
			t.Fatalf("entry %s twice", f.Name)
		}
		files[f.Name], heads[f.Name] = string(b), &f.FileHeader
	}
	return files, heads
}

func entryNames(m map[string]string) string {
	var n []string
	for k := range m {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, " | ")
}

func TestDriveFolderZip(t *testing.T) {
	t.Parallel()
	s, ann := newDrive(t)
	bobCr := s.Bootstrap("Drive Org", "bob@example.test", "member")
	bob := driveClient{t: t, s: s, tok: bobCr.Token}
	eve := driveClient{t: t, s: s, tok: s.Bootstrap("Other Org", "eve@example.test", "admin").Token}

	trip := ann.folder("Été 2026", "")
	ann.upload("résumé.txt", trip.ID, "text/plain", []byte("bonjour, été"))
	photo := []byte("\xff\xd8\xff\xe0 not a real jpeg, stored as is")
	ann.upload("photo.jpg", trip.ID, "image/jpeg", photo)
	days := ann.folder("Jours", trip.ID)
	ann.upload("日記.md", days.ID, "text/markdown", []byte("# 一日目\n"))
	deep := ann.folder("Profond", days.ID)
	ann.upload("vide.txt", deep.ID, "text/plain", []byte{})
	ann.folder("Empty", trip.ID)
	gone := ann.upload("gone.txt", trip.ID, "text/plain", []byte("trashed"))
	ann.ok(204, "POST", "/api/v1/drive/"+gone.ID+"/trash", nil, nil)
	goneDir := ann.folder("Corbeille", trip.ID)
	ann.upload("inside.txt", goneDir.ID, "text/plain", []byte("trashed with its folder"))
	ann.ok(204, "POST", "/api/v1/drive/"+goneDir.ID+"/trash", nil, nil)
	cold := ann.upload("old report.txt", days.ID, "text/plain", []byte("archived"))
	ann.ok(200, "POST", "/api/v1/drive/"+cold.ID+"/archive", nil, nil)
	outside := ann.upload("outside.txt", "", "text/plain", []byte("not in the folder"))

	res := ann.do("GET", "/api/v1/drive/"+trip.ID+"/download.zip", nil)
	if cd := res.Header.Get("Content-Disposition"); cd != `attachment; filename="_t_ 2026.zip"; filename*=UTF-8''%C3%89t%C3%A9%202026.zip` {
		t.Errorf("Content-Disposition %q", cd)
	}
	files, heads := zipOf(t, res)
	want := "Été 2026/ | Été 2026/ARCHIVED FILES NOT INCLUDED.txt | Été 2026/Empty/ | Été 2026/Jours/ | Été 2026/Jours/Profond/ | " +
		"Été 2026/Jours/Profond/vide.txt | Été 2026/Jours/日記.md | Été 2026/photo.jpg | Été 2026/résumé.txt"
	if got := entryNames(files); got != want {
		t.Fatalf("entries\n got %s\nwant %s", got, want)
	}
	for name, content := range map[string]string{"Été 2026/résumé.txt": "bonjour, été", "Été 2026/photo.jpg": string(photo),
		"Été 2026/Jours/日記.md": "# 一日目\n", "Été 2026/Jours/Profond/vide.txt": ""} {
		if files[name] != content {
			t.Errorf("%s: %q, want %q", name, files[name], content)
		}
	}
	if note := files["Été 2026/ARCHIVED FILES NOT INCLUDED.txt"]; !strings.Contains(note, "Jours/old report.txt") {
		t.Errorf("archived note %q", note)
	}
	if h := heads["Été 2026/photo.jpg"]; h.Method != zip.Store {
		t.Errorf("photo.jpg method %d, want stored", h.Method)
	}
	if h := heads["Été 2026/résumé.txt"]; h.Method != zip.Deflate || h.Flags&0x800 == 0 || h.Modified.IsZero() {
		t.Errorf("résumé.txt header: method %d flags %#x modified %v", h.Method, h.Flags, h.Modified)
	}
	if h := heads["Été 2026/Jours/"]; !h.Mode().IsDir() {
		t.Errorf("Jours/ is not a directory entry: %v", h.Mode())
	}
	if strings.Contains(string(res.Body), "not in the folder") {
		t.Error("the archive holds a file outside the folder")
	}

	// The plain download of a folder points to the ZIP.
	s.Run(t, []webtest.Scenario{
		{Name: "download of a folder", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + trip.ID + "/download", Token: ann.tok}, Status: 409, Contains: []string{"download.zip"}},
		{Name: "zip of a file", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + outside.ID + "/download.zip", Token: ann.tok}, Status: 409, Problem: "conflict"},
		{Name: "zip of a trashed folder", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + goneDir.ID + "/download.zip", Token: ann.tok}, Status: 409, Problem: "conflict"},
		{Name: "no credential", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + trip.ID + "/download.zip"}, Status: 401},
		{Name: "same org, no share", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + trip.ID + "/download.zip", Token: bob.tok}, Status: 404, Problem: "not_found"},
		{Name: "other org", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + trip.ID + "/download.zip", Token: eve.tok}, Status: 404, Problem: "not_found"},
		{Name: "unknown id", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/nope/download.zip", Token: ann.tok}, Status: 404, Problem: "not_found"},
	})

	// A view share of a subfolder gives that subfolder only.
	ann.share(days.ID, map[string]any{"email": "bob@example.test"})
	files, _ = zipOf(t, bob.do("GET", "/api/v1/drive/"+days.ID+"/download.zip", nil))
	if got, want := entryNames(files), "Jours/ | Jours/ARCHIVED FILES NOT INCLUDED.txt | Jours/Profond/ | Jours/Profond/vide.txt | Jours/日記.md"; got != want {
		t.Fatalf("bob's entries\n got %s\nwant %s", got, want)
	}
	if res := bob.do("GET", "/api/v1/drive/"+trip.ID+"/download.zip", nil); res.StatusCode != 404 {
		t.Errorf("bob zips the folder above his share: %d", res.StatusCode)
	}
	files, _ = zipOf(t, bob.do("GET", "/api/v1/drive/"+deep.ID+"/download.zip", nil))
	if got := entryNames(files); got != "Profond/ | Profond/vide.txt" {
		t.Errorf("bob zips a folder inside his share: %s", got)
	}

	// A link to a folder: the ZIP of the shared folder or of a folder inside it, nothing else.
	tok := linkToken(t, s, ann.share(days.ID, map[string]any{"create_link": true}))
	files, _ = zipOf(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + tok + "/download.zip"}))
	if got := entryNames(files); !strings.HasPrefix(got, "Jours/ | ") || strings.Contains(got, "photo.jpg") {
		t.Errorf("link zip: %s", got)
	}
	files, _ = zipOf(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + tok + "/download.zip?folder_id=" + deep.ID}))
	if got := entryNames(files); got != "Profond/ | Profond/vide.txt" {
		t.Errorf("link zip of an inner folder: %s", got)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "link: folder outside", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + tok + "/download.zip?folder_id=" + trip.ID}, Status: 404},
		{Name: "link: unknown token", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/nope/download.zip"}, Status: 404},
	})
}

// The entry limit is checked before the answer starts: 422 with a problem,
// no bytes of an archive. Not parallel: it lowers the process-wide limit.
func TestDriveFolderZipLimit(t *testing.T) {
	_, ann := newDrive(t)
	big := ann.folder("Big", "")
	sub := ann.folder("sub", big.ID)
	for _, n := range []string{"a.txt", "b.txt"} {
		ann.upload(n, sub.ID, "text/plain", []byte(n))
	}
	defer drive.SetZipEntryLimit(3)()
	if files, _ := zipOf(t, ann.do("GET", "/api/v1/drive/"+big.ID+"/download.zip", nil)); len(files) != 4 {
		t.Fatalf("3 items at the limit of 3: %s", entryNames(files))
	}
	ann.upload("c.txt", big.ID, "text/plain", []byte("c"))
	res := ann.do("GET", "/api/v1/drive/"+big.ID+"/download.zip", nil)
	webtest.Check(t, res, webtest.Scenario{Status: http.StatusUnprocessableEntity, Problem: "validation_failed", Contains: []string{"more than 3"}})
	if bytes.HasPrefix(res.Body, []byte("PK")) {
		t.Error("a refused archive sent zip bytes")
	}
}

// The web app's Download of a folder: the same archive with the session
// cookie; signed out → sign-in; a refusal is a page, not a broken archive.
func TestWebAppDriveFolderZip(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	fx := newDriveFixture(t, s, "zipper@example.test")
	b := newBrowser(t, s)
	b.mustSignIn("zipper@example.test", testPassword)
	p := b.get("/drive/" + fx.folderID + "/download.zip")
	if p.StatusCode != 200 || p.Header.Get("Content-Type") != "application/zip" ||
		!strings.HasPrefix(p.Header.Get("Content-Disposition"), `attachment; filename="Reports & <b>plans.zip"`) {
		t.Fatalf("zip page: %d %q %q", p.StatusCode, p.Header.Get("Content-Type"), p.Header.Get("Content-Disposition"))
	}
	zr, err := zip.NewReader(strings.NewReader(p.Body), int64(len(p.Body)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	var got []string
	for _, f := range zr.File {
		got = append(got, f.Name)
	}
	if want := "Reports & <b>plans/ " + "Reports & <b>plans/" + evilFile; strings.Join(got, " ") != want {
		t.Errorf("entries %q, want %q", got, want)
	}
	if p := b.get("/drive/" + fx.fileID + "/download.zip"); p.StatusCode != 409 || !strings.Contains(p.Body, "is a file, not a folder") {
		t.Errorf("zip of a file: %d", p.StatusCode)
	}
	if p := newBrowser(t, s).get("/drive/" + fx.folderID + "/download.zip"); p.StatusCode != 303 || !strings.HasPrefix(p.Header.Get("Location"), "/signin?next=") {
		t.Errorf("signed out: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
}
