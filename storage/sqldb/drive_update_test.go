package sqldb

import (
	"context"
	"database/sql"
	"reflect"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/drive"
)

// TestDriveUpdateFile: an update writes what changed and only that — each
// field alone reads back as written, the row counts as changed once, and an
// update that changes nothing writes nothing; an unknown item is not found.
func TestDriveUpdateFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	s := DriveStore{DB: db}
	now := time.Now().UTC().Truncate(time.Millisecond)
	folder := "d1"
	base := drive.File{ID: "f1", OrgID: "oa", OwnerID: "u1", Name: "notes.txt", MimeType: "text/plain", MimeGroup: "document",
		SizeBytes: 3, StoredBytes: 3, ContentHash: "sha256:aa", Version: 1, Status: drive.StatusActive,
		Metadata: drive.Metadata{Tags: []string{}, Custom: map[string]string{}}, Seq: 1, CreatedAt: now, UpdatedAt: now, ModifiedAt: now}
	for _, f := range []drive.File{
		{ID: folder, OrgID: "oa", OwnerID: "u1", Name: "Docs", IsFolder: true, MimeType: "inode/directory", MimeGroup: "folder",
			Status: drive.StatusActive, CreatedAt: now, UpdatedAt: now},
		base,
	} {
		if err := s.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	later := now.Add(time.Minute)
	// changes counts the rows the writer changed while fn ran, in one
	// transaction: SQLite counts them (total_changes); on PostgreSQL, the
	// rows of drive_files written (each write makes a new row version, at a
	// new ctid).
	changes := func(fn func(ctx context.Context) error) int64 {
		t.Helper()
		if db.IsPostgres() {
			var n int64
			err := db.InTx(ctx, func(ctx context.Context) error {
				var before string
				if err := db.write(ctx).QueryRowContext(ctx, `SELECT string_agg(id || ctid::text, ';') FROM drive_files`).Scan(&before); err != nil {
					return err
				}
				if err := fn(ctx); err != nil {
					return err
				}
				return db.write(ctx).QueryRowContext(ctx, `SELECT count(*) FROM drive_files
					WHERE NOT (id || ctid::text = ANY (string_to_array(?, ';')))`, before).Scan(&n)
			})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		var before, after int64
		err := db.InTx(ctx, func(ctx context.Context) error {
			if err := db.write(ctx).QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
				return err
			}
			if err := fn(ctx); err != nil {
				return err
			}
			return db.write(ctx).QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after)
		})
		if err != nil {
			t.Fatal(err)
		}
		return after - before
	}
	cur := base
	for _, c := range []struct {
		name   string
		change func(f *drive.File)
	}{
		{"name", func(f *drive.File) { f.Name = "Notes v2.txt" }},
		{"parent", func(f *drive.File) { f.ParentID = &folder }},
		{"content", func(f *drive.File) { f.SizeBytes, f.StoredBytes, f.ContentHash, f.Version = 5, 5, "sha256:bb", 2 }},
		{"mime type", func(f *drive.File) { f.MimeType, f.MimeGroup = "text/markdown", "document" }},
		{"favourite", func(f *drive.File) { f.IsFavorite = true }},
		{"metadata", func(f *drive.File) {
			f.Metadata = drive.Metadata{Description: "Q3", Tags: []string{"q3"}, Custom: map[string]string{"k": "v"}}
		}},
		{"trash", func(f *drive.File) { f.TrashedAt, f.TrashRoot, f.TrashParentID = &later, "f1", folder }},
		{"out of the trash", func(f *drive.File) { f.TrashedAt, f.TrashRoot, f.TrashParentID = nil, "", "" }},
		{"times and seq", func(f *drive.File) { f.Seq, f.UpdatedAt, f.ModifiedAt, f.LastAccessAt = 9, later, later, &later }},
		{"status", func(f *drive.File) { f.Status = drive.StatusArchived }},
		{"back to the start", func(f *drive.File) { *f = base }},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := cur
			c.change(&want)
			if n := changes(func(ctx context.Context) error { return s.UpdateFile(ctx, want) }); n != 1 {
				t.Errorf("%d rows changed, want 1", n)
			}
			got, err := s.File(ctx, "f1")
			if err != nil {
				t.Fatal(err)
			}
			got.OwnerName = ""
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read back\n%+v\nwant\n%+v", got, want)
			}
			// The same again changes nothing, and writes nothing.
			if n := changes(func(ctx context.Context) error { return s.UpdateFile(ctx, want) }); n != 0 {
				t.Errorf("the same update again changed %d rows", n)
			}
			cur = want
		})
	}
	// A new version touches the item's row and the indexes of what changed:
	// the size, the content, the sequence, the access time. Naming every
	// column rewrote all of its indexes, each a page written to the log.
	t.Run("pages", func(t *testing.T) {
		sqliteOnly(t)
		if err := db.cm.onConn(ctx, func(conn *sql.Conn) error {
			_, err := conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		next := cur
		next.SizeBytes, next.StoredBytes, next.ContentHash, next.Version, next.Seq = 7, 7, "sha256:cc", cur.Version+1, cur.Seq+1
		next.UpdatedAt = later.Add(time.Minute)
		if err := db.InTx(ctx, func(ctx context.Context) error { return s.UpdateFile(ctx, next) }); err != nil {
			t.Fatal(err)
		}
		var busy, frames, done int
		if err := db.cm.onConn(ctx, func(conn *sql.Conn) error {
			return conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &done)
		}); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d pages", frames)
		if frames > 6 {
			t.Errorf("a new version wrote %d pages to the log, want at most 6", frames)
		}
	})
	missing := base
	missing.ID = "nope"
	if err := s.UpdateFile(ctx, missing); app.ErrorCode(err) != app.ENotFound {
		t.Errorf("update of an unknown item: %v", err)
	}
}
