package web_test

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"testing"

	"atrium/app"
	"atrium/app/drive"
	"atrium/app/identity"
	"atrium/webtest"
)

// txtDiscovery is an editor that edits text files (the matrix writes one file
// through every door, the link's text editor and WOPI included).
const txtDiscovery = `<?xml version="1.0" encoding="utf-8"?>
<wopi-discovery><net-zone name="external-http">
 <app name="writer"><action default="true" name="edit" ext="txt" urlsrc="EDITOR/browser/dist/cool.html?"/></app>
</net-zone></wopi-discovery>`

// matrixWorld: ann's folder Box holds f.txt at version 2 ("v2") and is shared
// with bob for editing; the writer (me: ann, or bob for the view-only share)
// writes through every door while a condition holds. box is the WebDAV path
// of Box as the writer sees it.
type matrixWorld struct {
	s            *webtest.Server
	ann, bob, me davUser
	box, f       driveFile
	boxPath      string
}

// prep is what a door prepared (ids, tokens) for its change.
type prep = map[string]string

// setup is what a door prepares as the condition asks: the editor holds its
// WOPI lock; the link the door writes through has this permission.
type setup struct {
	wopiLock bool
	linkPerm string
}

// as resolves the writer's REST token as the doors do (the identity service:
// a suspended organisation is refused there) and calls fn with the principal.
func (w matrixWorld) as(ctx context.Context, fn func(*app.Principal) error) error {
	p, err := w.s.Main.Identity.Authenticate(ctx, w.me.creds.Token)
	if err != nil {
		return err
	}
	return fn(p)
}

// rootItem returns the id of the writer's item name at their root.
func (w matrixWorld) rootItem(t *testing.T, name string) string {
	t.Helper()
	for _, it := range w.me.rest.list("/api/v1/drive/browse").Items {
		if it.Name == name {
			return it.ID
		}
	}
	t.Fatalf("no %s at the root", name)
	return ""
}

// snapshot is what a refused write must leave as it was: the drive's rows,
// the events and the sync feed.
func (w matrixWorld) snapshot(t *testing.T) string {
	t.Helper()
	var parts []string
	for _, q := range []string{`SELECT COUNT(*) FROM outbox`, `SELECT COUNT(*) FROM drive_tombstones`,
		`SELECT COALESCE(SUM(seq), 0) FROM drive_seq`, `SELECT COUNT(*) FROM drive_versions`,
		`SELECT COUNT(*) FROM drive_files WHERE status = 'active'`, `SELECT COUNT(*) FROM drive_files WHERE trashed_at IS NOT NULL`} {
		parts = append(parts, fmt.Sprint(scalar(t, w.s, q)))
	}
	return strings.Join(parts, " ")
}

func scalar(t *testing.T, s *webtest.Server, q string) int64 {
	t.Helper()
	db := openRO(t, s)
	defer db.Close()
	var n int64
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The write matrix: a write refused by a condition is refused with the same
// app error through every door and changes nothing: content, versions,
// items, events, sync feed. Every cell runs twice: through the app services
// the door calls (the credential resolved by the identity service, as the
// doors do), then over HTTP through the real door, where the error becomes
// its status (WOPI and the WebDAV mount in their protocols' terms).
func TestDriveWriteMatrix(t *testing.T) {
	t.Parallel()
	type door struct {
		name    string
		prepare func(t *testing.T, w matrixWorld, su setup) prep
		do      func(w matrixWorld, p prep) *webtest.Response
		// call makes the same change through the app services the door
		// calls, the caller's credential resolved by the identity service.
		call func(ctx context.Context, w matrixWorld, p prep) error
		wopi bool
	}
	over := func(w matrixWorld) map[string]string {
		return map[string]string{"Destination": "/api/v1/webdav" + strings.ReplaceAll(w.boxPath, " ", "%20") + "/f.txt", "Overwrite": "T"}
	}
	doors := []door{
		{name: "REST confirm",
			prepare: func(t *testing.T, w matrixWorld, _ setup) prep {
				var tk uploadTicket
				w.me.rest.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": "f.txt", "parent_id": w.box.ID, "size": 5}, &tk)
				if res := putURL(t, tk.UploadURL, "text/plain", []byte("ann's")); res.StatusCode != 200 {
					t.Fatalf("PUT upload: %d", res.StatusCode)
				}
				return prep{"id": tk.File.ID}
			},
			do: func(w matrixWorld, p prep) *webtest.Response {
				return w.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/" + p["id"] + "/confirm", Token: w.me.creds.Token})
			},
			call: func(ctx context.Context, w matrixWorld, p prep) error {
				return w.as(ctx, func(pr *app.Principal) error {
					_, err := w.s.Main.Drive.Uploads().Confirm(ctx, pr, p["id"])
					return err
				})
			}},
		{name: "WebDAV PUT",
			do: func(w matrixWorld, _ prep) *webtest.Response {
				return w.s.Do(davReq(w.me, "PUT", w.boxPath+"/f.txt", nil, "ann's"))
			},
			call: func(ctx context.Context, w matrixWorld, _ prep) error {
				return w.as(ctx, func(pr *app.Principal) error {
					_, _, err := w.s.Main.Drive.Put(ctx, pr, drive.PutRequest{ParentID: w.box.ID, Name: "f.txt", Size: 5, Body: strings.NewReader("ann's")})
					return err
				})
			}},
		{name: "MOVE over",
			prepare: func(t *testing.T, w matrixWorld, _ setup) prep {
				w.me.want(201, "PUT", "/src.txt", nil, "ann's")
				return prep{"src": w.rootItem(t, "src.txt")}
			},
			do: func(w matrixWorld, _ prep) *webtest.Response {
				return w.s.Do(davReq(w.me, "MOVE", "/src.txt", over(w), nil))
			},
			call: func(ctx context.Context, w matrixWorld, p prep) error {
				return w.as(ctx, func(pr *app.Principal) error {
					_, err := w.s.Main.Drive.MoveOver(ctx, pr, p["src"], w.box.ID, "f.txt", w.f.ID)
					return err
				})
			}},
		{name: "COPY onto",
			prepare: func(t *testing.T, w matrixWorld, _ setup) prep {
				w.me.want(201, "PUT", "/src.txt", nil, "ann's")
				return prep{"src": w.rootItem(t, "src.txt")}
			},
			do: func(w matrixWorld, _ prep) *webtest.Response {
				return w.s.Do(davReq(w.me, "COPY", "/src.txt", over(w), nil))
			},
			call: func(ctx context.Context, w matrixWorld, p prep) error {
				return w.as(ctx, func(pr *app.Principal) error {
					_, err := w.s.Main.Drive.CopyOver(ctx, pr, p["src"], w.box.ID, "f.txt", false, w.f.ID)
					return err
				})
			}},
		{name: "TUS complete",
			prepare: func(t *testing.T, w matrixWorld, _ setup) prep {
				tc := tusClient{t: t, s: w.s, tok: w.me.creds.Token}
				return prep{"path": tc.create(tusMeta("filename", "t.txt", "parent_id", w.box.ID), 5)}
			},
			do: func(w matrixWorld, p prep) *webtest.Response {
				return w.s.Do(webtest.Request{Method: "PATCH", Path: p["path"], Token: w.me.creds.Token, Body: []byte("ann's"),
					Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"}})
			},
			call: func(ctx context.Context, w matrixWorld, p prep) error {
				sum := sha256.Sum256([]byte("ann's"))
				put := func() error { _, err := w.s.Main.Blobs.Put(ctx, strings.NewReader("ann's"), 5); return err }
				return w.as(ctx, func(pr *app.Principal) error {
					id := path.Base(p["path"])
					if _, err := w.s.Main.Drive.Uploads().TusProgress(ctx, pr, id, 0, 5, nil, ""); err != nil {
						return err
					}
					_, err := w.s.Main.Drive.Uploads().CompleteTusUpload(ctx, pr, id, hex.EncodeToString(sum[:]), 5, nil, put)
					return err
				})
			}},
		{name: "TUS resolve overwrite",
			prepare: func(t *testing.T, w matrixWorld, _ setup) prep {
				tc := tusClient{t: t, s: w.s, tok: w.me.creds.Token}
				up := tc.create(tusMeta("filename", "f.txt", "parent_id", w.box.ID), 5)
				webtest.Check(t, tc.patch(up, 0, []byte("ann's")), webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "conflict"}})
				return prep{"id": strings.TrimPrefix(up, "/api/v1/drive/tus/")}
			},
			do: func(w matrixWorld, p prep) *webtest.Response {
				return w.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/" + p["id"] + "/resolve?strategy=overwrite", Token: w.me.creds.Token})
			},
			call: func(ctx context.Context, w matrixWorld, p prep) error {
				return w.as(ctx, func(pr *app.Principal) error {
					_, err := w.s.Main.Drive.Uploads().ResolveTusUpload(ctx, pr, p["id"], "overwrite")
					return err
				})
			}},
		{name: "WOPI PutFile", wopi: true,
			prepare: func(t *testing.T, w matrixWorld, su setup) prep {
				var es editSession
				w.me.rest.ok(200, "GET", "/api/v1/drive/"+w.f.ID+"/edit-url", nil, &es)
				if su.wopiLock {
					wantWOPI(t, wopiCall(w.s, "POST", w.f.ID, "", es.AccessToken, wopiOp("LOCK", "X-WOPI-Lock", "W1"), nil), 200, nil)
				}
				return prep{"tok": es.AccessToken}
			},
			do: func(w matrixWorld, p prep) *webtest.Response {
				return wopiCall(w.s, "POST", w.f.ID, "contents", p["tok"], wopiOp("PUT", "X-WOPI-Lock", "W1"), "ann's")
			},
			call: func(ctx context.Context, w matrixWorld, p prep) error {
				es, err := w.s.Main.Drive.Editing().OpenEditorSession(ctx, p["tok"], w.f.ID)
				if err != nil {
					return err
				}
				_, err = w.s.Main.Drive.Editing().WOPIPutFile(ctx, es, drive.WOPIPut{Lock: "W1", Body: strings.NewReader("ann's"), Size: 5})
				return err
			}},
		{name: "link write",
			prepare: func(t *testing.T, w matrixWorld, su setup) prep {
				return prep{"tok": linkToken(t, w.s, w.ann.rest.share(w.f.ID, map[string]any{"create_link": true, "permission": su.linkPerm}))}
			},
			do: func(w matrixWorld, p prep) *webtest.Response {
				return w.s.Do(webtest.Request{Method: "PUT", Path: "/api/v1/drive/shared-link/" + p["tok"] + "/content", Body: json.RawMessage(`"ann's"`)})
			},
			call: func(ctx context.Context, w matrixWorld, p prep) error {
				_, err := w.s.Main.Drive.Links().LinkWriteContent(ctx, p["tok"], "ann's")
				return err
			}},
		{name: "version restore",
			prepare: func(t *testing.T, w matrixWorld, _ setup) prep {
				var vs []struct {
					ID      string `json:"id"`
					Version int    `json:"version"`
				}
				w.me.rest.ok(200, "GET", "/api/v1/drive/"+w.f.ID+"/versions", nil, &vs)
				for _, v := range vs {
					if v.Version == 1 {
						return prep{"v": v.ID}
					}
				}
				t.Fatalf("versions %+v", vs)
				return nil
			},
			do: func(w matrixWorld, p prep) *webtest.Response {
				return w.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/" + w.f.ID + "/versions/" + p["v"] + "/restore", Token: w.me.creds.Token})
			},
			call: func(ctx context.Context, w matrixWorld, p prep) error {
				return w.as(ctx, func(pr *app.Principal) error {
					_, err := w.s.Main.Drive.RestoreVersion(ctx, pr, w.f.ID, p["v"])
					return err
				})
			}},
	}
	bobLocks := func(folder bool) func(t *testing.T, w matrixWorld) {
		return func(t *testing.T, w matrixWorld) {
			bob := &app.Principal{OrgID: w.bob.creds.OrganizationID, UserID: w.bob.creds.UserID, Features: []string{"drive"},
				Scopes: app.NewScopes(app.ScopeDriveRead, app.ScopeDriveWrite)}
			id := w.f.ID
			if folder {
				id = w.box.ID
			}
			if _, err := w.s.Main.Drive.Lock(context.Background(), bob, id, drive.LockKindWebDAV, "bob", 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	conditions := []struct {
		name     string
		apply    func(t *testing.T, w matrixWorld)
		status   int
		code     string
		wopi     int  // WOPI's status
		wopiLock bool // the editor holds its lock (else another's lock stands in its way)
		// byBob: bob writes (through his share of Box, and a link of the
		// permission linkPerm), else ann.
		byBob    bool
		linkPerm string
		notApply []string
		// except are doors that answer otherwise, by design: status and code.
		except map[string][2]any
		// mount are the WebDAV mount's answers over HTTP where they differ.
		mount map[string][2]any
		// wopiCode is the app error of the WOPI door's service call (else code).
		wopiCode string
	}{
		{name: "locked file", apply: bobLocks(false), status: 423, code: app.ELocked, wopi: 409,
			notApply: []string{"TUS complete"}}, // a new name is not under the file's lock
		{name: "deep-locked folder", apply: bobLocks(true), status: 423, code: app.ELocked, wopi: 409},
		{name: "over quota", status: 507, code: app.EQuotaExceeded, wopi: 413, wopiLock: true,
			apply: func(t *testing.T, w matrixWorld) {
				// The organisation's stored bytes fill every plan's quota.
				if _, err := w.s.Main.DB.Exec(context.Background(), `UPDATE drive_usage SET bytes = bytes + 8 * 1099511627776 WHERE organization_id = ?`,
					w.ann.creds.OrganizationID); err != nil {
					t.Fatal(err)
				}
			},
			notApply: []string{"MOVE over"}}, // a move adds no bytes
		{name: "trashed parent", status: 409, code: app.EConflict, wopi: 409, wopiLock: true,
			apply: func(t *testing.T, w matrixWorld) {
				// In the server, without strict lock checks: ann's REST call
				// would be refused under the editor lock she holds by its
				// token only.
				ann := &app.Principal{OrgID: w.ann.creds.OrganizationID, UserID: w.ann.creds.UserID, Features: []string{"drive"},
					Scopes: app.NewScopes(app.ScopeDriveRead, app.ScopeDriveWrite)}
				if err := w.s.Main.Drive.Trash(context.Background(), ann, w.box.ID); err != nil {
					t.Fatal(err)
				}
			},
			// A resumable upload names its folder by id: a trashed one is not
			// found (as when it is announced); a link to a trashed item is gone.
			except: map[string][2]any{"TUS complete": {404, app.ENotFound}, "TUS resolve overwrite": {404, app.ENotFound},
				"link write": {404, app.ENotFound},
				"WebDAV PUT": {404, app.ENotFound}, "MOVE over": {404, app.ENotFound}, "COPY onto": {404, app.ENotFound}},
			// The mount answers 409 for a path whose parent is missing (RFC
			// 4918 §9.7.1), the service not_found for the folder in the trash.
			mount: map[string][2]any{"WebDAV PUT": {409, app.EConflict}, "MOVE over": {409, app.EConflict}, "COPY onto": {409, app.EConflict}}},
		{name: "view-only share", status: 403, code: app.EForbidden, wopi: 401, byBob: true, linkPerm: "view",
			// Bob's share of Box becomes view-only after he announced,
			// started or opened his change; a view link writes nothing.
			apply: func(t *testing.T, w matrixWorld) {
				if _, err := w.s.Main.DB.Exec(context.Background(), `UPDATE drive_shares SET permission = 'view' WHERE user_id = ?`, w.bob.creds.UserID); err != nil {
					t.Fatal(err)
				}
			},
			// The WebDAV mount shows what others share in "Shared with me",
			// read-only whatever the share allows.
			mount: map[string][2]any{"WebDAV PUT": {403, app.EReadOnly}, "MOVE over": {403, app.EReadOnly}, "COPY onto": {403, app.EReadOnly}}},
		{name: "suspended organisation", status: 403, code: app.EOrgSuspended, wopi: 401, wopiLock: true,
			// An editor's access token of a suspended organisation is no
			// longer valid (WOPI's answer to a bad token).
			wopiCode: app.EUnauthorized,
			// A link of a suspended organisation is gone, like a revoked one:
			// an anonymous caller learns nothing about the organisation.
			except: map[string][2]any{"link write": {404, app.ENotFound}},
			apply: func(t *testing.T, w matrixWorld) {
				if err := w.s.Main.Identity.SetOrgStatus(context.Background(), "", w.ann.creds.OrganizationID, identity.OrgSuspended); err != nil {
					t.Fatal(err)
				}
			}},
	}
	editor := httptest.NewServer(nil)
	editor.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/xml")
		rw.Write([]byte(strings.ReplaceAll(txtDiscovery, "EDITOR", editor.URL)))
	})
	t.Cleanup(editor.Close)
	// The cells of a condition share one server and run one after another,
	// each in an organisation of its own: what a condition does (a lock, a
	// suspension) stays in its cell, and the snapshot of the whole database
	// before and after a cell's write sees no other cell's writes.
	for _, c := range conditions {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := webtest.New(t, withEditor(editor.URL))
			cell := 0
			for _, mode := range []string{"service", "HTTP"} {
				for _, d := range doors {
					if slices.Contains(c.notApply, d.name) {
						continue
					}
					cell++
					t.Run(mode+"/"+d.name, func(t *testing.T) {
						w, p := newMatrixWorld(t, s, cell, c.byBob, func(w matrixWorld) prep {
							if d.prepare == nil {
								return nil
							}
							return d.prepare(t, w, setup{wopiLock: c.wopiLock, linkPerm: cmp.Or(c.linkPerm, "edit")})
						})
						c.apply(t, w)
						before := w.snapshot(t)
						if mode == "service" {
							want := c.code
							if e, ok := c.except[d.name]; ok {
								want = e[1].(string)
							}
							if d.wopi && c.wopiCode != "" {
								want = c.wopiCode
							}
							if err := d.call(context.Background(), w, p); app.ErrorCode(err) != want {
								t.Fatalf("%v (%s), want %s", err, app.ErrorCode(err), want)
							}
						} else {
							res := d.do(w, p)
							if d.wopi {
								if res.StatusCode != c.wopi {
									t.Fatalf("WOPI: %d %s, want %d", res.StatusCode, res.Body, c.wopi)
								}
								if c.code == app.ELocked && len(res.Header.Values("X-WOPI-Lock")) != 1 {
									t.Fatalf("WOPI lock refusal without X-WOPI-Lock: %v", res.Header)
								}
							} else if e, ok := c.mount[d.name]; ok {
								webtest.Check(t, res, webtest.Scenario{Status: e[0].(int), Problem: e[1].(string)})
							} else if e, ok := c.except[d.name]; ok {
								webtest.Check(t, res, webtest.Scenario{Status: e[0].(int), Problem: e[1].(string)})
							} else {
								webtest.Check(t, res, webtest.Scenario{Status: c.status, Problem: c.code})
							}
						}
						if after := w.snapshot(t); after != before {
							t.Fatalf("a refused write changed the drive: %s → %s", before, after)
						}
						var content string
						db := openRO(t, w.s)
						defer db.Close()
						if err := db.QueryRow(`SELECT version || ':' || content_hash || ':' || name FROM drive_files WHERE id = ?`, w.f.ID).Scan(&content); err != nil {
							t.Fatal(err)
						}
						if want := fmt.Sprintf("2:%s:f.txt", w.f.ContentHash); content != want {
							t.Fatalf("f.txt is %s, want %s", content, want)
						}
					})
				}
			}
		})
	}
}

// newMatrixWorld makes the world of one cell on s, in an organisation of its
// own: ann's Box with f.txt at version 2, shared with bob for editing; the
// writer is bob when byBob. It returns what prepare made before the condition
// is applied.
func newMatrixWorld(t *testing.T, s *webtest.Server, cell int, byBob bool, prepare func(matrixWorld) prep) (matrixWorld, prep) {
	t.Helper()
	org := fmt.Sprintf("Matrix Org %d", cell)
	w := matrixWorld{s: s, ann: newDavUser(t, s, org, fmt.Sprintf("ann@cell%d.example.test", cell), "admin"),
		bob: newDavUser(t, s, org, fmt.Sprintf("bob@cell%d.example.test", cell), "member")}
	w.ann.want(201, "MKCOL", "/Box", nil, nil)
	w.ann.want(201, "PUT", "/Box/f.txt", map[string]string{"Content-Type": "text/plain"}, "v1")
	w.ann.want(204, "PUT", "/Box/f.txt", map[string]string{"Content-Type": "text/plain"}, "v2")
	w.box = w.ann.rest.list("/api/v1/drive/browse").Items[0]
	w.f = w.ann.rest.list("/api/v1/drive/browse/" + w.box.ID).Items[0]
	share(t, s, w.ann, w.box.ID, w.bob.creds.UserID, "edit")
	w.me, w.boxPath = w.ann, "/Box"
	if byBob {
		w.me, w.boxPath = w.bob, "/Shared with me/Box"
	}
	return w, prepare(w)
}

// openRO is the server's database for a test's reads: queries of one row,
// written as the stores' are (on either engine).
func openRO(t *testing.T, s *webtest.Server) roDB {
	t.Helper()
	return roDB{s}
}

type roDB struct{ s *webtest.Server }

func (r roDB) QueryRow(query string, args ...any) interface{ Scan(dest ...any) error } {
	return r.s.Main.DB.QueryRow(context.Background(), query, args...)
}

func (r roDB) Close() error { return nil }
