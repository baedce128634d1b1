package sqldb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"atrium/app/drive"
)

// Small contents commit with the transaction they are put in, or not at all;
// Data, Exists, Delete and Walk see what committed, Walk a page at a time.
func TestSmallBlobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atrium.db")
	if _, err := Migrate(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sb := SmallBlobs{db}
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	hash := func(i int) string { return fmt.Sprintf("%064x", i) }

	refused := errors.New("refused")
	if err := db.InTx(ctx, func(ctx context.Context) error {
		if err := sb.Put(ctx, hash(1), []byte("rolled back"), at); err != nil {
			return err
		}
		return refused
	}); !errors.Is(err, refused) {
		t.Fatalf("InTx: %v", err)
	}
	if ok, err := sb.Exists(ctx, hash(1)); err != nil || ok {
		t.Fatalf("a rolled-back put is stored: %v %v", ok, err)
	}
	if _, err := sb.Data(ctx, hash(1)); !errors.Is(err, ErrNoSmallBlob) {
		t.Fatalf("Data of a missing content: %v", err)
	}

	if err := db.InTx(ctx, func(ctx context.Context) error {
		for i := range 1001 { // more than a page of Walk
			if err := sb.Put(ctx, hash(i), []byte(fmt.Sprint("content ", i)), at.Add(time.Duration(i)*time.Millisecond)); err != nil {
				return err
			}
		}
		// The same hash again keeps the first row (the same hash is the same bytes).
		return sb.Put(ctx, hash(7), []byte("other"), at)
	}); err != nil {
		t.Fatal(err)
	}
	if err := sb.Put(ctx, hash(2000), nil, at); err != nil { // the empty content, outside a transaction
		t.Fatal(err)
	}
	for _, c := range []struct {
		hash, want string
	}{{hash(0), "content 0"}, {hash(7), "content 7"}, {hash(1000), "content 1000"}, {hash(2000), ""}} {
		if got, err := sb.Data(ctx, c.hash); err != nil || got == nil || string(got) != c.want {
			t.Errorf("Data(%s) = %q %v, want %q", c.hash[56:], got, err, c.want)
		}
	}
	if err := sb.Delete(ctx, hash(5)); err != nil {
		t.Fatal(err)
	}
	if err := sb.Delete(ctx, hash(5)); err != nil {
		t.Fatalf("deleting a missing content: %v", err)
	}
	seen := map[string]time.Time{}
	prev := ""
	if err := sb.Walk(ctx, func(h string, written time.Time) error {
		if h <= prev {
			t.Fatalf("Walk: %s after %s", h, prev)
		}
		prev, seen[h] = h, written
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1001 {
		t.Errorf("Walk saw %d contents, want 1001", len(seen))
	}
	if _, ok := seen[hash(5)]; ok {
		t.Error("Walk saw a deleted content")
	}
	if got := seen[hash(3)]; !got.Equal(at.Add(3 * time.Millisecond)) {
		t.Errorf("Walk: hash 3 written at %v", got)
	}
	stop := errors.New("stop")
	n := 0
	if err := sb.Walk(ctx, func(string, time.Time) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("Walk returns fn's error: %v after %d", err, n)
	}
}

// A small content's digests, recorded right after it is put in one
// transaction (as every write of a small file does), go into its row rather
// than into drive_digests; recorded later, or for a row already stored, they
// are found all the same: Digests reads both, and maintenance
// (VersionsWithoutDigests) asks for neither. A write that fails after its
// put leaves neither row.
func TestSmallBlobDigests(t *testing.T) {
	sqliteOnly(t) // where SQLite's writer keeps a small content's digests
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	sb, ds := SmallBlobs{db}, DriveStore{DB: db}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	hash := func(i int) string { return fmt.Sprintf("%064x", i) }
	dg := func(i int) drive.Digests {
		return drive.Digests{SHA1: fmt.Sprintf("%040x", i), MD5: fmt.Sprintf("%032x", i)}
	}
	where := func(i int) string {
		t.Helper()
		var inRow, inTable int
		if err := db.read(ctx).QueryRowContext(ctx, `SELECT
				(SELECT count(*) FROM drive_small_blobs WHERE hash = ?1 AND sha1 IS NOT NULL),
				(SELECT count(*) FROM drive_digests WHERE content_hash = 'sha256:' || ?1)`, hash(i)).Scan(&inRow, &inTable); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("row %d, drive_digests %d", inRow, inTable)
	}
	tx := func(fn func(ctx context.Context) error) error { return db.InTx(ctx, fn) }
	// The steps of a write's transaction.
	type step func(ctx context.Context) error
	put := func(i int) step {
		return func(ctx context.Context) error { return sb.Put(ctx, hash(i), []byte(fmt.Sprint("content ", i)), at) }
	}
	digests := func(i int) step {
		return func(ctx context.Context) error { return ds.AddDigests(ctx, "sha256:"+hash(i), dg(i)) }
	}
	read := func(ctx context.Context) error { _, _, err := ds.OrgUsage(ctx, "oa"); return err }
	refused := errors.New("refused")
	refuse := func(context.Context) error { return refused }
	cases := []struct {
		name  string
		i     int
		steps []step
		want  string // where the digests are
		err   error
	}{
		{"recorded right after the put", 1, []step{put(1), digests(1)}, "row 1, drive_digests 0", nil},
		{"another statement in between", 2, []step{put(2), read, digests(2)}, "row 0, drive_digests 1", nil},
		{"another content's digests in between", 3, []step{put(3), digests(30), digests(3)}, "row 0, drive_digests 1", nil},
		{"the same content again, its row without digests", 4, []step{put(4), digests(4)}, "row 1, drive_digests 0", nil},
		{"a write that fails after its put", 5, []step{put(5), digests(5), refuse}, "row 0, drive_digests 0", refused},
		{"a write that fails right after its put", 6, []step{put(6), refuse}, "row 0, drive_digests 0", refused},
		{"a put that nothing follows", 7, []step{put(7)}, "row 0, drive_digests 0", nil},
	}
	// Content 4 is stored before, without digests (outside a transaction).
	if err := put(4)(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		err := tx(func(ctx context.Context) error {
			for _, s := range c.steps {
				if err := s(ctx); err != nil {
					return err
				}
			}
			return nil
		})
		if !errors.Is(err, c.err) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.err)
		}
		if got := where(c.i); got != c.want {
			t.Errorf("%s: digests in %s, want %s", c.name, got, c.want)
		}
		stored, err := sb.Exists(ctx, hash(c.i))
		if err != nil || stored != (c.err == nil) {
			t.Errorf("%s: content stored %v (%v), want %v", c.name, stored, err, c.err == nil)
		}
	}
	var hashes []string
	for _, i := range []int{1, 2, 3, 4, 5, 7, 30} {
		hashes = append(hashes, "sha256:"+hash(i))
	}
	got, err := ds.Digests(ctx, hashes)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 2, 3, 4, 30} {
		if d := got["sha256:"+hash(i)]; d != dg(i) {
			t.Errorf("Digests of %d: %+v, want %+v", i, d, dg(i))
		}
	}
	for _, i := range []int{5, 7} {
		if d, ok := got["sha256:"+hash(i)]; ok {
			t.Errorf("Digests of %d: %+v, want none", i, d)
		}
	}
	// Maintenance computes the digests of versions without any: of those
	// here, only the content stored without them.
	now := time.Now()
	folder := drive.File{ID: "df", OrgID: "oa", OwnerID: "u1", Name: "f", IsFolder: true, MimeType: "inode/directory", MimeGroup: "folder",
		Status: "active", CreatedAt: now, UpdatedAt: now}
	if err := ds.CreateFile(ctx, folder); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 2, 4, 7} {
		id := fmt.Sprintf("f%d", i)
		f := drive.File{ID: id, OrgID: "oa", OwnerID: "u1", ParentID: &folder.ID, Name: id, MimeType: "text/plain", MimeGroup: "document",
			Status: "active", ContentHash: "sha256:" + hash(i), Version: 1, CreatedAt: now, UpdatedAt: now}
		if err := tx(func(ctx context.Context) error {
			if err := ds.CreateFile(ctx, f); err != nil {
				return err
			}
			return ds.AddVersion(ctx, drive.Version{ID: "v" + id, FileID: id, Version: 1, ContentHash: f.ContentHash, MimeType: f.MimeType, CreatedBy: "u1", CreatedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
	}
	missing, _, err := ds.VersionsWithoutDigests(ctx, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sha256:" + hash(7)}; fmt.Sprint(missing) != fmt.Sprint(want) {
		t.Errorf("versions without digests: %v, want %v", missing, want)
	}
}

// TestSmallBlobDigestsMigration: migration 00026 rebuilds drive_small_blobs
// with the digest columns before the bytes, keeping every content; going
// down, the digests kept in them move to drive_digests.
func TestSmallBlobDigestsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw, p := migrationsOn(t)
	if _, err := p.UpTo(ctx, 25); err != nil {
		t.Fatal(err)
	}
	h := func(i int) string { return fmt.Sprintf("%064x", i) }
	big := make([]byte, 60<<10)
	for i := range big {
		big[i] = byte(i)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO drive_small_blobs (hash, data, created_at) VALUES (?, x'00', 1), (?, ?, 2)`, h(1), h(2), big); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 26); err != nil {
		t.Fatal(err)
	}
	var cols string
	if err := raw.QueryRowContext(ctx, `SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('drive_small_blobs') ORDER BY cid)`).Scan(&cols); err != nil || cols != "hash,created_at,sha1,md5,data" {
		t.Fatalf("columns after 00026: %q %v", cols, err)
	}
	var data []byte
	var at int64
	if err := raw.QueryRowContext(ctx, `SELECT data, created_at FROM drive_small_blobs WHERE hash = ?`, h(2)).Scan(&data, &at); err != nil || !bytes.Equal(data, big) || at != 2 {
		t.Fatalf("a content after 00026: %d bytes, at %d, %v", len(data), at, err)
	}
	if _, err := raw.ExecContext(ctx, `UPDATE drive_small_blobs SET sha1 = 's1', md5 = 'm5' WHERE hash = ?`, h(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 25); err != nil {
		t.Fatal(err)
	}
	var sha1, md5 string
	if err := raw.QueryRowContext(ctx, `SELECT sha1, md5 FROM drive_digests WHERE content_hash = ?`, "sha256:"+h(1)).Scan(&sha1, &md5); err != nil || sha1 != "s1" || md5 != "m5" {
		t.Fatalf("after going down: %q %q %v", sha1, md5, err)
	}
	if err := raw.QueryRowContext(ctx, `SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('drive_small_blobs') ORDER BY cid)`).Scan(&cols); err != nil || cols != "hash,data,created_at" {
		t.Fatalf("columns after going down: %q %v", cols, err)
	}
	if err := raw.QueryRowContext(ctx, `SELECT data FROM drive_small_blobs WHERE hash = ?`, h(2)).Scan(&data); err != nil || !bytes.Equal(data, big) {
		t.Fatalf("a content after going down: %d bytes, %v", len(data), err)
	}
}

// A small content held for the writer's next statement that cannot be
// written there fails its transaction: nothing of it stays.
func TestSmallBlobPendingFails(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	sb, ds := SmallBlobs{db}, DriveStore{DB: db}
	if _, err := db.Exec(ctx, `CREATE TRIGGER small_refused BEFORE INSERT ON drive_small_blobs WHEN new.data = x'626164'
		BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	hash := fmt.Sprintf("%064x", 1)
	err := db.InTx(ctx, func(ctx context.Context) error {
		if err := sb.Put(ctx, hash, []byte("bad"), time.Now()); err != nil {
			return err
		}
		return ds.AddUsage(ctx, "oa", "u1", "document", 3, 1) // kept; the commit would write it
	})
	if err == nil || !strings.Contains(err.Error(), "refused by the test") {
		t.Fatalf("InTx: %v, want the refusal", err)
	}
	err = db.InTx(ctx, func(ctx context.Context) error {
		if err := sb.Put(ctx, hash, []byte("bad"), time.Now()); err != nil {
			return err
		}
		_, _, err := ds.OrgUsage(ctx, "oa") // a statement: the content is written before it
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "refused by the test") {
		t.Fatalf("InTx with a statement after the put: %v, want the refusal", err)
	}
	if ok, err := sb.Exists(ctx, hash); err != nil || ok {
		t.Errorf("content stored: %v (%v)", ok, err)
	}
	if b, n, err := ds.OrgUsage(ctx, "oa"); err != nil || b != 0 || n != 0 {
		t.Errorf("counters %d bytes %d files (%v), want none", b, n, err)
	}
}
