package web_test

import (
	"strings"
	"testing"

	"atrium/web/webtest"
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
	if r := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/" + fx.folderID + "/shares", Token: fx.creds.Token,
		Body: map[string]any{"email": other.Email, "permission": "edit"}}); r.StatusCode != 200 && r.StatusCode != 201 {
		t.Fatalf("share: %d %s", r.StatusCode, r.Body)
	}
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
