package web_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/drive"
	"atrium/webtest"
)

type deltaItem struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	ParentID    *string   `json:"parent_id"`
	Deleted     bool      `json:"deleted"`
	IsFolder    bool      `json:"is_folder"`
	ContentHash string    `json:"content_hash"`
	Version     int       `json:"version"`
	SizeBytes   int64     `json:"size_bytes"`
	UpdatedAt   time.Time `json:"updated_at"`
}

type deltaPage struct {
	Items   []deltaItem `json:"items"`
	Cursor  string      `json:"cursor"`
	HasMore bool        `json:"has_more"`
}

type deviceStatus struct {
	DeviceID       string     `json:"device_id"`
	Cursor         string     `json:"cursor"`
	CommittedAt    *time.Time `json:"committed_at"`
	PendingChanges int64      `json:"pending_changes"`
}

func deltaPath(device, cursor string, limit int) string {
	q := url.Values{"device_id": {device}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	return "/api/v1/drive/sync/delta?" + q.Encode()
}

// delta fetches one page.
func (c driveClient) delta(device, cursor string, limit int) deltaPage {
	c.t.Helper()
	var pg deltaPage
	c.ok(200, "GET", deltaPath(device, cursor, limit), nil, &pg)
	if pg.Cursor == "" || pg.Items == nil {
		c.t.Fatalf("delta page without cursor or items: %+v", pg)
	}
	return pg
}

// syncAll pages from cursor until has_more is false and returns every item, the
// final cursor and the number of pages.
func (c driveClient) syncAll(device, cursor string, limit int) ([]deltaItem, string, int) {
	c.t.Helper()
	var all []deltaItem
	for pages := 1; ; pages++ {
		pg := c.delta(device, cursor, limit)
		if limit > 0 && len(pg.Items) > limit {
			c.t.Fatalf("page of %d items, limit %d", len(pg.Items), limit)
		}
		all, cursor = append(all, pg.Items...), pg.Cursor
		if !pg.HasMore {
			return all, cursor, pages
		}
		if pages > 10000 {
			c.t.Fatal("delta never ends")
		}
	}
}

// changes returns the items of a delta as id → deleted.
func changes(items []deltaItem) map[string]bool {
	m := map[string]bool{}
	for _, it := range items {
		m[it.ID] = it.Deleted
	}
	return m
}

func byID(items []deltaItem) map[string]deltaItem {
	m := map[string]deltaItem{}
	for _, it := range items {
		m[it.ID] = it
	}
	return m
}

func sameChanges(got, want map[string]bool) bool {
	if len(got) != len(want) {
		return false
	}
	for id, del := range want {
		if g, ok := got[id]; !ok || g != del {
			return false
		}
	}
	return true
}

func TestDriveSyncSnapshotPaging(t *testing.T) {
	t.Parallel()
	_, c := newDrive(t)
	docs := c.folder("Docs", "")
	want := map[string]bool{docs.ID: false}
	for i := range 6 {
		f := c.upload(fmt.Sprintf("f%d.txt", i), docs.ID, "text/plain", []byte(fmt.Sprint("content ", i)))
		want[f.ID] = false
	}
	gone := c.upload("gone.txt", "", "text/plain", []byte("gone"))
	c.ok(204, "POST", "/api/v1/drive/"+gone.ID+"/trash", nil, nil)
	deleted := c.upload("deleted.txt", "", "text/plain", []byte("deleted"))
	c.ok(204, "DELETE", "/api/v1/drive/"+deleted.ID, nil, nil)
	// A pending upload is invisible.
	var tk uploadTicket
	c.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "pending.txt", "mime_type": "text/plain", "size": 3}, &tk)

	// Pages of 2: has_more on every page but the last; what was trashed or
	// deleted before the snapshot is not reported.
	var all []deltaItem
	cursor := ""
	pages := 0
	for {
		pg := c.delta("laptop", cursor, 2)
		pages++
		if len(pg.Items) > 2 || (pg.HasMore && len(pg.Items) != 2) {
			t.Fatalf("page %d: %d items, has_more %v", pages, len(pg.Items), pg.HasMore)
		}
		all, cursor = append(all, pg.Items...), pg.Cursor
		if !pg.HasMore {
			break
		}
	}
	if pages != 4 || !sameChanges(changes(all), want) {
		t.Fatalf("snapshot in %d pages: %v, want %v", pages, changes(all), want)
	}
	it := byID(all)
	f0 := it[docs.ID]
	if !f0.IsFolder || f0.ParentID != nil || f0.Name != "Docs" || f0.Version != 0 {
		t.Errorf("folder item %+v", f0)
	}
	for _, x := range all {
		if !x.IsFolder && (x.ParentID == nil || *x.ParentID != docs.ID || !strings.HasPrefix(x.ContentHash, "sha256:") ||
			x.Version != 1 || x.SizeBytes == 0 || x.UpdatedAt.IsZero()) {
			t.Errorf("file item %+v", x)
		}
	}
	// Nothing changed: an empty page and the same position.
	pg := c.delta("laptop", cursor, 0)
	if len(pg.Items) != 0 || pg.HasMore {
		t.Fatalf("delta without changes: %+v", pg)
	}
	// The raw JSON carries exactly the documented fields.
	res := c.do("GET", deltaPath("laptop", "", 1), nil)
	for _, k := range []string{`"items"`, `"cursor"`, `"has_more":true`, `"id"`, `"name"`, `"parent_id"`, `"deleted"`, `"content_hash"`, `"version"`, `"size_bytes"`, `"updated_at"`} {
		if !bytes.Contains(res.Body, []byte(k)) {
			t.Errorf("delta body lacks %s: %s", k, res.Body)
		}
	}
	if bytes.Contains(res.Body, []byte("next_cursor")) {
		t.Errorf("delta body has next_cursor: %s", res.Body)
	}
}

func TestDriveSyncIncremental(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	bob := s.Bootstrap("Drive Org", "bob@example.test", "member")
	cb := driveClient{t: t, s: s, tok: bob.Token}

	a := c.folder("A", "")
	a1 := c.upload("a1.txt", a.ID, "text/plain", []byte("a1"))
	b := c.folder("B", a.ID)
	b1 := c.upload("b1.txt", b.ID, "text/plain", []byte("b1"))
	x := c.upload("x.txt", "", "text/plain", []byte("x"))
	_, cursor, _ := c.syncAll("laptop", "", 0)

	var copied string
	steps := []struct {
		name  string
		do    func() map[string]bool
		check func(t *testing.T, got map[string]deltaItem)
	}{
		{"rename", func() map[string]bool {
			c.ok(200, "PATCH", "/api/v1/drive/"+x.ID+"/rename", map[string]any{"name": "y.txt"}, nil)
			return map[string]bool{x.ID: false}
		}, func(t *testing.T, got map[string]deltaItem) {
			if got[x.ID].Name != "y.txt" || got[x.ID].ParentID != nil {
				t.Errorf("renamed %+v", got[x.ID])
			}
		}},
		{"move", func() map[string]bool {
			c.ok(200, "PATCH", "/api/v1/drive/"+x.ID+"/move", map[string]any{"target_folder_id": a.ID}, nil)
			return map[string]bool{x.ID: false}
		}, func(t *testing.T, got map[string]deltaItem) {
			if p := got[x.ID].ParentID; p == nil || *p != a.ID {
				t.Errorf("moved %+v", got[x.ID])
			}
		}},
		{"new version", func() map[string]bool {
			c.upload("y.txt", a.ID, "text/plain", []byte("version two"))
			return map[string]bool{x.ID: false}
		}, func(t *testing.T, got map[string]deltaItem) {
			if it := got[x.ID]; it.Version != 2 || it.ContentHash != sha([]byte("version two")) || it.SizeBytes != 11 {
				t.Errorf("new version %+v", it)
			}
		}},
		{"pending upload and another user's changes", func() map[string]bool {
			c.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "later.txt", "parent_id": a.ID, "mime_type": "text/plain", "size": 1}, nil)
			bf := cb.folder("Bob's", "")
			cb.upload("bob.txt", bf.ID, "text/plain", []byte("bob"))
			return map[string]bool{}
		}, nil},
		{"trash folder", func() map[string]bool {
			c.ok(204, "POST", "/api/v1/drive/"+a.ID+"/trash", nil, nil)
			return map[string]bool{a.ID: true, a1.ID: true, b.ID: true, b1.ID: true, x.ID: true}
		}, nil},
		{"restore folder", func() map[string]bool {
			c.ok(200, "POST", "/api/v1/drive/"+a.ID+"/restore", nil, nil)
			return map[string]bool{a.ID: false, a1.ID: false, b.ID: false, b1.ID: false, x.ID: false}
		}, func(t *testing.T, got map[string]deltaItem) {
			if p := got[b1.ID].ParentID; p == nil || *p != b.ID || got[b1.ID].ContentHash != sha([]byte("b1")) {
				t.Errorf("restored child %+v", got[b1.ID])
			}
		}},
		{"permanent delete", func() map[string]bool {
			c.ok(204, "DELETE", "/api/v1/drive/"+b.ID, nil, nil)
			return map[string]bool{b.ID: true, b1.ID: true}
		}, func(t *testing.T, got map[string]deltaItem) {
			if it := got[b1.ID]; it.Name != "b1.txt" || it.ParentID == nil || *it.ParentID != b.ID {
				t.Errorf("tombstone %+v", it)
			}
		}},
		{"copy folder", func() map[string]bool {
			var cp driveFile
			c.ok(201, "POST", "/api/v1/drive/"+a.ID+"/copy", nil, &cp)
			copied = cp.ID
			l := c.list("/api/v1/drive/browse/" + cp.ID)
			want := map[string]bool{cp.ID: false}
			for _, f := range l.Items {
				want[f.ID] = false
			}
			if len(want) != 3 {
				t.Fatalf("copy of A holds %s", names(l))
			}
			return want
		}, func(t *testing.T, got map[string]deltaItem) {
			if it := got[copied]; it.Name != "A (1)" || it.ParentID != nil || !it.IsFolder {
				t.Errorf("copied folder %+v", it)
			}
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			want := st.do()
			items, next, _ := c.syncAll("laptop", cursor, 0)
			if got := changes(items); !sameChanges(got, want) {
				t.Fatalf("delta %v, want %v", got, want)
			}
			if st.check != nil {
				st.check(t, byID(items))
			}
			cursor = next
		})
	}
	// Bob's own feed has his items only.
	items, _, _ := cb.syncAll("bob-phone", "", 0)
	if len(items) != 2 {
		t.Fatalf("bob's snapshot %+v", items)
	}
}

func TestDriveSyncErrors(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	bob := s.Bootstrap("Drive Org", "bob@example.test", "member")
	f := c.upload("f.txt", "", "text/plain", []byte("f"))
	pg := c.delta("laptop", "", 0)
	bobPage := driveClient{t: t, s: s, tok: bob.Token}.delta("phone", "", 0)
	tampered := []byte(pg.Cursor)
	tampered[3] ^= 1
	readOnly := s.Token("ann@example.test", "drive:read")
	noDrive := s.Token("ann@example.test", "contacts:read")
	s.Run(t, []webtest.Scenario{
		{Name: "device id of 65 characters", Request: webtest.Request{Method: "GET", Path: deltaPath(strings.Repeat("d", 65), "", 0), Token: c.tok}, Status: 422, Problem: "validation_failed"},
		{Name: "device id of 64 characters", Request: webtest.Request{Method: "GET", Path: deltaPath(strings.Repeat("d", 64), "", 0), Token: c.tok}, Status: 200},
		{Name: "no device id", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/sync/delta", Token: c.tok}, Status: 422, Problem: "validation_failed"},
		{Name: "limit over 1000", Request: webtest.Request{Method: "GET", Path: deltaPath("laptop", "", 1001), Token: c.tok}, Status: 422, Problem: "validation_failed"},
		{Name: "limit 0", Request: webtest.Request{Method: "GET", Path: deltaPath("laptop", "", 0) + "&limit=0", Token: c.tok}, Status: 422, Problem: "validation_failed"},
		{Name: "tampered cursor", Request: webtest.Request{Method: "GET", Path: deltaPath("laptop", string(tampered), 0), Token: c.tok}, Status: 400, Problem: "invalid_cursor"},
		{Name: "garbage cursor", Request: webtest.Request{Method: "GET", Path: deltaPath("laptop", "not-a-cursor", 0), Token: c.tok}, Status: 400, Problem: "invalid_cursor"},
		{Name: "another user's cursor", Request: webtest.Request{Method: "GET", Path: deltaPath("laptop", bobPage.Cursor, 0), Token: c.tok}, Status: 400, Problem: "invalid_cursor"},
		{Name: "drive:read is enough", Request: webtest.Request{Method: "GET", Path: deltaPath("laptop", pg.Cursor, 0), Token: readOnly}, Status: 200},
		{Name: "no drive scope", Request: webtest.Request{Method: "GET", Path: deltaPath("laptop", "", 0), Token: noDrive}, Status: 403, Problem: "insufficient_scope"},
		{Name: "no credential", Request: webtest.Request{Method: "GET", Path: deltaPath("laptop", "", 0)}, Status: 401},
		{Name: "commit tampered cursor", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/sync/commit", Token: c.tok,
			Body: map[string]any{"device_id": "laptop", "cursor": string(tampered)}}, Status: 400, Problem: "invalid_cursor"},
		{Name: "commit device id too long", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/sync/commit", Token: c.tok,
			Body: map[string]any{"device_id": strings.Repeat("d", 65), "cursor": pg.Cursor}}, Status: 422, Problem: "validation_failed"},
		{Name: "status of an unknown device", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/sync/status?device_id=never", Token: c.tok}, Status: 404, Problem: "not_found"},
		{Name: "sync file of the owner", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/sync/files/" + f.ID, Token: c.tok}, Status: 200,
			Contains: []string{`"id":"` + f.ID + `"`, `"deleted":false`, `"content_hash":"` + sha([]byte("f")) + `"`}},
		{Name: "sync file of someone else", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/sync/files/" + f.ID, Token: bob.Token}, Status: 404, Problem: "not_found"},
		{Name: "sync file unknown", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/sync/files/nope", Token: c.tok}, Status: 404, Problem: "not_found"},
	})

	// A shared item still belongs to its owner's feed only: bob can open it but
	// sync/files answers 404 to him.
	now := time.Now().UnixMilli()
	if _, err := s.Main.DB.Exec(context.Background(), `INSERT INTO drive_shares (id, organization_id, file_id, owner_id, created_by, user_id,
		permission, created_at) SELECT ?, organization_id, id, owner_id, owner_id, ?, 'view', ? FROM drive_files WHERE id = ?`,
		app.NewID(), bob.UserID, now, f.ID); err != nil {
		t.Fatal(err)
	}
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/" + f.ID + "/detail", Token: bob.Token}), webtest.Scenario{Status: 200})
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/sync/files/" + f.ID, Token: bob.Token}), webtest.Scenario{Status: 404, Problem: "not_found"})
	if items, _, _ := (driveClient{t: t, s: s, tok: bob.Token}).syncAll("phone", "", 0); len(items) != 0 {
		t.Errorf("shared item in bob's feed: %+v", items)
	}
	// A trashed item is reported deleted.
	c.ok(204, "POST", "/api/v1/drive/"+f.ID+"/trash", nil, nil)
	var it deltaItem
	c.ok(200, "GET", "/api/v1/drive/sync/files/"+f.ID, nil, &it)
	if !it.Deleted || it.ID != f.ID {
		t.Errorf("trashed sync file %+v", it)
	}
}

func TestDriveSyncCursorExpired(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	f := c.upload("f.txt", "", "text/plain", []byte("f"))
	_, old, _ := c.syncAll("laptop", "", 0)
	// A cursor does not age by itself: months later it still works.
	s.Clock.Advance(200 * 24 * time.Hour)
	if _, err := s.Main.Drive.Maintain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if items, _, _ := c.syncAll("laptop", old, 0); len(items) != 0 {
		t.Fatalf("idle delta %+v", items)
	}
	// A deletion the cursor has not seen is forgotten after sync_log_max_age.
	c.ok(204, "DELETE", "/api/v1/drive/"+f.ID, nil, nil)
	_, fresh, _ := c.syncAll("laptop", old, 0)
	maxAge := s.Main.Config.Drive.SyncLogMaxAge
	if maxAge <= 0 {
		maxAge = 90 * 24 * time.Hour
	}
	s.Clock.Advance(maxAge + time.Hour)
	done, err := s.Main.Drive.Maintain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if done["tombstones_pruned"] != 1 {
		t.Fatalf("maintenance %v", done)
	}
	webtest.Check(t, c.do("GET", deltaPath("laptop", old, 0), nil), webtest.Scenario{Status: 400, Problem: "cursor_expired"})
	webtest.Check(t, c.do("POST", "/api/v1/drive/sync/commit", map[string]any{"device_id": "laptop", "cursor": old}),
		webtest.Scenario{Status: 400, Problem: "cursor_expired"})
	// The cursor that saw the deletion, and a new snapshot, still work.
	if items, _, _ := c.syncAll("laptop", fresh, 0); len(items) != 0 {
		t.Fatalf("delta after the deletion %+v", items)
	}
	if items, _, _ := c.syncAll("laptop", "", 0); len(items) != 0 {
		t.Fatalf("snapshot %+v", items)
	}
}

func TestDriveSyncDevices(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	dir := c.folder("Dir", "")
	c.upload("a.txt", dir.ID, "text/plain", []byte("a"))
	c.upload("b.txt", dir.ID, "text/plain", []byte("b"))

	_, cur, _ := c.syncAll("laptop", "", 0)
	c.delta("phone", "", 1) // seen, never committed
	var st deviceStatus
	c.ok(200, "POST", "/api/v1/drive/sync/commit", map[string]any{"device_id": "laptop", "cursor": cur}, &st)
	if st.DeviceID != "laptop" || st.Cursor != cur || st.CommittedAt == nil || st.PendingChanges != 0 {
		t.Fatalf("commit %+v", st)
	}
	c.ok(200, "PATCH", "/api/v1/drive/"+dir.ID+"/rename", map[string]any{"name": "Dir2"}, nil)
	c.upload("c.txt", "", "text/plain", []byte("c"))
	c.ok(200, "GET", "/api/v1/drive/sync/status?device_id=laptop", nil, &st)
	if st.PendingChanges != 2 || st.Cursor != cur {
		t.Fatalf("status after 2 changes %+v", st)
	}
	c.ok(200, "GET", "/api/v1/drive/sync/status?device_id=phone", nil, &st)
	if st.PendingChanges != 4 || st.Cursor != "" || st.CommittedAt != nil {
		t.Fatalf("status of a device that never committed %+v", st)
	}
	// Committing the caught-up cursor clears the pending count.
	_, cur, _ = c.syncAll("laptop", cur, 0)
	c.ok(200, "POST", "/api/v1/drive/sync/commit", map[string]any{"device_id": "laptop", "cursor": cur}, &st)
	if st.PendingChanges != 0 {
		t.Fatalf("caught-up status %+v", st)
	}
	var devs []struct {
		DeviceID    string     `json:"device_id"`
		LastSeenAt  time.Time  `json:"last_seen_at"`
		CommittedAt *time.Time `json:"committed_at"`
	}
	c.ok(200, "GET", "/api/v1/drive/sync/devices", nil, &devs)
	got := map[string]bool{}
	for _, d := range devs {
		got[d.DeviceID] = d.CommittedAt != nil
		if d.LastSeenAt.IsZero() {
			t.Errorf("device %+v without last_seen_at", d)
		}
	}
	if len(devs) != 2 || !got["laptop"] || got["phone"] {
		t.Fatalf("devices %+v", devs)
	}
	// Another user sees none of them.
	bob := s.Bootstrap("Drive Org", "bob@example.test", "member")
	res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/sync/devices", Token: bob.Token})
	webtest.Check(t, res, webtest.Scenario{Status: 200})
	if strings.TrimSpace(string(res.Body)) != "[]" {
		t.Fatalf("bob's devices %s", res.Body)
	}
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/sync/status?device_id=laptop", Token: bob.Token}),
		webtest.Scenario{Status: 404, Problem: "not_found"})
}

// replicaItem is what a sync client keeps of an item.
type replicaItem struct {
	Name, Parent, Hash string
	Version            int
	Folder             bool
}

func (r replicaItem) String() string {
	return fmt.Sprintf("%s@%s v%d %s", r.Name, r.Parent, r.Version, r.Hash)
}

func applyDelta(replica map[string]replicaItem, items []drive.DeltaItem) {
	for _, it := range items {
		if it.Deleted {
			delete(replica, it.ID)
			continue
		}
		parent := ""
		if it.ParentID != nil {
			parent = *it.ParentID
		}
		replica[it.ID] = replicaItem{Name: it.Name, Parent: parent, Hash: it.ContentHash, Version: it.Version, Folder: it.IsFolder}
	}
}

// serverTree walks the owner's live tree with browse.
func serverTree(t *testing.T, ctx context.Context, svc *drive.Service, p *app.Principal) map[string]replicaItem {
	t.Helper()
	tree := map[string]replicaItem{}
	queue := []string{""}
	for len(queue) > 0 {
		folder := queue[0]
		queue = queue[1:]
		for page := 1; ; page++ {
			fc, err := svc.Browse(ctx, p, folder, drive.ListParams{Page: page, PerPage: drive.MaxPerPage})
			if err != nil {
				t.Fatalf("browse %q: %v", folder, err)
			}
			for _, f := range fc.Items {
				tree[f.ID] = replicaItem{Name: f.Name, Parent: f.Parent(), Hash: f.ContentHash, Version: f.Version, Folder: f.IsFolder}
				if f.IsFolder {
					queue = append(queue, f.ID)
				}
			}
			if page >= fc.TotalPages {
				break
			}
		}
	}
	return tree
}

func diffTrees(a, b map[string]replicaItem) []string {
	var d []string
	for id, x := range a {
		if y, ok := b[id]; !ok {
			d = append(d, fmt.Sprintf("%s only in replica: %v", id, x))
		} else if x != y {
			d = append(d, fmt.Sprintf("%s: replica %v, server %v", id, x, y))
		}
	}
	for id, y := range b {
		if _, ok := a[id]; !ok {
			d = append(d, fmt.Sprintf("%s only on the server: %v", id, y))
		}
	}
	sort.Strings(d)
	return d
}

// TestDriveSyncReplicaProperty runs 1,000 random operations through the
// service; every ~20 operations a replica applies an incremental delta, paged
// with a random small limit while more operations happen between pages. At the
// end the replica equals the server's tree, and so does a fresh snapshot.
func TestDriveSyncReplicaProperty(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	ctx := context.Background()
	p, err := s.Main.Identity.Authenticate(ctx, c.tok)
	if err != nil {
		t.Fatal(err)
	}
	svc := s.Main.Drive
	const seed = 20240607
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	known := []string{}   // every id seen (live, trashed or gone)
	trashed := []string{} // items trashed by the test (restore candidates)
	folders := []string{} // folders created or synced (move, copy and upload targets)
	pick := func(list []string) string {
		if len(list) == 0 {
			return ""
		}
		return list[rng.IntN(len(list))]
	}
	name := func() string {
		n := fmt.Sprintf("n%d", rng.IntN(40))
		if rng.IntN(2) == 0 {
			n += ".txt"
		}
		return n
	}
	content := func() []byte { return fmt.Appendf(nil, "content %d", rng.IntN(1000)) }
	folderOrRoot := func() string {
		if rng.IntN(4) == 0 {
			return ""
		}
		return pick(folders)
	}
	put := func(parent, fileID string) (drive.File, error) {
		b := content()
		f, _, err := svc.Put(ctx, p, drive.PutRequest{ParentID: parent, Name: name(), FileID: fileID, MimeType: "text/plain",
			Size: int64(len(b)), Body: bytes.NewReader(b)})
		return f, err
	}
	ops := []struct {
		name string
		do   func() (string, error)
	}{
		{"folder", func() (string, error) {
			f, err := svc.CreateFolder(ctx, p, name(), folderOrRoot())
			if err == nil {
				folders = append(folders, f.ID)
			}
			return f.ID, err
		}},
		{"upload", func() (string, error) {
			f, err := put(folderOrRoot(), "")
			return f.ID, err
		}},
		{"version", func() (string, error) {
			f, err := put("", pick(known))
			return f.ID, err
		}},
		{"rename", func() (string, error) {
			f, err := svc.Rename(ctx, p, pick(known), name())
			return f.ID, err
		}},
		{"move", func() (string, error) {
			f, err := svc.Move(ctx, p, pick(known), folderOrRoot())
			return f.ID, err
		}},
		{"trash", func() (string, error) {
			id := pick(known)
			err := svc.Trash(ctx, p, id)
			if err == nil {
				trashed = append(trashed, id)
			}
			return "", err
		}},
		{"restore", func() (string, error) {
			f, err := svc.Restore(ctx, p, pick(trashed))
			return f.ID, err
		}},
		{"delete", func() (string, error) {
			id := pick(known)
			if rng.IntN(2) == 0 {
				id = pick(trashed)
			}
			return "", svc.Delete(ctx, p, id)
		}},
		{"copy", func() (string, error) {
			f, err := svc.Copy(ctx, p, pick(known), folderOrRoot())
			return f.ID, err
		}},
	}
	weights := []int{3, 4, 3, 2, 2, 2, 2, 1, 1} // per op above
	var total int
	for _, w := range weights {
		total += w
	}
	done, failed := map[string]int{}, map[string]int{}
	step := func() {
		r := rng.IntN(total)
		i := 0
		for r >= weights[i] {
			r -= weights[i]
			i++
		}
		op := ops[i]
		id, err := op.do()
		switch app.ErrorCode(err) {
		case "":
			done[op.name]++
			if id != "" {
				known = append(known, id)
			}
		case app.ENotFound, app.EConflict, app.EValidation:
			failed[op.name]++
		default:
			t.Fatalf("%s: %v", op.name, err)
		}
	}

	replica := map[string]replicaItem{}
	cursor := ""
	sync := func(interleave bool) {
		limit := 1 + rng.IntN(25)
		for {
			pg, err := svc.Delta(ctx, p, "prop", cursor, limit)
			if err != nil {
				t.Fatalf("delta: %v", err)
			}
			applyDelta(replica, pg.Items)
			for _, it := range pg.Items {
				known = append(known, it.ID)
				if it.IsFolder && !it.Deleted {
					folders = append(folders, it.ID)
				}
			}
			cursor = pg.Cursor
			if !pg.HasMore {
				return
			}
			if interleave && rng.IntN(3) == 0 {
				step() // a change while the client pages
			}
		}
	}
	const n = 1000
	for i := range n {
		step()
		if i%20 == 19 {
			sync(true)
		}
	}
	sync(false)
	t.Logf("operations done %v, refused %v; %d live items", done, failed, len(replica))

	tree := serverTree(t, ctx, svc, p)
	if d := diffTrees(replica, tree); len(d) > 0 {
		t.Fatalf("replica differs from the server in %d items:\n%s", len(d), strings.Join(d, "\n"))
	}
	for id, it := range replica {
		if _, ok := replica[it.Parent]; it.Parent != "" && !ok {
			t.Errorf("item %s %v has no parent in the replica", id, it)
		}
	}
	snap := map[string]replicaItem{}
	for cur, more := "", true; more; {
		pg, err := svc.Delta(ctx, p, "fresh", cur, 100)
		if err != nil {
			t.Fatal(err)
		}
		applyDelta(snap, pg.Items)
		cur, more = pg.Cursor, pg.HasMore
	}
	if d := diffTrees(snap, tree); len(d) > 0 {
		t.Fatalf("fresh snapshot differs from the server in %d items:\n%s", len(d), strings.Join(d, "\n"))
	}
	if len(tree) < 50 || done["trash"] == 0 || done["restore"] == 0 || done["delete"] == 0 || done["copy"] == 0 || done["move"] == 0 {
		t.Fatalf("the random walk exercised too little: %v, %d live items", done, len(tree))
	}
}
