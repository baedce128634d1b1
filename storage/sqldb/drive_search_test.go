package sqldb

import (
	"context"
	"slices"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/drive"
)

// The indexer's reads: FilesByID returns the items that exist, each once,
// with the columns File returns; DriveEventsAfter lists the items of the
// events and, of those, the ones an event created and the ones an event may
// have changed below (not a creation, a rename, a favourite or metadata).
func TestDriveSearchReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	s := DriveStore{DB: db}
	now := time.Now().UTC().Truncate(time.Millisecond)
	for _, id := range []string{"f1", "f2", "f3"} {
		f := drive.File{ID: id, OrgID: "oa", OwnerID: "u1", Name: id + ".txt", MimeType: "text/plain", MimeGroup: "document",
			Status: "active", CreatedAt: now, UpdatedAt: now, Metadata: drive.Metadata{Tags: []string{"t"}, Custom: map[string]string{}}}
		if err := s.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name string
		ids  []string
		want []string
	}{
		{"none", nil, nil},
		{"all", []string{"f1", "f2", "f3"}, []string{"f1", "f2", "f3"}},
		{"repeats and missing", []string{"f2", "gone", "f2", "f1"}, []string{"f1", "f2"}},
		{"only missing", []string{"gone"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.FilesByID(ctx, tc.ids)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, f := range got {
				ids = append(ids, f.ID)
				one, err := s.File(ctx, f.ID)
				if err != nil {
					t.Fatal(err)
				}
				if f.Name != one.Name || f.OwnerName != one.OwnerName || !f.CreatedAt.Equal(one.CreatedAt) || !slices.Equal(f.Metadata.Tags, one.Metadata.Tags) {
					t.Errorf("FilesByID's %s differs from File's: %+v, %+v", f.ID, f, one)
				}
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tc.want) {
				t.Errorf("FilesByID(%v) = %v, want %v", tc.ids, ids, tc.want)
			}
		})
	}

	o := Outbox{DB: db}
	for _, e := range []struct{ typ, file, change string }{
		{"drive.file.created", "f1", ""}, {"drive.file.updated", "f1", "moved"}, {"drive.file.created", "f2", ""},
		{"drive.file.deleted", "f3", ""}, {"organization.user.created", "", ""},
		{"drive.file.updated", "f2", "renamed"}, {"drive.file.updated", "f2", "metadata"}, {"drive.file.updated", "f2", "favorite"},
		{"drive.file.updated", "f3", "trashed"}, {"drive.file.updated", "f1", "restored"},
	} {
		data := map[string]any{"file_id": e.file}
		if e.change != "" {
			data["change"] = e.change
		}
		if err := db.InTx(ctx, func(ctx context.Context) error {
			return o.Emit(ctx, app.Event{Type: e.typ, OrgID: "oa", CreatedAt: now, Data: data})
		}); err != nil {
			t.Fatal(err)
		}
	}
	ch, last, err := s.DriveEventsAfter(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"f1", "f1", "f2", "f3", "f2", "f2", "f2", "f3", "f1"}; !slices.Equal(ch.FileIDs, want) {
		t.Errorf("FileIDs = %v, want %v", ch.FileIDs, want)
	}
	if want := []string{"f1", "f2"}; !slices.Equal(ch.Created, want) {
		t.Errorf("Created = %v, want %v", ch.Created, want)
	}
	if want := []string{"f1", "f3", "f3", "f1"}; !slices.Equal(ch.Below, want) {
		t.Errorf("Below = %v, want %v", ch.Below, want)
	}
	if last != 10 {
		t.Errorf("cursor %d, want 10", last)
	}
}
