package drive_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"atrium/app"
	"atrium/app/drive"
	"atrium/storage/sqldb"
	"atrium/webtest"
)

// user is one user of a test server, with its REST token and app password.
type user struct {
	s  *webtest.Server
	cr webtest.Creds
}

func (u user) rest(method, path string, body any) *webtest.Response {
	return u.s.Do(webtest.Request{Method: method, Path: path, Token: u.cr.Token, Body: body})
}

func (u user) dav(method, path string, hdr map[string]string, body any) *webtest.Response {
	h := map[string]string{"Content-Type": "application/octet-stream"}
	for k, v := range hdr {
		h[k] = v
	}
	return u.s.Do(webtest.Request{Method: method, Path: "/api/v1/webdav" + path, BasicID: u.cr.Email, BasicPW: u.cr.AppPassword, Header: h, Body: body})
}

// announceAndSend runs the first two steps of a three-step upload of the
// text content as name into folder: the announcement and the PUT of the
// bytes to the presigned URL. It returns the pending file's id, to confirm.
func (u user) announceAndSend(t *testing.T, folder, name, content string) string {
	t.Helper()
	var tk struct {
		UploadURL string `json:"upload_url"`
		File      item   `json:"file"`
	}
	u.rest("POST", "/api/v1/drive/upload", map[string]any{"name": name, "parent_id": folder, "size": len(content)}).Decode(t, &tk)
	req, _ := http.NewRequest("PUT", tk.UploadURL, bytes.NewReader([]byte(content)))
	req.Header.Set("Content-Type", "text/plain")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("PUT upload: %v %v", res, err)
	}
	res.Body.Close()
	return tk.File.ID
}

type item struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version int    `json:"version"`
}

func (u user) items(t *testing.T, folderID string) []item {
	t.Helper()
	var l struct {
		Items []item `json:"items"`
	}
	u.rest("GET", strings.TrimSuffix("/api/v1/drive/browse/"+folderID, "/"), nil).Decode(t, &l)
	return l.Items
}

// raceWorld: ann's folder Box holds f.txt at version 2 ("v2"), Box is shared
// with bob for editing; bob takes his locks in the middle of ann's changes.
type raceWorld struct {
	s        *webtest.Server
	ann, bob user
	box, f   item
}

func newRaceWorld(t *testing.T) raceWorld {
	t.Helper()
	s := webtest.New(t)
	w := raceWorld{s: s, ann: user{s, s.Bootstrap("Race Org", "ann@example.test", "admin")},
		bob: user{s, s.Bootstrap("Race Org", "bob@example.test", "member")}}
	want := func(res *webtest.Response, status int) {
		t.Helper()
		if res.StatusCode != status {
			t.Fatalf("%d %s, want %d", res.StatusCode, res.Body, status)
		}
	}
	want(w.ann.dav("MKCOL", "/Box", nil, nil), 201)
	want(w.ann.dav("PUT", "/Box/f.txt", map[string]string{"Content-Type": "text/plain"}, "v1"), 201)
	want(w.ann.dav("PUT", "/Box/f.txt", map[string]string{"Content-Type": "text/plain"}, "v2"), 204)
	w.box = w.ann.items(t, "")[0]
	w.f = w.ann.items(t, w.box.ID)[0]
	want(w.ann.rest("POST", "/api/v1/drive/"+w.box.ID+"/shares", map[string]any{"user_id": w.bob.cr.UserID, "permission": "edit"}), 201)
	return w
}

// Every change checks the locks in the transaction that writes it: bob takes
// a lock after ann's request passed its early checks and before it writes
// (the service's test hook), and ann's change is refused with locked and
// changes nothing — content, versions, names, the folder's items.
func TestLockTakenBetweenCheckAndWrite(t *testing.T) {
	t.Parallel()
	type prepared = map[string]string
	cases := []struct {
		name     string
		lock     string // what bob locks: f or box
		prepare  func(t *testing.T, w raceWorld) prepared
		do       func(w raceWorld, p prepared) *webtest.Response
		gone, in bool // the change would remove f / add to Box
		received bool // ann's bytes were stored, for her upload, before the refused step
	}{
		{name: "WebDAV PUT", lock: "f",
			do: func(w raceWorld, _ prepared) *webtest.Response { return w.ann.dav("PUT", "/Box/f.txt", nil, "ann's") }},
		{name: "WebDAV PUT new", lock: "box",
			do: func(w raceWorld, _ prepared) *webtest.Response { return w.ann.dav("PUT", "/Box/n.txt", nil, "ann's") }},
		{name: "REST confirm", lock: "f", received: true,
			prepare: func(t *testing.T, w raceWorld) prepared {
				return prepared{"id": w.ann.announceAndSend(t, w.box.ID, "f.txt", "ann's")}
			},
			do: func(w raceWorld, p prepared) *webtest.Response {
				return w.ann.rest("POST", "/api/v1/drive/"+p["id"]+"/confirm", nil)
			}},
		{name: "rename", lock: "f",
			do: func(w raceWorld, _ prepared) *webtest.Response {
				return w.ann.rest("PATCH", "/api/v1/drive/"+w.f.ID+"/rename", map[string]any{"name": "g.txt"})
			}},
		{name: "move", lock: "f", gone: true,
			do: func(w raceWorld, _ prepared) *webtest.Response {
				return w.ann.rest("PATCH", "/api/v1/drive/"+w.f.ID+"/move", map[string]any{"target_folder_id": ""})
			}},
		{name: "metadata", lock: "f",
			do: func(w raceWorld, _ prepared) *webtest.Response {
				return w.ann.rest("PATCH", "/api/v1/drive/"+w.f.ID+"/metadata", map[string]any{"description": "x"})
			}},
		{name: "trash", lock: "f", gone: true,
			do: func(w raceWorld, _ prepared) *webtest.Response {
				return w.ann.rest("POST", "/api/v1/drive/"+w.f.ID+"/trash", nil)
			}},
		{name: "delete", lock: "f", gone: true,
			do: func(w raceWorld, _ prepared) *webtest.Response {
				return w.ann.rest("DELETE", "/api/v1/drive/"+w.f.ID, nil)
			}},
		{name: "create folder", lock: "box", in: true,
			do: func(w raceWorld, _ prepared) *webtest.Response {
				return w.ann.rest("POST", "/api/v1/drive/folders", map[string]any{"name": "sub", "parent_id": w.box.ID})
			}},
		{name: "copy into", lock: "box", in: true,
			do: func(w raceWorld, _ prepared) *webtest.Response {
				return w.ann.rest("POST", "/api/v1/drive/"+w.f.ID+"/copy?target_folder_id="+w.box.ID, nil)
			}},
		{name: "version restore", lock: "f",
			prepare: func(t *testing.T, w raceWorld) prepared {
				var vs []struct {
					ID      string `json:"id"`
					Version int    `json:"version"`
				}
				w.ann.rest("GET", "/api/v1/drive/"+w.f.ID+"/versions", nil).Decode(t, &vs)
				for _, v := range vs {
					if v.Version == 1 {
						return prepared{"v": v.ID}
					}
				}
				t.Fatalf("versions %+v", vs)
				return nil
			},
			do: func(w raceWorld, p prepared) *webtest.Response {
				return w.ann.rest("POST", "/api/v1/drive/"+w.f.ID+"/versions/"+p["v"]+"/restore", nil)
			}},
		{name: "TUS complete", lock: "box", in: true,
			prepare: func(t *testing.T, w raceWorld) prepared {
				meta := "filename " + base64.StdEncoding.EncodeToString([]byte("t.txt")) + ",parent_id " + base64.StdEncoding.EncodeToString([]byte(w.box.ID))
				res := w.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/", Token: w.ann.cr.Token,
					Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Length": "5", "Upload-Metadata": meta}})
				if res.StatusCode != 201 {
					t.Fatalf("tus create: %d %s", res.StatusCode, res.Body)
				}
				return prepared{"path": strings.TrimPrefix(res.Header.Get("Location"), w.s.URL)}
			},
			do: func(w raceWorld, p prepared) *webtest.Response {
				return w.s.Do(webtest.Request{Method: "PATCH", Path: p["path"], Token: w.ann.cr.Token, Body: []byte("ann's"),
					Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"}})
			}},
		{name: "link write", lock: "f",
			prepare: func(t *testing.T, w raceWorld) prepared {
				var sh struct {
					ShareLink string `json:"share_link"`
				}
				w.ann.rest("POST", "/api/v1/drive/"+w.f.ID+"/shares", map[string]any{"create_link": true, "permission": "edit"}).Decode(t, &sh)
				return prepared{"tok": sh.ShareLink[strings.LastIndex(sh.ShareLink, "/")+1:]}
			},
			do: func(w raceWorld, p prepared) *webtest.Response {
				return w.s.Do(webtest.Request{Method: "PUT", Path: "/api/v1/drive/shared-link/" + p["tok"] + "/content", Body: json.RawMessage(`"ann's"`)})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newRaceWorld(t)
			var p prepared
			if c.prepare != nil {
				p = c.prepare(t, w)
			}
			bob := &app.Principal{OrgID: w.bob.cr.OrganizationID, UserID: w.bob.cr.UserID, Features: []string{"drive"},
				Scopes: app.NewScopes(app.ScopeDriveRead, app.ScopeDriveWrite)}
			var once sync.Once
			locked := false
			drive.SetBeforeWrite(w.s.Main.Drive, func() {
				once.Do(func() {
					id := w.f.ID
					if c.lock == "box" {
						id = w.box.ID
					}
					_, err := w.s.Main.Drive.Lock(context.Background(), bob, id, drive.LockKindWebDAV, "bob", 0)
					if locked = err == nil; !locked {
						t.Logf("lock: %v", err)
					}
				})
			})
			res := c.do(w, p)
			drive.SetBeforeWrite(w.s.Main.Drive, nil)
			if !locked {
				t.Fatal("the hook did not run, or bob's LOCK failed")
			}
			webtest.Check(t, res, webtest.Scenario{Status: 423, Problem: "locked"})
			if g := w.ann.dav("GET", "/Box/f.txt", nil, nil); g.StatusCode != 200 || string(g.Body) != "v2" {
				t.Fatalf("f.txt: %d %q", g.StatusCode, g.Body)
			}
			items := w.ann.items(t, w.box.ID)
			if len(items) != 1 || items[0].Name != "f.txt" || items[0].Version != 2 {
				t.Fatalf("Box holds %+v", items)
			}
			if n := len(w.ann.items(t, "")); n != 1 {
				t.Fatalf("the root holds %d items", n)
			}
			if tr := w.ann.rest("GET", "/api/v1/drive/trash", nil); strings.Contains(string(tr.Body), `"f.txt"`) {
				t.Fatalf("trash %s", tr.Body)
			}
			// The refused bytes, small, were to commit with the write: they did not.
			sum := sha256.Sum256([]byte("ann's"))
			if ok, err := (sqldb.SmallBlobs{DB: w.s.Main.DB}).Exists(context.Background(), hex.EncodeToString(sum[:])); err != nil || ok != c.received {
				t.Fatalf("the refused content is stored: %v %v", ok, err)
			}
		})
	}
}
