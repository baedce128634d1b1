package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"atrium/webtest"
)

// lockWorld is a drive with a folder Box of ann's, shared with bob for
// editing, holding l.txt ("v1"), and an edit link on l.txt.
type lockWorld struct {
	s        *webtest.Server
	ann, bob davUser
	box, l   driveFile
	linkTok  string
}

func newLockWorld(t *testing.T) lockWorld {
	t.Helper()
	s := webtest.New(t)
	w := lockWorld{s: s, ann: newDavUser(t, s, "Lock Org", "ann@example.test", "admin"),
		bob: newDavUser(t, s, "Lock Org", "bob@example.test", "member")}
	w.ann.want(201, "MKCOL", "/Box", nil, nil)
	w.ann.want(201, "PUT", "/Box/l.txt", map[string]string{"Content-Type": "text/plain"}, "v1")
	w.box = w.ann.rest.list("/api/v1/drive/browse").Items[0]
	w.l = w.ann.rest.list("/api/v1/drive/browse/" + w.box.ID).Items[0]
	share(t, s, w.ann, w.box.ID, w.bob.creds.UserID, "edit")
	w.linkTok = linkToken(t, s, w.ann.rest.share(w.l.ID, map[string]any{"create_link": true, "permission": "edit"}))
	return w
}

func (w lockWorld) linkWrite(text string) *webtest.Response {
	b, _ := json.Marshal(text)
	return w.s.Do(webtest.Request{Method: "PUT", Path: "/api/v1/drive/shared-link/" + w.linkTok + "/content", Body: json.RawMessage(b)})
}

func (w lockWorld) content(t *testing.T, id, want string) {
	t.Helper()
	if got := string(w.ann.rest.download(id)); got != want {
		t.Fatalf("content %q, want %q", got, want)
	}
}

// A shared link writes as its creator but holds none of their locks: a link
// write to a file its creator locked over WebDAV is refused, the owner with
// the token still writes, and after UNLOCK the same link write succeeds.
func TestDriveLinkWriteHoldsNoLock(t *testing.T) {
	t.Parallel()
	w := newLockWorld(t)
	tok := w.ann.lock("/Box/l.txt", "exclusive", nil)
	webtest.Check(t, w.linkWrite("by the link"), webtest.Scenario{Status: 423, Problem: "locked"})
	w.content(t, w.l.ID, "v1")
	w.ann.want(204, "PUT", "/Box/l.txt", ifToken(tok), "v2")
	w.content(t, w.l.ID, "v2")
	w.ann.want(204, "UNLOCK", "/Box/l.txt", map[string]string{"Lock-Token": "<" + tok + ">"}, nil)
	webtest.Check(t, w.linkWrite("by the link"), webtest.Scenario{Status: 200})
	w.content(t, w.l.ID, "by the link")
}

// A resumable upload holds no lock: its completion into a folder under
// another user's deep lock, and its resolution by overwrite of a locked file,
// are refused like REST confirm and change nothing; after UNLOCK they pass.
func TestTusHoldsNoLock(t *testing.T) {
	t.Parallel()
	w := newLockWorld(t)
	tc := tusClient{t: t, s: w.s, tok: w.bob.creds.Token}
	upload := func(name string, content string) *webtest.Response {
		return tc.patch(tc.create(tusMeta("filename", name, "parent_id", w.box.ID), int64(len(content))), 0, []byte(content))
	}

	// Completion into a deep-locked folder.
	ftok := w.ann.lock("/Box/", "exclusive", nil)
	webtest.Check(t, upload("t.txt", "bob's"), webtest.Scenario{Status: 423, Problem: "locked"})
	if l := w.ann.rest.list("/api/v1/drive/browse/" + w.box.ID); l.Total != 1 {
		t.Fatalf("Box after a refused upload: %v", names(l))
	}
	// The lock's owner uploading into her own locked folder holds it no more.
	own := tusClient{t: t, s: w.s, tok: w.ann.creds.Token}
	webtest.Check(t, own.patch(own.create(tusMeta("filename", "o.txt", "parent_id", w.box.ID), 1), 0, []byte("o")),
		webtest.Scenario{Status: 423, Problem: "locked"})
	w.ann.want(204, "UNLOCK", "/Box/", map[string]string{"Lock-Token": "<" + ftok + ">"}, nil)
	webtest.Check(t, upload("t.txt", "bob's"), webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})

	// Resolve by overwrite of a file locked after the upload met it.
	up := tc.create(tusMeta("filename", "l.txt", "parent_id", w.box.ID), 5)
	webtest.Check(t, tc.patch(up, 0, []byte("bob's")), webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "conflict"}})
	id := strings.TrimPrefix(up, "/api/v1/drive/tus/")
	tok := w.ann.lock("/Box/l.txt", "exclusive", nil)
	resolve := func() *webtest.Response {
		return w.bob.rest.do("POST", "/api/v1/drive/tus/"+id+"/resolve?strategy=overwrite", nil)
	}
	webtest.Check(t, resolve(), webtest.Scenario{Status: 423, Problem: "locked"})
	w.content(t, w.l.ID, "v1")
	w.ann.want(204, "UNLOCK", "/Box/l.txt", map[string]string{"Lock-Token": "<" + tok + ">"}, nil)
	webtest.Check(t, resolve(), webtest.Scenario{Status: 200})
	w.content(t, w.l.ID, "bob's")
}

// An upload announced before a file of its name existed: when that file
// appears and is locked by another user before the confirm, the confirm is
// refused under the new file's lock and changes nothing.
func TestDriveConfirmPendingUnderNewLock(t *testing.T) {
	t.Parallel()
	w := newLockWorld(t)
	var tk uploadTicket
	w.bob.rest.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "race.txt", "parent_id": w.box.ID, "size": 5}, &tk)
	if res := putURL(t, tk.UploadURL, "text/plain", []byte("bob's")); res.StatusCode != 200 {
		t.Fatalf("PUT upload: %d", res.StatusCode)
	}
	w.ann.want(201, "PUT", "/Box/race.txt", nil, "ann's")
	tok := w.ann.lock("/Box/race.txt", "exclusive", nil)
	confirm := func() *webtest.Response { return w.bob.rest.do("POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil) }
	webtest.Check(t, confirm(), webtest.Scenario{Status: 423, Problem: "locked"})
	if g := w.ann.want(200, "GET", "/Box/race.txt", nil, nil); string(g.Body) != "ann's" {
		t.Fatalf("locked file holds %q", g.Body)
	}
	w.ann.want(204, "UNLOCK", "/Box/race.txt", map[string]string{"Lock-Token": "<" + tok + ">"}, nil)
	webtest.Check(t, confirm(), webtest.Scenario{Status: 200})
	if g := w.ann.want(200, "GET", "/Box/race.txt", nil, nil); string(g.Body) != "bob's" {
		t.Fatalf("after unlock the file holds %q", g.Body)
	}
}

// rows counts the rows of a table (outbox, drive_tombstones).
func rows(t *testing.T, s *webtest.Server, table string) int {
	t.Helper()
	var n int
	if err := openRO(t, s).QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// unchanged asserts that no event and no sync-feed tombstone appeared since
// before (what rows returned for outbox and drive_tombstones).
func unchanged(t *testing.T, s *webtest.Server, outbox, tombstones int) {
	t.Helper()
	if o, tb := rows(t, s, "outbox"), rows(t, s, "drive_tombstones"); o != outbox || tb != tombstones {
		t.Fatalf("a refused request left %d events and %d tombstones", o-outbox, tb-tombstones)
	}
}

// MOVE and COPY with Overwrite: T replace the destination in the transaction
// of the move or copy: when that is refused, the destination stays live, out
// of the trash, and no event or tombstone tells otherwise.
func TestWebDAVOverwriteIsAtomic(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	ann.want(201, "PUT", "/a.txt", nil, "a")
	ann.want(201, "PUT", "/b.txt", nil, "b")
	ann.want(201, "PUT", "/big.bin", nil, strings.Repeat("x", 60))
	tok := ann.lock("/a.txt", "exclusive", nil)
	if _, err := s.Main.DB.Exec(context.Background(), `UPDATE plans SET quota_bytes = 100 WHERE slug = 'enterprise'`); err != nil {
		t.Fatal(err)
	}
	s.Main.Identity.CredentialsChanged() // credentials carry the quota
	outbox, tombstones := rows(t, s, "outbox"), rows(t, s, "drive_tombstones")
	over := map[string]string{"Destination": "/api/v1/webdav/b.txt", "Overwrite": "T"}
	s.Run(t, []webtest.Scenario{
		{Name: "MOVE of a locked source over", Request: davReq(ann, "MOVE", "/a.txt", over, nil), Status: 423, Problem: "locked"},
		{Name: "COPY over, past the quota", Request: davReq(ann, "COPY", "/big.bin", over, nil), Status: 507, Problem: "quota_exceeded"},
	})
	if g := ann.want(200, "GET", "/b.txt", nil, nil); string(g.Body) != "b" {
		t.Fatalf("b.txt holds %q", g.Body)
	}
	if tr := ann.rest.list("/api/v1/drive/trash"); tr.Total != 0 {
		t.Fatalf("trash: %v", names(tr))
	}
	unchanged(t, s, outbox, tombstones)

	// With the token the move replaces b.txt.
	mv := map[string]string{"Destination": "/api/v1/webdav/b.txt", "Overwrite": "T", "If": "(<" + tok + ">)"}
	ann.want(204, "MOVE", "/a.txt", mv, nil)
	if g := ann.want(200, "GET", "/b.txt", nil, nil); string(g.Body) != "a" {
		t.Fatalf("b.txt holds %q", g.Body)
	}
	if tr := ann.rest.list("/api/v1/drive/trash"); tr.Total != 1 {
		t.Fatalf("trash: %v", names(tr))
	}
}

// A LOCK on an unmapped URL creates the empty file and locks it in one
// transaction: a refused lock leaves no file, event or tombstone.
func TestWebDAVLockUnmappedIsAtomic(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	ann.want(201, "MKCOL", "/Box", nil, nil)
	ftok := ann.lock("/Box/", "shared", nil)
	outbox, tombstones := rows(t, s, "outbox"), rows(t, s, "drive_tombstones")
	// Holding the folder's shared lock, ann may add to it, but an exclusive
	// lock below a shared deep one is refused.
	webtest.Check(t, s.Do(davReq(ann, "LOCK", "/Box/new.txt", ifToken(ftok), fmt.Sprintf(lockBody, "exclusive"))),
		webtest.Scenario{Status: 423, Problem: "locked"})
	ann.want(404, "GET", "/Box/new.txt", nil, nil)
	unchanged(t, s, outbox, tombstones)
	// A shared one is granted, and creates the file.
	ann.want(201, "LOCK", "/Box/new.txt", ifToken(ftok), fmt.Sprintf(lockBody, "shared"))
	ann.want(200, "GET", "/Box/new.txt", nil, nil)
}

// Over REST a write holds a lock only by presenting its token, as over
// WebDAV: the lock's owner without the token is refused with 423 and nothing
// changes; with If: (<token>) the write passes; a malformed If → 400; after
// UNLOCK the write passes without a token.
func TestDriveRESTLockToken(t *testing.T) {
	t.Parallel()
	type op struct {
		name, method, path string
		body               any
		ok                 int
		prepare            func(t *testing.T, w lockWorld)
	}
	ops := []op{
		{name: "rename", method: "PATCH", path: "/rename", body: map[string]any{"name": "r.txt"}, ok: 200},
		{name: "move", method: "PATCH", path: "/move", body: map[string]any{"target_folder_id": ""}, ok: 200},
		{name: "metadata", method: "PATCH", path: "/metadata", body: map[string]any{"description": "d"}, ok: 200},
		{name: "trash", method: "POST", path: "/trash", ok: 204},
		{name: "delete", method: "DELETE", ok: 204},
		{name: "confirm", method: "POST", path: "/confirm", ok: 200,
			prepare: func(t *testing.T, w lockWorld) {
				var tk uploadTicket
				w.ann.rest.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "l.txt", "parent_id": w.box.ID, "size": 2}, &tk)
				if tk.File.ID != w.l.ID {
					t.Fatalf("the upload is a new file %s, not a version of l.txt", tk.File.ID)
				}
				if res := putURL(t, tk.UploadURL, "text/plain", []byte("v2")); res.StatusCode != 200 {
					t.Fatalf("PUT upload: %d", res.StatusCode)
				}
			}},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			t.Parallel()
			w := newLockWorld(t)
			if o.prepare != nil {
				o.prepare(t, w)
			}
			tok := w.ann.lock("/Box/l.txt", "exclusive", nil)
			req := func(hdr map[string]string) webtest.Request {
				return webtest.Request{Method: o.method, Path: "/api/v1/drive/" + w.l.ID + o.path, Token: w.ann.creds.Token, Body: o.body, Header: hdr}
			}
			snap := func() string {
				var v string
				db := openRO(t, w.s)
				defer db.Close()
				if err := db.QueryRow(`SELECT version || name || COALESCE(parent_id, '') || COALESCE(CAST(trashed_at AS TEXT), '') || COALESCE(description, '')
					FROM drive_files WHERE id = ?`, w.l.ID).Scan(&v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			before := snap()
			webtest.Check(t, w.s.Do(req(nil)), webtest.Scenario{Status: 423, Problem: "locked"})
			webtest.Check(t, w.s.Do(req(ifToken("opaquelocktoken:nope"))), webtest.Scenario{Status: 423, Problem: "locked"})
			webtest.Check(t, w.s.Do(req(map[string]string{"If": "(<" + tok})), webtest.Scenario{Status: 400})
			if after := snap(); after != before {
				t.Fatalf("a refused write changed l.txt: %s → %s", before, after)
			}
			if o.name == "rename" {
				// After UNLOCK the owner writes without a token.
				w.ann.want(204, "UNLOCK", "/Box/l.txt", map[string]string{"Lock-Token": "<" + tok + ">"}, nil)
				webtest.Check(t, w.s.Do(req(nil)), webtest.Scenario{Status: o.ok})
				return
			}
			webtest.Check(t, w.s.Do(req(ifToken(tok))), webtest.Scenario{Status: o.ok})
		})
	}
}
