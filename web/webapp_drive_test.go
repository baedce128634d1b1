package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"atrium/web/ui"
	"atrium/webtest"
)

// driveFixture makes a folder holding a file whose name is markup, and a file
// at the root, over the REST API and WebDAV.
type driveFixture struct {
	creds    webtest.Creds
	folderID string
	fileID   string
}

const evilFile = "<img src=x onerror=alert(1)>.txt"

func newDriveFixture(t *testing.T, s *webtest.Server, email string) driveFixture {
	t.Helper()
	c := person(t, s, "Drive Org", email, "member")
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/folders", Token: c.Token, Body: map[string]any{"name": "Reports & <b>plans"}})
	if res.StatusCode != 200 && res.StatusCode != 201 {
		t.Fatalf("create folder: %d %s", res.StatusCode, res.Body)
	}
	folder := res.JSON()["id"].(string)
	put := func(path, body string) {
		t.Helper()
		r := s.Do(webtest.Request{Method: "PUT", Path: path, BasicID: c.Email, BasicPW: c.AppPassword, Body: body})
		if r.StatusCode != 201 && r.StatusCode != 204 {
			t.Fatalf("PUT %s: %d %s", path, r.StatusCode, r.Body)
		}
	}
	put("/webdav/"+url.PathEscape("Reports & <b>plans")+"/"+url.PathEscape(evilFile), "hello searchable words")
	put("/webdav/root-note.txt", "at the root")
	res = s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/browse/" + folder, Token: c.Token})
	items := res.JSON()["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("browse: %s", res.Body)
	}
	return driveFixture{creds: c, folderID: folder, fileID: items[0].(map[string]any)["id"].(string)}
}

func TestWebAppDrivePages(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	fx := newDriveFixture(t, s, "files@example.test")
	b := newBrowser(t, s)
	b.mustSignIn("files@example.test", testPassword)

	if p := b.get("/"); p.StatusCode != 303 || p.Header.Get("Location") != "/drive" {
		t.Fatalf("home: %d %q", p.StatusCode, p.Header.Get("Location"))
	}

	cases := []struct {
		name, path string
		status     int
		want, not  []string
	}{
		{"root", "/drive", 200, []string{
			`<a href="/drive" aria-current="page">Files</a>`, // the navigation's first item
			`>My files</a>`, `>Shared with me</a>`, `>Trash</a>`, `<strong>Storage</strong>`,
			`<label for="drive-q" class="sr-only">Search files</label>`, `id="new-folder"`, `<input type="file" id="upload-files"`,
			`Reports &amp; &lt;b&gt;plans`, `aria-label="Actions for Reports &amp; &lt;b&gt;plans"`,
			`href="/drive/` + fx.folderID + `"`, `root-note.txt`, `/assets/vendor/tus.min.js`, `/assets/drive.js`,
		}, []string{"<b>plans"}},
		{"folder", "/drive/" + fx.folderID, 200, []string{
			`<nav aria-label="Breadcrumbs"`, `<a href="/drive/` + fx.folderID + `" aria-current="page">Reports &amp; &lt;b&gt;plans</a>`,
			`<h1 id="drive-h">Reports &amp; &lt;b&gt;plans</h1>`,
			`&lt;img src=x onerror=alert(1)&gt;.txt`, `aria-label="Actions for &lt;img src=x onerror=alert(1)&gt;.txt"`,
			`data-name="&lt;img src=x onerror=alert(1)&gt;.txt"`, `href="/drive/` + fx.fileID + `/download"`, `22 B`,
		}, []string{"<img src=x", "<b>plans", "root-note.txt"}},
		{"sorted by size, one per page", "/drive?sort=size&order=asc&per_page=1", 200, []string{
			`aria-sort="ascending"`, `Page 1 of 2`, `rel="next"`, `Reports &amp; &lt;b&gt;plans`, // folders first
		}, []string{"root-note.txt"}},
		{"second page", "/drive?sort=size&order=asc&per_page=1&page=2", 200, []string{`root-note.txt`, `rel="prev"`}, nil},
		{"bad paging falls back", "/drive?page=-3&per_page=100000&sort=nope&order=sideways", 200, []string{`root-note.txt`, `aria-sort="ascending"`}, nil},
		{"shared with me", "/drive/shared", 200, []string{`<h1 id="drive-h">Shared with me</h1>`, `Nothing is shared with you yet.`}, nil},
		{"trash", "/drive/trash", 200, []string{`<h1 id="drive-h">Trash</h1>`, `The trash is empty.`}, nil},
		{"search", "/drive/search?q=onerror", 200, []string{
			`&lt;img src=x <mark>onerror</mark>=alert(1)&gt;.txt`, `1 match`, `value="onerror"`,
		}, []string{"<img src=x"}},
		{"search by content", "/drive/search?q=searchable", 200, []string{`<mark>searchable</mark>`, `1 match`}, nil},
		{"unknown folder", "/drive/0190d6e2-0000-7000-8000-000000000000", 404, nil, nil},
		{"a file is no folder", "/drive/" + fx.fileID, 422, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := b.get(c.path)
			if p.StatusCode != c.status {
				t.Fatalf("%s: %d\n%s", c.path, p.StatusCode, p.Body)
			}
			for _, w := range c.want {
				if !strings.Contains(p.Body, w) {
					t.Errorf("%s lacks %q", c.path, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(p.Body, n) {
					t.Errorf("%s carries %q", c.path, n)
				}
			}
			if t.Failed() {
				t.Log(p.Body)
			}
		})
	}

	// The page gives its script the session's anti-forgery token, which the
	// REST API asks of a change made with the session cookie.
	csrf := s.Main.Identity.SessionCSRF(b.cookie(ui.SessionCookie).Value)
	if p := b.get("/drive"); !strings.Contains(p.Body, `<meta name="csrf-token" content="`+csrf+`">`) {
		t.Fatal("the drive page lacks the session's csrf-token")
	}

	// A file downloads through a fresh presigned URL.
	p := b.get("/drive/" + fx.fileID + "/download")
	loc := p.Header.Get("Location")
	if p.StatusCode != 303 || loc == "" {
		t.Fatalf("download: %d %q", p.StatusCode, loc)
	}
	if !strings.HasPrefix(loc, "http") {
		loc = s.URL + loc
	}
	res, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("presigned download: %d", res.StatusCode)
	}

	// Trashed, the file shows in the trash, as text.
	if r := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/" + fx.fileID + "/trash", Token: fx.creds.Token}); r.StatusCode != 204 {
		t.Fatalf("trash: %d %s", r.StatusCode, r.Body)
	}
	p = b.get("/drive/trash")
	if !strings.Contains(p.Body, `<span class="fname">&lt;img src=x onerror=alert(1)&gt;.txt</span>`) || strings.Contains(p.Body, "<img src=x") {
		t.Fatalf("trash page: %s", p.Body)
	}
	if !strings.Contains(p.Body, `id="empty-trash"`) {
		t.Fatal("the trash page lacks its Empty trash button")
	}

	// Another person of the organisation sees what is shared with them.
	other := person(t, s, "Drive Org", "colleague@example.test", "member")
	driveClient{t: t, s: s, tok: fx.creds.Token}.share(fx.folderID, map[string]any{"email": other.Email, "permission": "view"})
	ob := newBrowser(t, s)
	ob.mustSignIn(other.Email, testPassword)
	p = ob.get("/drive/shared")
	if !strings.Contains(p.Body, `Reports &amp; &lt;b&gt;plans`) {
		t.Fatalf("shared with me: %s", p.Body)
	}
	// A folder shared for viewing opens without the upload controls.
	p = ob.get("/drive/" + fx.folderID)
	if p.StatusCode != 200 || strings.Contains(p.Body, `id="upload-files"`) || strings.Contains(p.Body, `id="new-folder"`) {
		t.Fatalf("view-only folder: %d %s", p.StatusCode, p.Body)
	}
}

// A deep link into a folder leads through sign-in and back to the folder.
func TestWebAppDriveDeepLink(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	fx := newDriveFixture(t, s, "deepdrive@example.test")
	b := newBrowser(t, s)
	path := "/drive/" + fx.folderID
	p := b.get(path + "?sort=size")
	loc := p.Header.Get("Location")
	if p.StatusCode != 303 || loc != "/signin?next="+url.QueryEscape(path+"?sort=size") {
		t.Fatalf("signed out: %d %q", p.StatusCode, loc)
	}
	b.get(loc)
	p = b.post("/signin", url.Values{"email": {"deepdrive@example.test"}, "password": {testPassword}, "next": {path + "?sort=size"}})
	if p.StatusCode != 303 || p.Header.Get("Location") != path+"?sort=size" {
		t.Fatalf("after sign-in: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	if p := b.get(path); p.StatusCode != 200 || !strings.Contains(p.Body, "onerror=alert(1)&gt;.txt") {
		t.Fatalf("folder: %d", p.StatusCode)
	}
	// Every drive page asks for sign-in, the download included.
	out := newBrowser(t, s)
	for _, pth := range []string{"/drive", "/drive/shared", "/drive/trash", "/drive/search?q=x", "/drive/" + fx.fileID + "/download"} {
		if p := out.get(pth); p.StatusCode != 303 || !strings.HasPrefix(p.Header.Get("Location"), "/signin?next=") {
			t.Errorf("%s signed out: %d %q", pth, p.StatusCode, p.Header.Get("Location"))
		}
	}
}
