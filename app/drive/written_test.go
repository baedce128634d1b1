package drive_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/drive"
	"atrium/storage/sqldb"
)

// principal is u as the service sees a request of u's with drive scopes.
func (u user) principal() *app.Principal {
	return &app.Principal{OrgID: u.cr.OrganizationID, UserID: u.cr.UserID, Features: []string{"drive"},
		Scopes: app.NewScopes(app.ScopeDriveRead, app.ScopeDriveWrite)}
}

// A content write answers with the file as a read of it returns it, without
// reading the row back: every field, the owner's name (of the folder's owner
// when the writer is another user) and the times as stored (UTC, to the
// millisecond) included.
func TestWriteAnswersTheStoredFile(t *testing.T) {
	t.Parallel()
	w := newRaceWorld(t)
	ctx := context.Background()
	ann, bob := w.ann.principal(), w.bob.principal()
	mtime := time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.FixedZone("CET", 3600))
	cases := []struct {
		name    string
		p       *app.Principal
		req     drive.PutRequest
		created bool
	}{
		{"a new file at the top of a drive", ann, drive.PutRequest{Name: "top.txt"}, true},
		{"a new file in a folder", ann, drive.PutRequest{ParentID: w.box.ID, Name: "new.txt"}, true},
		{"a new file in a folder shared with the writer", bob, drive.PutRequest{ParentID: w.box.ID, Name: "bob's.txt"}, true},
		{"a new file with the writer's modification time", ann, drive.PutRequest{ParentID: w.box.ID, Name: "dated.txt", ModifiedAt: mtime}, true},
		{"a new version by name", ann, drive.PutRequest{ParentID: w.box.ID, Name: "f.txt"}, false},
		{"a new version by id, from the folder's guest", bob, drive.PutRequest{FileID: w.f.ID}, false},
		{"a new version with the writer's modification time", ann, drive.PutRequest{FileID: w.f.ID, ModifiedAt: mtime}, false},
		{"a new file by its folder's path", ann, drive.PutRequest{Folder: []string{"box"}, Name: "path.txt"}, true},
		{"a new file at the top by path", ann, drive.PutRequest{Folder: []string{}, Name: "top-path.txt"}, true},
		{"a new version by path", ann, drive.PutRequest{Folder: []string{"BOX"}, Name: "F.txt"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.Size, c.req.Body, c.req.MimeType = 5, strings.NewReader("bytes"), "text/plain"
			got, created, err := w.s.Main.Drive.Put(ctx, c.p, c.req)
			if err != nil || created != c.created {
				t.Fatalf("Put: created %v, %v", created, err)
			}
			read, err := w.s.Main.Drive.Detail(ctx, c.p, got.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Permission != read.Permission {
				t.Errorf("permission %q, a read says %q", got.Permission, read.Permission)
			}
			if !reflect.DeepEqual(got, read) {
				t.Errorf("Put answered\n%+v\na read returns\n%+v", got, read)
			}
			if got.OwnerName == "" || got.OwnerID != w.ann.cr.UserID {
				t.Errorf("owner %q %q, want ann's", got.OwnerID, got.OwnerName)
			}
			if !c.req.ModifiedAt.IsZero() && !got.ModifiedAt.Equal(mtime.Truncate(time.Millisecond)) {
				t.Errorf("modified %v, want %v", got.ModifiedAt, mtime)
			}
		})
	}
}

// The three-step upload's confirmation answers with the file as its detail
// shows it: a new file (its pending row made active) and, under a name in
// use, a new version of the live file.
func TestConfirmAnswersTheStoredFile(t *testing.T) {
	t.Parallel()
	w := newRaceWorld(t)
	for _, name := range []string{"fresh.txt", "f.txt"} {
		t.Run(name, func(t *testing.T) {
			id := w.bob.announceAndSend(t, w.box.ID, name, "bob's")
			var confirmed, detail map[string]any
			w.bob.rest("POST", "/api/v1/drive/"+id+"/confirm", nil).Decode(t, &confirmed)
			w.bob.rest("GET", "/api/v1/drive/"+confirmed["id"].(string)+"/detail", nil).Decode(t, &detail)
			if !reflect.DeepEqual(confirmed, detail) {
				t.Errorf("confirm answered\n%v\nthe detail is\n%v", confirmed, detail)
			}
			if confirmed["owner_name"] == "" || confirmed["status"] != "active" {
				t.Errorf("confirmed %v", confirmed)
			}
		})
	}
}

// The announcement of a three-step upload answers with the file as stored:
// the pending file it created (at the top of a drive, in a folder, in a
// folder shared with the announcer), or the live file of the name.
func TestAnnounceAnswersTheStoredFile(t *testing.T) {
	t.Parallel()
	w := newRaceWorld(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		u    user
		req  drive.UploadRequest
	}{
		{"a new file at the top of a drive", w.ann, drive.UploadRequest{Name: "top.txt", Size: 5}},
		{"a new file in a folder", w.ann, drive.UploadRequest{ParentID: w.box.ID, Name: "new.txt", Size: 5}},
		{"a new file in a folder shared with the announcer", w.bob, drive.UploadRequest{ParentID: w.box.ID, Name: "bob's.txt", Size: 5}},
		{"a name in use", w.bob, drive.UploadRequest{ParentID: w.box.ID, Name: "f.txt", Size: 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tk, err := w.s.Main.Drive.Uploads().RequestUpload(ctx, c.u.principal(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			read, err := sqldb.DriveStore{DB: w.s.Main.DB}.File(ctx, tk.File.ID)
			if err != nil {
				t.Fatal(err)
			}
			got := tk.File
			if want := map[bool]string{true: drive.PermOwner, false: drive.PermEdit}[c.u.cr.UserID == w.ann.cr.UserID]; got.Permission != want {
				t.Errorf("permission %q, want %q", got.Permission, want)
			}
			got.Permission = ""
			if !reflect.DeepEqual(got, read) {
				t.Errorf("the announcement answered\n%+v\nthe store holds\n%+v", got, read)
			}
		})
	}
}

// PutRequest.Check sees the live item of the name as the write's transaction
// does (nil when there is none), and its error refuses the write, which
// changes nothing; for a content that is not small it is asked before the
// bytes are read too.
func TestPutCheck(t *testing.T) {
	t.Parallel()
	w := newRaceWorld(t)
	ctx := context.Background()
	ann := w.ann.principal()
	refuse := app.Errorf(app.EPreconditionFailed, "refused")
	large := strings.Repeat("L", 100<<10)
	cases := []struct {
		name  string
		req   drive.PutRequest
		body  string
		sees  string // the id Check is called with ("" for nil)
		calls int
	}{
		{"by id", drive.PutRequest{FileID: w.f.ID}, "small", w.f.ID, 1},
		{"by name", drive.PutRequest{ParentID: w.box.ID, Name: "f.txt"}, "small", w.f.ID, 1},
		{"by path", drive.PutRequest{Folder: []string{"Box"}, Name: "F.TXT"}, "small", w.f.ID, 1},
		{"a new name by path", drive.PutRequest{Folder: []string{"Box"}, Name: "new.txt"}, "small", "", 1},
		{"large, by path", drive.PutRequest{Folder: []string{"Box"}, Name: "f.txt"}, large, w.f.ID, 2},
		{"large, a new name by path", drive.PutRequest{Folder: []string{"Box"}, Name: "new.txt"}, large, "", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seen []string
			c.req.Size, c.req.Body = int64(len(c.body)), strings.NewReader(c.body)
			c.req.Check = func(existing *drive.File) error {
				id := ""
				if existing != nil {
					id = existing.ID
				}
				seen = append(seen, id)
				if len(seen) < c.calls {
					return nil
				}
				return refuse
			}
			if _, _, err := w.s.Main.Drive.Put(ctx, ann, c.req); app.ErrorCode(err) != app.EPreconditionFailed {
				t.Fatalf("Put: %v, want the check's refusal", err)
			}
			if len(seen) != c.calls {
				t.Fatalf("Check called %d times, want %d", len(seen), c.calls)
			}
			for _, id := range seen {
				if id != c.sees {
					t.Errorf("Check saw %q, want %q", id, c.sees)
				}
			}
			items := w.ann.items(t, w.box.ID)
			if len(items) != 1 || items[0].Version != w.f.Version {
				t.Errorf("Box after a refused write: %+v", items)
			}
		})
	}
}
