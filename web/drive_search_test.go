package web_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"atrium/index/extract/extracttest"
	"atrium/storage/sqldb"
	"atrium/webtest"
)

type searchResult struct {
	Hits []struct {
		driveFile
		Highlights map[string][]string `json:"highlights"`
	} `json:"hits"`
	TotalHits         int                       `json:"total_hits"`
	ProcessingTimeMS  int64                     `json:"processing_time_ms"`
	Limit             int                       `json:"limit"`
	Offset            int                       `json:"offset"`
	Query             string                    `json:"query"`
	FacetDistribution map[string]map[string]int `json:"facet_distribution"`
}

func (c driveClient) search(query string) searchResult {
	c.t.Helper()
	var r searchResult
	c.ok(200, "GET", "/api/v1/drive/search?"+query, nil, &r)
	return r
}

// hitNames returns the names of the hits, sorted.
func hitNames(r searchResult) string {
	var n []string
	for _, h := range r.Hits {
		n = append(n, h.Name)
	}
	slices.Sort(n)
	return strings.Join(n, ",")
}

func q(v string) string { return "q=" + url.QueryEscape(v) }

// searchFixture uploads documents through each door: REST (three-step),
// TUS and WebDAV, each with a distinctive word inside.
func searchFixture(t *testing.T) (*webtest.Server, davUser, driveFile) {
	s := webtest.New(t)
	ann := newDavUser(t, s, "Search Org", "ann@example.test", "admin")
	c := ann.rest
	reports := c.folder("Reports", "")
	c.upload("annual.pdf", reports.ID, "application/pdf", extracttest.PDF("Revenue of the zephyrine division"))
	c.upload("memo.docx", reports.ID, "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		extracttest.DOCX("Meeting notes\nThe quokka project starts in March"))
	c.upload("Résumé.txt", "", "text/plain", []byte("Curriculum of a gardener"))
	tc := tusClient{t: t, s: s, tok: c.tok}
	if res := tc.upload("scan.pdf", reports.ID, extracttest.PDF("Invoice for marmoset food")); res.StatusCode != 204 {
		t.Fatalf("tus: %d %s", res.StatusCode, res.Body)
	}
	if res := tc.upload("letter.docx", "", extracttest.DOCX("Dear ocelot keeper")); res.StatusCode != 204 {
		t.Fatalf("tus: %d %s", res.StatusCode, res.Body)
	}
	ann.want(201, "PUT", "/plan.docx", nil, extracttest.DOCX("A plan about the axolotl tank"))
	ann.want(201, "PUT", "/Reports/chart.pdf", nil, extracttest.PDF("Sightings of the narwhal"))
	return s, ann, reports
}

func TestDriveSearchFindsContentThroughEveryDoor(t *testing.T) {
	t.Parallel()
	_, ann, _ := searchFixture(t)
	c := ann.rest
	for _, tt := range []struct{ word, want, field string }{
		{"zephyrine", "annual.pdf", "content"}, // PDF, REST upload
		{"quokka", "memo.docx", "content"},     // DOCX, REST upload
		{"marmoset", "scan.pdf", "content"},    // PDF, TUS
		{"ocelot", "letter.docx", "content"},   // DOCX, TUS
		{"axolotl", "plan.docx", "content"},    // DOCX, WebDAV PUT
		{"narwhal", "chart.pdf", "content"},    // PDF, WebDAV PUT
		{"resume", "Résumé.txt", "name"},       // accents folded
		{"GARDENER", "Résumé.txt", "content"},  // case folded
		{"memo", "memo.docx", "name"},          // name
		{"quok", "", ""},                       // a content word is not a prefix match
	} {
		t.Run(tt.word, func(t *testing.T) {
			r := c.search(q(tt.word))
			if hitNames(r) != tt.want {
				t.Fatalf("q=%s: hits %q, want %q", tt.word, hitNames(r), tt.want)
			}
			if tt.want == "" {
				return
			}
			h := r.Hits[0]
			if h.Status != "active" || h.OwnerName == "" || r.TotalHits != 1 || r.Query != tt.word || r.Limit != 50 {
				t.Fatalf("envelope %+v", r)
			}
			frags := strings.Join(h.Highlights[tt.field], " ")
			if !strings.Contains(strings.ToLower(frags), "<mark>") {
				t.Fatalf("highlights %v, want a <mark> in %s", h.Highlights, tt.field)
			}
		})
	}
	// The name's prefix matches while typing.
	if got := hitNames(c.search(q("annu"))); got != "annual.pdf" {
		t.Fatalf("prefix: %q", got)
	}
}

func TestDriveSearchVisibility(t *testing.T) {
	t.Parallel()
	s, ann, reports := searchFixture(t)
	bob := newDavUser(t, s, "Search Org", "bob@example.test", "member")
	eve := newDavUser(t, s, "Other Org", "eve@example.test", "admin")
	eve.rest.upload("zephyrine.txt", "", "text/plain", []byte("eve's own zephyrine"))

	if got := hitNames(bob.rest.search(q("zephyrine"))); got != "" {
		t.Fatalf("bob sees %q before any share", got)
	}
	if got := hitNames(eve.rest.search(q("zephyrine"))); got != "zephyrine.txt" {
		t.Fatalf("eve sees %q", got)
	}
	// Sharing the folder shows bob what is inside it, and nothing else.
	share(t, s, ann, reports.ID, bob.creds.UserID, "view")
	if got := hitNames(bob.rest.search(q("zephyrine"))); got != "annual.pdf" {
		t.Fatalf("bob after share: %q", got)
	}
	if got := hitNames(bob.rest.search("")); got != "Reports,annual.pdf,chart.pdf,memo.docx,scan.pdf" {
		t.Fatalf("bob lists %q", got)
	}
	r := bob.rest.search(q("zephyrine"))
	if r.Hits[0].OwnerName == "" {
		t.Fatal("no owner name")
	}
	// Another organisation never sees them, shared or not.
	if got := hitNames(eve.rest.search(q("quokka"))); got != "" {
		t.Fatalf("eve sees %q", got)
	}
	// A token without drive:read is refused.
	tok := s.Token(ann.creds.Email, "contacts:read")
	if res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/search?q=x", Token: tok}); res.StatusCode != 403 {
		t.Fatalf("no scope: %d", res.StatusCode)
	}
}

func TestDriveSearchFollowsChanges(t *testing.T) {
	t.Parallel()
	_, ann, reports := searchFixture(t)
	c := ann.rest
	memo := c.search(q("quokka")).Hits[0]
	// Rename: the new name is found, the content still is.
	c.ok(200, "PATCH", "/api/v1/drive/"+memo.ID+"/rename", map[string]any{"name": "minutes.docx"}, nil)
	if got := hitNames(c.search(q("minutes"))); got != "minutes.docx" {
		t.Fatalf("after rename: %q", got)
	}
	if got := hitNames(c.search(q("quokka"))); got != "minutes.docx" {
		t.Fatalf("content after rename: %q", got)
	}
	// Metadata: tags and description are searched.
	c.ok(200, "PATCH", "/api/v1/drive/"+memo.ID+"/metadata", map[string]any{"tags": []string{"budget"}, "description": "for the wombat team"}, nil)
	if got := hitNames(c.search(q("wombat budget"))); got != "minutes.docx" {
		t.Fatalf("metadata: %q", got)
	}
	// Trashing the folder hides what is in it; restoring brings it back.
	c.ok(204, "POST", "/api/v1/drive/"+reports.ID+"/trash", nil, nil)
	if got := hitNames(c.search(q("zephyrine"))); got != "" {
		t.Fatalf("after trash: %q", got)
	}
	c.ok(200, "POST", "/api/v1/drive/"+reports.ID+"/restore", nil, nil)
	if got := hitNames(c.search(q("zephyrine"))); got != "annual.pdf" {
		t.Fatalf("after restore: %q", got)
	}
	// A new version replaces the indexed text.
	ann.want(204, "PUT", "/Reports/annual.pdf", nil, extracttest.PDF("Revenue of the pangolin division"))
	if got := hitNames(c.search(q("zephyrine"))); got != "" {
		t.Fatalf("old text still found: %q", got)
	}
	if got := hitNames(c.search(q("pangolin"))); got != "annual.pdf" {
		t.Fatalf("new version: %q", got)
	}
	// Permanent delete.
	c.ok(204, "DELETE", "/api/v1/drive/"+memo.ID, nil, nil)
	if got := hitNames(c.search(q("quokka"))); got != "" {
		t.Fatalf("after delete: %q", got)
	}
}

func TestDriveSearchFiltersFacetsAndSort(t *testing.T) {
	t.Parallel()
	_, ann, reports := searchFixture(t)
	c := ann.rest
	today := time.Now().UTC().Format(time.DateOnly)
	for _, tt := range []struct{ query, want string }{
		{"", "Reports,Résumé.txt,annual.pdf,chart.pdf,letter.docx,memo.docx,plan.docx,scan.pdf"},
		{"is_folder=true", "Reports"},
		{"is_folder=false&mime_types=application/pdf", "annual.pdf,chart.pdf,scan.pdf"},
		{"folder_id=" + reports.ID, "annual.pdf,chart.pdf,memo.docx,scan.pdf"},
		{"folder_id=" + reports.ID + "&" + q("zephyrine"), "annual.pdf"},
		{"owner_name=ANN&is_folder=true", "Reports"},
		{"owner_name=somebody+else", ""},
		{"min_size=1&max_size=30&is_folder=false", "Résumé.txt"},
		{"max_size=0", "Reports"},
		{"created_after=" + today + "&is_folder=true", "Reports"},
		{"modified_before=2000-01-01", ""},
		{"created_before=2999-01-01T00:00:00Z&mime_types=text/plain", "Résumé.txt"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			if got := hitNames(c.search(tt.query)); got != tt.want {
				t.Fatalf("%s: %q, want %q", tt.query, got, tt.want)
			}
		})
	}
	// Facets count every match, not only the page.
	r := c.search("facets=true&limit=1")
	if len(r.Hits) != 1 || r.TotalHits != 8 {
		t.Fatalf("page: %d hits of %d", len(r.Hits), r.TotalHits)
	}
	fd := r.FacetDistribution
	if fd["mime_group"]["pdf"] != 3 || fd["mime_group"]["document"] != 3 || fd["mime_group"]["text"] != 1 ||
		fd["is_folder"]["true"] != 1 || fd["is_folder"]["false"] != 7 || fd["owner_name"]["ann"] != 8 {
		t.Fatalf("facets %v", fd)
	}
	if r := c.search("limit=2"); r.FacetDistribution != nil {
		t.Fatalf("facets without facets=true: %v", r.FacetDistribution)
	}
	// Sorting and paging.
	var names []string
	for off := 0; off < 8; off += 2 {
		for _, h := range c.search(fmt.Sprintf("sort_by=name&sort_order=asc&limit=2&offset=%d", off)).Hits {
			names = append(names, h.Name)
		}
	}
	if got := strings.Join(names, ","); got != "annual.pdf,chart.pdf,letter.docx,memo.docx,plan.docx,Reports,Résumé.txt,scan.pdf" {
		t.Fatalf("by name: %s", got)
	}
	if r := c.search("sort_by=size_bytes&sort_order=desc&is_folder=false&limit=1"); r.Hits[0].Name != "memo.docx" && r.Hits[0].Name != "plan.docx" {
		t.Fatalf("largest: %s", r.Hits[0].Name)
	}
}

func TestDriveSearchValidation(t *testing.T) {
	t.Parallel()
	_, c := newDrive(t)
	for _, query := range []string{"limit=0", "limit=101", "offset=-1", "sort_by=owner", "sort_order=up",
		"created_after=yesterday", "min_size=-1", "min_size=10&max_size=5", "is_folder=maybe", "offset=9990&limit=20"} {
		t.Run(query, func(t *testing.T) {
			res := c.do("GET", "/api/v1/drive/search?"+query, nil)
			if res.StatusCode != 422 || !strings.Contains(res.Header.Get("Content-Type"), "problem+json") {
				t.Fatalf("%s: %d %s", query, res.StatusCode, res.Body)
			}
		})
	}
	if res := c.do("GET", "/api/v1/drive/search?folder_id=nope", nil); res.StatusCode != 404 {
		t.Fatalf("unknown folder: %d", res.StatusCode)
	}
}

// TestDriveSearchRebuild: a rebuild from scratch answers as the live index
// did; a missing or damaged index is rebuilt at start while search answers
// 503 index_rebuilding.
func TestDriveSearchRebuild(t *testing.T) {
	t.Parallel()
	s, ann, _ := searchFixture(t)
	queries := []string{"", q("zephyrine"), q("axolotl"), q("narwhal"), q("ocelot"), "facets=true", "is_folder=false&sort_by=name"}
	before := map[string]string{}
	for _, query := range queries {
		before[query] = hitNames(ann.rest.search(query))
	}
	same := func(when string, c driveClient) {
		t.Helper()
		for _, query := range queries {
			if got := hitNames(c.search(query)); got != before[query] {
				t.Fatalf("%s, %s: %q, want %q", when, query, got, before[query])
			}
		}
	}
	if err := s.Main.Search.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	same("after Rebuild", ann.rest)

	for _, damage := range []struct {
		name string
		fn   func(dir string) error
	}{
		{"missing", os.RemoveAll},
		{"damaged", func(dir string) error {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "index_meta.json"), []byte("{not json"), 0o600)
		}},
	} {
		t.Run(damage.name, func(t *testing.T) {
			s.Stop()
			if err := damage.fn(filepath.Join(s.Data, "index")); err != nil {
				t.Fatal(err)
			}
			s = webtest.Start(t, s.Data)
			c := driveClient{t: t, s: s, tok: ann.rest.tok}
			deadline := time.Now().Add(30 * time.Second)
			for {
				res := c.do("GET", "/api/v1/drive/search?q=zephyrine", nil)
				if res.StatusCode == 200 {
					break
				}
				if res.StatusCode != 503 || !strings.Contains(string(res.Body), "index_rebuilding") || res.Header.Get("Retry-After") == "" {
					t.Fatalf("while rebuilding: %d %s %v", res.StatusCode, res.Body, res.Header)
				}
				if time.Now().After(deadline) {
					t.Fatal("index not rebuilt in 30 s")
				}
				time.Sleep(50 * time.Millisecond)
			}
			same("after the rebuild at start", c)
		})
	}
}

// A user renamed by their reseller is found under the new name: owner_name
// filters and facets follow the rename, not only the hits' own field.
func TestDriveSearchFollowsOwnerRename(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	s := w.s
	org := w.createOrg(t, w.tok, "Acme", "boss@acme.test")
	res := w.do("POST", "/orgs/"+org+"/users", w.tok, map[string]any{"email": "dev@acme.test", "first_name": "Dee", "last_name": "Veloper"})
	webtest.Check(t, res, webtest.Scenario{Status: 201})
	uid := res.JSON()["id"].(string)
	accept := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/invitations/" + w.lastToken(t, "dev@acme.test", "invite") + "/accept",
		Body: map[string]any{"password": "a long enough password"}})
	webtest.Check(t, accept, webtest.Scenario{Status: 200})
	c := driveClient{t: t, s: s, tok: s.Token("dev@acme.test")}
	docs := c.folder("Docs", "")
	c.upload("notes.txt", docs.ID, "text/plain", []byte("the capybara budget"))

	owned := func(name string) string { return hitNames(c.search("owner_name=" + url.QueryEscape(name))) }
	if got := owned("Dee Veloper"); got != "Docs,notes.txt" {
		t.Fatalf("before the rename: %q", got)
	}
	res = w.do("PATCH", "/orgs/"+org+"/users/"+uid, w.tok, map[string]any{"first_name": "Dana", "last_name": "Smith"})
	webtest.Check(t, res, webtest.Scenario{Status: 200})
	if got := owned("Dana Smith"); got != "Docs,notes.txt" {
		t.Fatalf("new name: %q", got)
	}
	if got := owned("Dee Veloper"); got != "" {
		t.Fatalf("old name still finds %q", got)
	}
	r := c.search(q("capybara") + "&facets=true")
	if hitNames(r) != "notes.txt" || r.Hits[0].OwnerName != "Dana Smith" || r.FacetDistribution["owner_name"]["Dana Smith"] != 1 {
		t.Fatalf("content after the rename: %q %+v", hitNames(r), r.FacetDistribution)
	}
	// A role change alone does not touch the index, and changes nothing found.
	webtest.Check(t, w.do("PATCH", "/orgs/"+org+"/users/"+uid, w.tok, map[string]any{"role_slug": "admin"}), webtest.Scenario{Status: 200})
	if got := owned("Dana Smith"); got != "Docs,notes.txt" {
		t.Fatalf("after a role change: %q", got)
	}
}

// The outbox keeps events a week once the search index has applied them; an
// index older than what was pruned (put back from a copy) is rebuilt at start
// instead of missing those changes.
func TestDriveSearchAfterEventsPruned(t *testing.T) {
	t.Parallel()
	s, ann, _ := searchFixture(t)
	if webtest.DatabaseURL(s.Data) != "" {
		t.Skip("puts back a copy of the Bleve index's files: the index is PostgreSQL's here")
	}
	ctx := context.Background()
	tok := ann.rest.tok
	if got := hitNames(ann.rest.search(q("zephyrine"))); got != "annual.pdf" {
		t.Fatalf("before: %q", got)
	}
	s.Stop()
	stale := filepath.Join(t.TempDir(), "index")
	if err := os.CopyFS(stale, os.DirFS(filepath.Join(s.Data, "index"))); err != nil {
		t.Fatal(err)
	}
	s = webtest.Start(t, s.Data)
	c := driveClient{t: t, s: s, tok: tok}
	events := func() int {
		evs, _, err := sqldb.Outbox{DB: s.Main.DB}.Events(ctx, 0, 100000)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}

	c.upload("later.txt", "", "text/plain", []byte("the quetzal arrives"))
	if got := hitNames(c.search(q("quetzal"))); got != "later.txt" {
		t.Fatalf("later: %q", got)
	}
	if done, err := s.Main.Housekeeping(ctx); err != nil || done["events_pruned"] != 0 {
		t.Fatalf("young events pruned: %v %v", done, err)
	}
	s.Clock.Advance(8 * 24 * time.Hour)
	kept := events()
	if done, err := s.Main.Housekeeping(ctx); err != nil || done["events_pruned"] != kept || kept == 0 {
		t.Fatalf("a week later: %v %v, want %d events pruned", done, err, kept)
	}
	if n := events(); n != 0 {
		t.Fatalf("%d events left", n)
	}
	// New events still reach the index.
	c.upload("after.txt", "", "text/plain", []byte("the toucan sings"))
	if got := hitNames(c.search(q("toucan"))); got != "after.txt" {
		t.Fatalf("after pruning: %q", got)
	}

	// Put the old index back: it never saw later.txt, whose events are gone.
	s.Stop()
	if err := os.RemoveAll(filepath.Join(s.Data, "index")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(stale, filepath.Join(s.Data, "index")); err != nil {
		t.Fatal(err)
	}
	s = webtest.Start(t, s.Data)
	c = driveClient{t: t, s: s, tok: tok}
	if got := hitNames(c.search(q("quetzal"))); got != "later.txt" {
		t.Fatalf("stale index put back: %q", got)
	}
	if got := hitNames(c.search(q("zephyrine"))); got != "annual.pdf" {
		t.Fatalf("stale index put back, older file: %q", got)
	}
}

// TestDriveSearchRightAfterABurst: whatever the background indexer has taken
// in (it leaves a burst of writes alone until the burst is over), a search
// made right after a burst finds every file the burst wrote: it applies the
// pending changes first.
func TestDriveSearchRightAfterABurst(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Burst Org", "ann@example.test", "admin")
	ann.want(201, "MKCOL", "/burst/", nil, nil)
	const n = 300
	for i := range n {
		ann.want(201, "PUT", fmt.Sprintf("/burst/note-%03d.txt", i), nil, []byte(fmt.Sprintf("A note about the wombat number %d", i)))
	}
	r := ann.rest.search(q("wombat") + "&limit=1")
	if r.TotalHits != n {
		t.Errorf("a search right after %d PUTs found %d files, want all", n, r.TotalHits)
	}
	if r := ann.rest.search(q("note-299")); hitNames(r) != "note-299.txt" {
		t.Errorf("the last file written: hits %q", hitNames(r))
	}
}
