package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/drive"
)

// What each kind of statement the writer runs does to its folder cache.
func TestItemCacheStatementVerdicts(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	for _, c := range []struct {
		query string
		want  verdict
	}{
		{"SELECT f.id FROM drive_files f WHERE f.owner_id = ?", keepItems},
		{"  select 1", keepItems},
		{"PRAGMA data_version", keepItems},
		{"BEGIN IMMEDIATE", keepItems},
		{"SAVEPOINT grp", keepItems},
		{"RELEASE grp", keepItems},
		{"COMMIT", keepItems},
		{"ROLLBACK", forgetItems},
		{"ROLLBACK TO grp", forgetItems},
		{"INSERT INTO drive_files (organization_id, owner_id) VALUES (?, ?)", keepItems},
		{"INSERT INTO drive_files (id) VALUES (?) ON CONFLICT DO UPDATE SET name = excluded.name", forgetItems},
		{"INSERT OR REPLACE INTO drive_files (id) VALUES (?)", forgetItems},
		{"INSERT OR IGNORE INTO drive_files (id) VALUES (?)", keepItems},
		{"INSERT OR REPLACE INTO drive_versions (id) VALUES (?)", forgetItems},
		{"INSERT INTO drive_versions (id, file_id) VALUES (?, ?)", keepItems},
		{"INSERT INTO drive_seq(owner_id, seq) VALUES (?, 1) ON CONFLICT(owner_id) DO UPDATE SET seq = seq + 1 RETURNING seq", keepItems},
		{"INSERT INTO users(id, email) VALUES (?, ?)", keepItems},
		{"INSERT INTO users(id, email) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET email = excluded.email", forgetItems},
		{"INSERT INTO outbox(id, type) VALUES (?,?)", keepItems},
		{"UPDATE drive_files SET name = ?, name_key = ? WHERE id = ?", forgetItem},
		{"UPDATE drive_files SET status = ? WHERE id = ? AND status = ?", forgetItems},
		{"UPDATE drive_files SET trashed_at = ? WHERE trash_root = ?", forgetItems},
		{"UPDATE drive_files SET name = ? WHERE id = ? RETURNING seq", forgetItems},
		{"UPDATE OR REPLACE drive_seq SET seq = ? WHERE owner_id = ?", forgetItems},
		{"UPDATE drive_seq SET seq = ? WHERE owner_id = ? AND seq = ?", keepItems},
		{"UPDATE users SET first_name = ? WHERE id = ?", forgetItems},
		{`UPDATE main."drive_files" SET seq = 1`, forgetItems},
		{"DELETE FROM main.users WHERE id = ?", forgetItems},
		{"UPDATE organizations SET status = ? WHERE id = ?", forgetItems},
		{"DELETE FROM drive_uploads WHERE id = ?", keepItems},
		{"DELETE FROM drive_files WHERE id IN (SELECT value FROM json_each(?))", forgetItems},
		{"DELETE FROM users WHERE id = ?", forgetItems},
		{"DELETE FROM organizations WHERE id = ?", forgetItems},
		{"WITH x AS (SELECT 1) UPDATE drive_files SET seq = 1", forgetItems},
		{"REPLACE INTO drive_files (id) VALUES (?)", forgetItems},
		{"VACUUM", forgetItems},
		{"", forgetItems},
	} {
		if got := statementVerdict(c.query); got != c.want {
			t.Errorf("%q: verdict %d, want %d", c.query, got, c.want)
		}
	}
}

// writesDriveFiles matches a statement that writes drive_files.
var writesDriveFiles = regexp.MustCompile(`(?i)\b(update|insert\s+(or\s+\w+\s+)?into|replace\s+into|delete\s+from)\s+drive_files\b`)

// The cache's verdicts assume that writing another table never writes
// drive_files: no trigger does, and the only tables whose rows a cascade
// could carry into drive_files are those it references, whose writes forget
// everything. A migration that changes either must revisit itemCache.
func TestItemCacheNoTriggerWritesDriveFiles(t *testing.T) {
	sqliteOnly(t)
	for _, c := range []struct {
		sql   string
		write bool
	}{
		{"UPDATE drive_files SET x = 1", true},
		{"update  Drive_Files set x = 1", true},
		{"INSERT INTO drive_files VALUES (1)", true},
		{"INSERT OR REPLACE INTO drive_files VALUES (1)", true},
		{"DELETE FROM drive_files WHERE id = 1", true},
		{"REPLACE INTO drive_files VALUES (1)", true},
		{"UPDATE drive_shares SET k = (SELECT f.is_folder FROM drive_files f WHERE f.id = NEW.file_id)", false},
	} {
		if got := writesDriveFiles.MatchString(c.sql); got != c.write {
			t.Errorf("%q: writes drive_files %v, want %v", c.sql, got, c.write)
		}
	}
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	rows, err := db.rs.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'trigger'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			t.Fatal(err)
		}
		if writesDriveFiles.MatchString(sql) {
			t.Errorf("trigger %s writes drive_files: the writer's folder cache (itemCache) would miss its changes", name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var parents []string
	prows, err := db.rs.QueryContext(ctx, `SELECT DISTINCT "table" FROM pragma_foreign_key_list('drive_files') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer prows.Close()
	for prows.Next() {
		var p string
		if err := prows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		parents = append(parents, p)
	}
	if want := []string{"drive_files", "organizations", "users"}; !slices.Equal(parents, want) {
		t.Errorf("drive_files references %v, want %v: statementVerdict forgets everything on writes to exactly those", parents, want)
	}
}

// A folder found in a write transaction is read again once anything could
// have changed what the path finds: a change of a folder on the way, its
// trash, deletion, its owner's name, a rolled-back transaction that had
// found it, another connection's commit. Until then it is not read again.
func TestItemCacheFollowsChanges(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	ctx := context.Background()
	path := []string{"d1", "d2"} // lockTree: u1's d1/d2/d3/f
	update := func(id string, change func(f *drive.File)) func(t *testing.T, db *DB, s DriveStore) {
		return func(t *testing.T, db *DB, s DriveStore) {
			f, err := s.File(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			change(&f)
			if err := s.UpdateFile(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name   string
		change func(t *testing.T, db *DB, s DriveStore)
		found  bool   // whether d1/d2 is still found
		check  string // when found: the description or owner name now read
		kept   bool   // whether the cache still holds d1/d2 after the change
	}{
		{name: "the folder on the way renamed", found: false,
			change: update("d1", func(f *drive.File) { f.Name = "e1" })},
		{name: "the folder moved to the top", found: false,
			change: update("d2", func(f *drive.File) { f.ParentID = nil })},
		{name: "the folder trashed", found: false,
			change: update("d2", func(f *drive.File) { now := time.Now(); f.TrashedAt, f.TrashRoot = &now, "d2" })},
		{name: "the folder's description changed", found: true, check: "described",
			change: update("d2", func(f *drive.File) { f.Metadata.Description = "described" })},
		{name: "a file elsewhere changed", found: true, kept: true,
			change: update("f", func(f *drive.File) { f.Metadata.Description = "the file" })},
		{name: "the folder deleted", found: false,
			change: func(t *testing.T, db *DB, s DriveStore) {
				if err := s.DeleteFiles(ctx, []string{"f", "d3", "d2"}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "the owner renamed", found: true, check: "Ann One",
			change: func(t *testing.T, db *DB, s DriveStore) {
				if _, err := db.Exec(ctx, `UPDATE users SET first_name = 'Ann' WHERE id = 'u1'`); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "the writer's connection renames the folder outside a transaction", found: false,
			change: func(t *testing.T, db *DB, s DriveStore) {
				if err := db.cm.onConn(ctx, func(conn *sql.Conn) error {
					_, err := conn.ExecContext(ctx, `UPDATE drive_files SET name = 'x', name_key = 'x' WHERE id = 'd2'`)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "another connection renames the folder", found: false,
			change: func(t *testing.T, db *DB, s DriveStore) {
				other := openPlain(t, db.Path())
				if _, err := other.ExecContext(ctx, `UPDATE drive_files SET name = 'x', name_key = 'x' WHERE id = 'd2'`); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db, s := lockTree(t)
			at := func() (drive.File, error) {
				var f drive.File
				err := db.InTx(ctx, func(ctx context.Context) error {
					var err error
					f, err = s.LiveItemAt(ctx, "u1", path)
					return err
				})
				return f, err
			}
			if f, err := at(); err != nil || f.ID != "d2" {
				t.Fatalf("before: %+v, %v", f, err)
			}
			if !cached(db, "u1", path) {
				t.Fatal("d1/d2 is not kept after its first read in a transaction")
			}
			for _, id := range []string{"d1", "d2"} {
				if _, err := inTx(db, func(ctx context.Context) (drive.File, error) { return s.File(ctx, id) }); err != nil {
					t.Fatal(err)
				}
			}
			c.change(t, db, s)
			if got := cached(db, "u1", path); got != c.kept {
				t.Errorf("kept after the change: %v, want %v", got, c.kept)
			}
			// In a transaction, by path and by id, what a reader finds.
			for _, id := range []string{"d1", "d2"} {
				sameAsReader(t, "File "+id, func(ctx context.Context) (drive.File, error) { return s.File(ctx, id) }, db)
			}
			sameAsReader(t, "LiveItemAt d1/d2", func(ctx context.Context) (drive.File, error) { return s.LiveItemAt(ctx, "u1", path) }, db)
			f, err := at()
			if !c.found {
				if app.ErrorCode(err) != app.ENotFound {
					t.Fatalf("after: %+v, %v; want not found", f, err)
				}
				return
			}
			if err != nil || f.ID != "d2" {
				t.Fatalf("after: %+v, %v", f, err)
			}
			if got := f.Metadata.Description; c.check != "" && got != c.check && f.OwnerName != c.check {
				t.Fatalf("after: description %q, owner %q; want %q", got, f.OwnerName, c.check)
			}
		})
	}
}

// A folder created and found in a transaction that then rolls back is not
// found afterwards; one found by a transaction that commits is kept, and a
// caller's changes to its copy do not reach the cache.
func TestItemCacheRollback(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	ctx := context.Background()
	db, s := lockTree(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	d1 := "d1"
	failed := errors.New("the write fails after its folder")
	err := db.InTx(ctx, func(ctx context.Context) error {
		n := drive.File{ID: "n", OrgID: "oa", OwnerID: "u1", ParentID: &d1, Name: "n", IsFolder: true,
			MimeType: "inode/directory", MimeGroup: "folder", Status: drive.StatusActive, CreatedAt: now, UpdatedAt: now}
		if err := s.CreateFile(ctx, n); err != nil {
			return err
		}
		f, err := s.LiveItemAt(ctx, "u1", []string{"d1", "n"})
		if err != nil || f.ID != "n" {
			t.Errorf("in the transaction: %+v, %v", f, err)
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("InTx: %v", err)
	}
	err = db.InTx(ctx, func(ctx context.Context) error {
		f, err := s.LiveItemAt(ctx, "u1", []string{"d1", "n"})
		if app.ErrorCode(err) != app.ENotFound {
			t.Errorf("after the rollback: %+v, %v; want not found", f, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The first read keeps d1/d2, the second finds it kept: neither
	// caller's changes to its copy reach what the third finds.
	for i := range 3 {
		err = db.InTx(ctx, func(ctx context.Context) error {
			f, err := s.LiveItemAt(ctx, "u1", []string{"d1", "d2"})
			if err != nil || f.Name != "d2" || len(f.Metadata.Custom) != 0 || f.ParentID == nil || *f.ParentID != "d1" {
				t.Errorf("read %d of d1/d2: %+v, %v", i+1, f, err)
			}
			if err == nil {
				f.Name, f.Metadata.Custom["k"] = "changed by its caller", "v"
				*f.ParentID = "changed too"
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !cached(db, "u1", []string{"d1", "d2"}) {
			t.Fatalf("d1/d2 is not kept after read %d", i+1)
		}
	}
}

// inTx runs get in a write transaction, which commits whatever get finds:
// a failed transaction would empty the writer's cache.
func inTx(db *DB, get func(ctx context.Context) (drive.File, error)) (drive.File, error) {
	var f drive.File
	var getErr error
	err := db.InTx(context.Background(), func(ctx context.Context) error {
		f, getErr = get(ctx)
		return nil
	})
	if err != nil {
		return f, err
	}
	return f, getErr
}

// sameAsReader checks that get finds in a write transaction what it finds on
// a reader, outside one, where nothing is kept.
func sameAsReader(t *testing.T, what string, get func(ctx context.Context) (drive.File, error), db *DB) {
	t.Helper()
	want, wantErr := get(context.Background())
	got, err := inTx(db, get)
	if app.ErrorCode(err) != app.ErrorCode(wantErr) || (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
		t.Errorf("%s in a transaction: %+v, %v; a reader finds %+v, %v", what, got, err, want, wantErr)
	}
}

// cached reports whether the writer keeps the item at nameKeys. It asks the
// committer's goroutine, the cache's only user.
func cached(db *DB, ownerID string, nameKeys []string) bool {
	var ok bool
	_ = db.InTx(context.Background(), func(ctx context.Context) error {
		_, ok = writerItems(ctx).get(pathKey(ownerID, nameKeys))
		return nil
	})
	return ok
}

// TestItemCacheRandomChanges runs random sequences of folder changes
// (create, rename, move, trash, restore, delete, a change that rolls back,
// a group of writes in which one fails) and, after each, asks for every
// folder by path and by id in a write transaction: it must find exactly what
// a reader, which keeps nothing, finds.
func TestItemCacheRandomChanges(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			randomFolderChanges(t, seed, 120)
		})
	}
}

func randomFolderChanges(t *testing.T, seed int64, steps int) {
	ctx := context.Background()
	db, _ := contactsDB(t)
	s := DriveStore{DB: db}
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	now := time.Now().UTC().Truncate(time.Millisecond)
	var ids []string
	names := []string{"a", "b", "c"}
	newFolder := func(ctx context.Context) error {
		f := drive.File{ID: fmt.Sprintf("f%d", len(ids)), OrgID: "oa", OwnerID: "u1", Name: names[rng.IntN(len(names))],
			IsFolder: true, MimeType: "inode/directory", MimeGroup: "folder", Status: drive.StatusActive, CreatedAt: now, UpdatedAt: now}
		if len(ids) > 0 && rng.IntN(3) > 0 {
			p := ids[rng.IntN(len(ids))]
			f.ParentID = &p
		}
		err := s.CreateFile(ctx, f)
		if err == nil {
			ids = append(ids, f.ID)
		}
		return err // a name taken fails the write
	}
	change := func(ctx context.Context) error {
		if len(ids) == 0 {
			return newFolder(ctx)
		}
		f, err := s.File(ctx, ids[rng.IntN(len(ids))])
		if app.ErrorCode(err) == app.ENotFound {
			return nil // deleted
		}
		if err != nil {
			return err
		}
		switch rng.IntN(5) {
		case 0:
			f.Name = names[rng.IntN(len(names))]
		case 1:
			if p := ids[rng.IntN(len(ids))]; p != f.ID {
				f.ParentID = &p // a cycle does not matter here: lookups walk down from the root
			} else {
				f.ParentID = nil
			}
		case 2:
			t := now
			f.TrashedAt, f.TrashRoot = &t, f.ID
		case 3:
			f.TrashedAt, f.TrashRoot = nil, ""
		case 4:
			return s.DeleteFiles(ctx, []string{f.ID})
		}
		return s.UpdateFile(ctx, f) // a name taken fails the write
	}
	failed := errors.New("rolled back")
	check := func(step int) {
		t.Helper()
		for _, id := range ids {
			sameAsReader(t, fmt.Sprintf("step %d: File %s", step, id), func(ctx context.Context) (drive.File, error) { return s.File(ctx, id) }, db)
		}
		for _, a := range names {
			for _, b := range append([]string{""}, names...) {
				path := []string{a}
				if b != "" {
					path = append(path, b)
				}
				sameAsReader(t, fmt.Sprintf("step %d: LiveItemAt %v", step, path), func(ctx context.Context) (drive.File, error) {
					return s.LiveItemAt(ctx, "u1", path)
				}, db)
			}
		}
	}
	for step := range steps {
		var err error
		switch rng.IntN(4) {
		case 0:
			err = db.InTx(ctx, newFolder)
		case 1:
			err = db.InTx(ctx, change)
		case 2: // changed, read (and so kept), then rolled back
			err = db.InTx(ctx, func(ctx context.Context) error {
				if err := change(ctx); err != nil {
					return err
				}
				for _, id := range ids {
					_, _ = s.File(ctx, id)
				}
				return failed
			})
		case 3: // a group: writes together, one of them failing
			var wg sync.WaitGroup
			for i := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_ = db.InTx(ctx, func(ctx context.Context) error {
						if err := change(ctx); err != nil || i != 1 {
							return err
						}
						return failed
					})
				}()
			}
			wg.Wait()
		}
		if err != nil && !errors.Is(err, failed) && app.ErrorCode(err) == "" {
			t.Fatalf("step %d: %v", step, err)
		}
		check(step)
		if t.Failed() {
			return
		}
	}
}
