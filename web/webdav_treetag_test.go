package web_test

import (
	"regexp"
	"testing"

	"atrium/webtest"
)

var getetagRE = regexp.MustCompile(`<D:getetag>([^<]*)</D:getetag>`)

// etagOf is the getetag a Depth 0 PROPFIND answers for path.
func (u davUser) etagOf(path string) string {
	u.t.Helper()
	res := u.want(207, "PROPFIND", path, map[string]string{"Depth": "0"},
		`<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>`)
	m := getetagRE.FindSubmatch(res.Body)
	if m == nil {
		u.t.Fatalf("PROPFIND %s: no getetag in %s", path, res.Body)
	}
	return string(m[1])
}

// A folder's entity tag changes whenever anything below it changes, at any
// depth and through any door, and only then: sync clients (Nextcloud,
// ownCloud) read again only the folders whose tag changed.
func TestWebDAVFolderTagFollowsTree(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Tree Org", "ann@example.test", "admin")
	for _, p := range []string{"/a", "/a/b", "/a/b/c", "/other", "/x"} {
		ann.want(201, "MKCOL", p, nil, nil)
	}
	ann.want(201, "PUT", "/a/b/c/f.txt", nil, "one")
	ann.want(201, "PUT", "/a/b/c/g.txt", nil, "gee")
	watched := []string{"/a", "/a/b", "/a/b/c"}
	tags := func() map[string]string {
		m := map[string]string{}
		for _, p := range append(watched, "/other", "/x") {
			m[p] = ann.etagOf(p)
		}
		return m
	}
	fileID := func(name string) string {
		t.Helper()
		c := ann.rest.list("/api/v1/drive/browse")
		for _, f := range c.Items {
			if f.Name == "a" {
				b := ann.rest.list("/api/v1/drive/browse/" + f.ID).Items[0]
				cc := ann.rest.list("/api/v1/drive/browse/" + b.ID).Items[0]
				for _, g := range ann.rest.list("/api/v1/drive/browse/" + cc.ID).Items {
					if g.Name == name {
						return g.ID
					}
				}
			}
		}
		t.Fatalf("no %s", name)
		return ""
	}
	steps := []struct {
		name string
		do   func()
		// changed are the watched folders whose tag must change besides
		// those of watched; also lists /x when it must change.
		also []string
	}{
		{"a new file", func() { ann.want(201, "PUT", "/a/b/c/new.txt", nil, "new") }, nil},
		{"an overwrite", func() { ann.want(204, "PUT", "/a/b/c/f.txt", nil, "two") }, nil},
		{"a modification time", func() {
			ann.want(207, "PROPPATCH", "/a/b/c/f.txt", nil, `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop>`+
				`<D:lastmodified>1600000000</D:lastmodified></D:prop></D:set></D:propertyupdate>`)
		}, nil},
		{"a rename", func() {
			ann.want(201, "MOVE", "/a/b/c/new.txt", map[string]string{"Destination": s.URL + "/api/v1/webdav/a/b/c/renamed.txt"}, nil)
		}, nil},
		{"a move out", func() {
			ann.want(201, "MOVE", "/a/b/c/renamed.txt", map[string]string{"Destination": s.URL + "/api/v1/webdav/x/moved.txt"}, nil)
		}, []string{"/x"}},
		{"a move in", func() {
			ann.want(201, "MOVE", "/x/moved.txt", map[string]string{"Destination": s.URL + "/api/v1/webdav/a/b/c/back.txt"}, nil)
		}, []string{"/x"}},
		{"a delete", func() { ann.want(204, "DELETE", "/a/b/c/back.txt", nil, nil) }, nil},
		{"a REST rename", func() {
			ann.rest.ok(200, "PATCH", "/api/v1/drive/"+fileID("g.txt")+"/rename", map[string]any{"name": "gee.txt"}, nil)
		}, nil},
		{"a new folder", func() { ann.want(201, "MKCOL", "/a/b/c/sub", nil, nil) }, nil},
	}
	before := tags()
	for _, st := range steps {
		st.do()
		after := tags()
		must := map[string]bool{}
		for _, p := range append(watched, st.also...) {
			must[p] = true
		}
		for p, tag := range after {
			if changed := tag != before[p]; changed != must[p] {
				t.Errorf("%s: the tag of %s changed: %v, want %v (%s -> %s)", st.name, p, changed, must[p], before[p], tag)
			}
		}
		before = after
	}
	// Nothing changed: the same tags.
	res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/webdav/a/b/c/f.txt", BasicID: ann.creds.Email, BasicPW: ann.creds.AppPassword})
	if res.StatusCode != 200 {
		t.Fatalf("GET: %d", res.StatusCode)
	}
	for p, tag := range tags() {
		if tag != before[p] {
			t.Errorf("a read changed the tag of %s", p)
		}
	}
}
