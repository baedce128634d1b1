package sqldb

import (
	"context"
	"strings"
	"testing"
	"time"

	"atrium/app/drive"
)

// TestDriveFavoritesList: the favourites listing holds the owner's live,
// confirmed items marked favourite from every folder, folders first, and its
// page and count read the partial index drive_files_favorites.
func TestDriveFavoritesList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	s := DriveStore{DB: db}
	now := time.Now().UTC()
	trashed := now.Add(-time.Hour)
	add := func(id, owner, parent, name string, folder, fav bool, status string, trashedAt *time.Time) {
		t.Helper()
		var pid *string
		if parent != "" {
			pid = &parent
		}
		f := drive.File{ID: id, OrgID: "oa", OwnerID: owner, ParentID: pid, Name: name, IsFolder: folder, MimeType: "text/plain",
			MimeGroup: "document", Status: status, IsFavorite: fav, TrashedAt: trashedAt, CreatedAt: now, UpdatedAt: now}
		if trashedAt != nil {
			f.TrashRoot = id
		}
		if err := s.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	add("d1", "u1", "", "Deep", true, false, "active", nil)
	add("d2", "u1", "d1", "deeper", true, true, "active", nil)
	add("f1", "u1", "d2", "b note.txt", false, true, "active", nil)
	add("f2", "u1", "", "A top.txt", false, true, "active", nil)
	add("f3", "u1", "", "plain.txt", false, false, "active", nil)
	add("f4", "u1", "", "pending.txt", false, true, "pending", nil)
	add("f5", "u1", "", "binned.txt", false, true, "active", &trashed)
	add("f6", "u2", "", "theirs.txt", false, true, "active", nil)

	q := drive.Query{Kind: drive.ListFavorites, OrgID: "oa", OwnerID: "u1", SortBy: "name", Limit: 50}
	items, total, err := s.List(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range items {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ", "); total != 3 || got != "deeper, A top.txt, b note.txt" {
		t.Fatalf("favourites: %d %q", total, got)
	}

	// The plan of the page and of the count: the partial index, no scan of the drive.
	cond, args, err := listWhere(q)
	if err != nil {
		t.Fatal(err)
	}
	count, page := listQueries("f.id", cond, listOrder(q))
	for _, c := range []struct {
		sql  string
		args []any
	}{{page, append(args, 50, 0)}, {count, args}} {
		p := queryPlan(t, db, c.sql, c.args...)
		if !strings.Contains(p, "drive_files_favorites") {
			t.Errorf("%s\nplan: %s", c.sql, p)
		}
	}
}
