package web_test

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"atrium/web/ui"
	"atrium/webtest"
)

// The drive's favourites view (/drive/favorites): the person's favourite items
// from anywhere in their drive, as text, sortable and paged like the other
// views; an item whose mark is removed, or which is trashed, leaves it.
func TestWebAppDriveFavorites(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	fx := newDriveFixture(t, s, "favs@example.test")
	b := newBrowser(t, s)

	// Signed out, the view asks for sign-in first.
	if p := b.get("/drive/favorites"); p.StatusCode != 303 || p.Header.Get("Location") != "/signin?next=%2Fdrive%2Ffavorites" {
		t.Fatalf("signed out: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	b.mustSignIn("favs@example.test", testPassword)

	p := b.get("/drive/favorites")
	for _, w := range []string{`<h1 id="drive-h">Favourites</h1>`, `<a href="/drive/favorites" aria-current="page">Favourites</a>`,
		`data-view="favorites"`, `No favourites yet.`} {
		if p.StatusCode != 200 || !strings.Contains(p.Body, w) {
			t.Fatalf("empty favourites lack %q: %d\n%s", w, p.StatusCode, p.Body)
		}
	}
	// The other views link to it.
	if p := b.get("/drive"); !strings.Contains(p.Body, `<a href="/drive/favorites">Favourites</a>`) {
		t.Fatal("the drive page does not link the favourites")
	}

	toggle := func(id string) {
		t.Helper()
		if r := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/" + id + "/favorite", Token: fx.creds.Token}); r.StatusCode != 200 {
			t.Fatalf("favorite %s: %d %s", id, r.StatusCode, r.Body)
		}
	}
	toggle(fx.folderID) // at the root
	toggle(fx.fileID)   // inside the folder

	cases := []struct {
		name, path string
		want, not  []string
	}{
		{"both, folders first", "/drive/favorites", []string{
			`Reports &amp; &lt;b&gt;plans`, `href="/drive/` + fx.folderID + `"`, // a folder opens the folder
			`&lt;img src=x onerror=alert(1)&gt;.txt`, `href="/drive/` + fx.fileID + `/download"`,
			`<span class="sr-only">Favourite</span>`, `aria-sort="ascending"`,
		}, []string{"<img src=x", "<b>plans", "root-note.txt", "No favourites yet."}},
		{"one per page", "/drive/favorites?per_page=1", []string{`Page 1 of 2`, `rel="next"`, `Reports &amp; &lt;b&gt;plans`}, []string{"onerror=alert(1)&gt;.txt"}},
		{"second page", "/drive/favorites?per_page=1&page=2", []string{`onerror=alert(1)&gt;.txt`, `rel="prev"`}, []string{"Reports &amp;"}},
		{"by size", "/drive/favorites?sort=size&order=desc", []string{`aria-sort="descending"`, `href="/drive/favorites?order=asc&amp;sort=size"`}, nil},
	}
	for _, c := range cases {
		p := b.get(c.path)
		if p.StatusCode != 200 {
			t.Fatalf("%s: %d", c.path, p.StatusCode)
		}
		for _, w := range c.want {
			if !strings.Contains(p.Body, w) {
				t.Errorf("%s: %s lacks %q", c.name, c.path, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(p.Body, n) {
				t.Errorf("%s: %s carries %q", c.name, c.path, n)
			}
		}
	}

	// Another person's favourites are theirs: a colleague with the folder
	// shared sees none.
	other := person(t, s, "Drive Org", "favs.colleague@example.test", "member")
	driveClient{t: t, s: s, tok: fx.creds.Token}.share(fx.folderID, map[string]any{"email": other.Email, "permission": "edit"})
	ob := newBrowser(t, s)
	ob.mustSignIn(other.Email, testPassword)
	if p := ob.get("/drive/favorites"); !strings.Contains(p.Body, "No favourites yet.") {
		t.Fatalf("the colleague sees favourites: %s", p.Body)
	}

	// The mark removed, the folder leaves the list; the file trashed, too.
	toggle(fx.folderID)
	if p := b.get("/drive/favorites"); strings.Contains(p.Body, "Reports &amp;") || !strings.Contains(p.Body, "onerror=alert(1)&gt;.txt") {
		t.Fatalf("after removing the mark: %s", p.Body)
	}
	if r := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/" + fx.fileID + "/trash", Token: fx.creds.Token}); r.StatusCode != 204 {
		t.Fatalf("trash: %d %s", r.StatusCode, r.Body)
	}
	if p := b.get("/drive/favorites"); !strings.Contains(p.Body, "No favourites yet.") {
		t.Fatalf("a trashed favourite stays: %s", p.Body)
	}
}

// editorPageRE reads the editor page's form and frame.
var editorPageRE = regexp.MustCompile(`(?s)<form id="editor-form" method="post" action="([^"]+)" target="editor-frame"[^>]*>\s*` +
	`<input type="hidden" name="access_token" value="([^"]+)">\s*<input type="hidden" name="access_token_ttl" value="(\d+)">`)

// "Open in editor": with an online editor configured, the files its discovery
// opens carry the menu item, and /drive/edit/{id} embeds the editor: a form
// POSTing the access token into a frame, under a policy naming exactly the
// editor's origin. Files it cannot open, and every file without an editor,
// have no item; their page says why.
func TestWebAppDriveEditor(t *testing.T) {
	t.Parallel()
	editor, _ := newFakeEditor(t)
	s := webtest.New(t, withEditor(editor.URL))
	c := person(t, s, "Edit Org", "writer@example.test", "member")
	put := func(name, body string) string {
		t.Helper()
		r := s.Do(webtest.Request{Method: "PUT", Path: "/webdav/" + url.PathEscape(name), BasicID: c.Email, BasicPW: c.AppPassword, Body: body})
		if r.StatusCode != 201 && r.StatusCode != 204 {
			t.Fatalf("PUT %s: %d %s", name, r.StatusCode, r.Body)
		}
		res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/browse?q=" + url.QueryEscape(name), Token: c.Token})
		for _, it := range res.JSON()["items"].([]any) {
			if m := it.(map[string]any); m["name"] == name {
				return m["id"].(string)
			}
		}
		t.Fatalf("no %s in %s", name, res.Body)
		return ""
	}
	odt := put(`<i>plan.odt`, "odt bytes")
	txt := put("notes.txt", "plain words")

	b := newBrowser(t, s)
	if p := b.get("/drive/edit/" + odt); p.StatusCode != 303 || !strings.HasPrefix(p.Header.Get("Location"), "/signin?next=") {
		t.Fatalf("signed out: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	b.mustSignIn(c.Email, testPassword)

	// The list marks the file the editor opens, and only it.
	p := b.get("/drive")
	if !strings.Contains(p.Body, `data-act="edit">Open in editor</button>`) {
		t.Fatal("the drive page lacks the Open in editor menu item")
	}
	rowOf := func(body, id string) string {
		i := strings.Index(body, `<tr data-id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no row %s", id)
		}
		return body[i : i+strings.Index(body[i:], ">")]
	}
	if r := rowOf(p.Body, odt); !strings.Contains(r, `data-edit="true"`) {
		t.Errorf("the .odt row is not editable: %s", r)
	}
	if r := rowOf(p.Body, txt); strings.Contains(r, `data-edit`) {
		t.Errorf("the .txt row is editable: %s", r)
	}

	// The editor page.
	p = b.get("/drive/edit/" + odt)
	if p.StatusCode != 200 {
		t.Fatalf("editor page: %d %s", p.StatusCode, p.Body)
	}
	origin := editor.URL // http://127.0.0.1:port
	csp := p.Header.Get("Content-Security-Policy")
	want := strings.Replace(ui.ContentSecurityPolicy, "form-action 'self'", "form-action 'self' "+origin, 1)
	want = strings.Replace(want, "object-src 'none';", "object-src 'none'; frame-src "+origin+";", 1)
	if csp != want {
		t.Errorf("CSP:\n got %s\nwant %s", csp, want)
	}
	m := editorPageRE.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no editor form:\n%s", p.Body)
	}
	action := html.UnescapeString(m[1])
	if !strings.HasPrefix(action, origin+"/browser/dist/cool.html?WOPISrc=") || strings.Contains(action, "access_token") {
		t.Errorf("form action %q", action)
	}
	for _, w := range []string{`<iframe name="editor-frame" id="editor-frame" class="editor-frame" title="Editor for &lt;i&gt;plan.odt"`,
		`<h1 id="editor-h">&lt;i&gt;plan.odt</h1>`, `<a class="editor-back" href="/drive">Back</a>`, `<script src="/assets/drive_edit.js" defer></script>`} {
		if !strings.Contains(p.Body, w) {
			t.Errorf("editor page lacks %q", w)
		}
	}
	if strings.Contains(p.Body, "<i>plan") {
		t.Error("the name is not escaped")
	}
	if p.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", p.Header.Get("Cache-Control"))
	}
	// The token is the editor's: CheckFileInfo of the file answers with it.
	if r := wopiCall(s, "GET", odt, "", html.UnescapeString(m[2]), nil, nil); r.StatusCode != 200 || !strings.Contains(string(r.Body), "plan") {
		t.Fatalf("CheckFileInfo with the page's token: %d %s", r.StatusCode, r.Body)
	}
	// Other pages keep the site-wide policy.
	if p := b.get("/drive"); p.Header.Get("Content-Security-Policy") != ui.ContentSecurityPolicy {
		t.Errorf("the drive page's CSP: %s", p.Header.Get("Content-Security-Policy"))
	}

	// A file the editor cannot open, a folder, nothing: a page saying why.
	for _, c := range []struct {
		path   string
		status int
		says   string
	}{
		{"/drive/edit/" + txt, 409, "cannot open"},
		{"/drive/edit/0190d6e2-0000-7000-8000-000000000000", 404, ""},
	} {
		p := b.get(c.path)
		if p.StatusCode != c.status || !strings.Contains(p.Body, c.says) || strings.Contains(p.Body, "editor-frame") {
			t.Errorf("%s: %d %s", c.path, p.StatusCode, p.Body)
		}
		if p.Header.Get("Content-Security-Policy") != ui.ContentSecurityPolicy {
			t.Errorf("%s CSP: %s", c.path, p.Header.Get("Content-Security-Policy"))
		}
	}
	// Downloads still answer at their paths.
	if p := b.get("/drive/" + txt + "/download"); p.StatusCode != 303 {
		t.Errorf("download: %d", p.StatusCode)
	}
	if p := b.get("/drive/" + txt + "/nope"); p.StatusCode != 404 {
		t.Errorf("/drive/{id}/nope: %d", p.StatusCode)
	}

	// Without an editor: no menu item on any file, and no editor page.
	plain := webtest.New(t)
	pc := person(t, plain, "Plain Org", "plain@example.test", "member")
	if r := plain.Do(webtest.Request{Method: "PUT", Path: "/webdav/doc.odt", BasicID: pc.Email, BasicPW: pc.AppPassword, Body: "x"}); r.StatusCode != 201 {
		t.Fatalf("PUT: %d", r.StatusCode)
	}
	pb := newBrowser(t, plain)
	pb.mustSignIn(pc.Email, testPassword)
	p = pb.get("/drive")
	if !strings.Contains(p.Body, "doc.odt") || strings.Contains(p.Body, `data-edit="true"`) {
		t.Fatalf("without an editor: %s", p.Body)
	}
	id := regexp.MustCompile(`<tr data-id="([^"]+)"`).FindStringSubmatch(p.Body)[1]
	if p := pb.get("/drive/edit/" + id); p.StatusCode != 404 {
		t.Errorf("editor page without an editor: %d", p.StatusCode)
	}
}

// The shared-link page of a folder links its ZIP archive — of the subfolder
// being browsed, with folder_id — which needs no account; a file's page has
// no such link.
func TestSharePageFolderZip(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := driveClient{t: t, s: s, tok: s.Bootstrap("Zip Org", "zipper@example.test", "member").Token}
	album := ann.folder("Album", "")
	ann.upload("a.txt", album.ID, "text/plain", []byte("aaa"))
	inner := ann.folder("Inner", album.ID)
	ann.upload("b.txt", inner.ID, "text/plain", []byte("bbb"))
	single := ann.upload("single.txt", "", "text/plain", []byte("one"))
	tok := linkToken(t, s, ann.share(album.ID, map[string]any{"create_link": true}))
	fileTok := linkToken(t, s, ann.share(single.ID, map[string]any{"create_link": true}))

	zipURL := "/api/v1/drive/shared-link/" + tok + "/download.zip"
	cases := []struct {
		name, page, href, want string
	}{
		{"the shared folder", "/s/" + tok, zipURL, "Album/ | Album/Inner/ | Album/Inner/b.txt | Album/a.txt"},
		{"a subfolder", "/s/" + tok + "/f/" + inner.ID, zipURL + "?folder_id=" + inner.ID, "Inner/ | Inner/b.txt"},
	}
	for _, c := range cases {
		page := s.Do(webtest.Request{Method: "GET", Path: c.page})
		link := `<a class="btn" id="download-zip" href="` + html.EscapeString(c.href) + `" download>Download as ZIP</a>`
		if page.StatusCode != 200 || !strings.Contains(string(page.Body), link) {
			t.Fatalf("%s: %d lacks %s\n%s", c.name, page.StatusCode, link, page.Body)
		}
		res := s.Do(webtest.Request{Method: "GET", Path: c.href}) // no credential: the link token is one
		if ct := res.Header.Get("Content-Type"); ct != "application/zip" {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
		files, _ := zipOf(t, res)
		if got := entryNames(files); got != c.want {
			t.Errorf("%s: entries %s, want %s", c.name, got, c.want)
		}
	}
	if page := s.Do(webtest.Request{Method: "GET", Path: "/s/" + fileTok}); page.StatusCode != 200 || strings.Contains(string(page.Body), "download-zip") {
		t.Errorf("a file's page: %d %s", page.StatusCode, page.Body)
	}
}
