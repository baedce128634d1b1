package sqldb

import (
	"bytes"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// The log-gathering VFS (walvfs.go): these tests write through it and read
// through SQLite's plain unix VFS, on another connection, which sees only
// what reached the file system.

// openVFS opens one connection to the database at path through the VFS, as
// Atrium's writer does, with the extra pragmas given.
func openVFS(t *testing.T, path string, pragmas ...string) *sql.DB {
	t.Helper()
	d := dsn(path, true)
	for _, p := range pragmas {
		d += "&_pragma=" + p
	}
	db, err := sql.Open("sqlite", d)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// openPlain opens a connection through SQLite's own unix VFS.
func openPlain(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?vfs=unix&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// blob is n bytes that differ by seed.
func blob(seed, n int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%08d", seed)), n/8)
}

// insert writes rows seeds from..to-1 of n bytes each in one transaction.
func insert(t *testing.T, db *sql.DB, from, to, n int) {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < to; i++ {
		if _, err := tx.Exec(`INSERT INTO blobs (id, data) VALUES (?, ?)`, i, blob(i, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// checkRows asserts that db holds exactly rows seeds from..to-1 of n bytes each.
func checkRows(t *testing.T, db *sql.DB, from, to, n int) {
	t.Helper()
	rows, err := db.Query(`SELECT id, data FROM blobs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := from
	for rows.Next() {
		var id int
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			t.Fatal(err)
		}
		if id != want || !bytes.Equal(data, blob(id, n)) {
			t.Fatalf("row %d (%d bytes), want row %d of %d bytes", id, len(data), want, n)
		}
		want++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want != to {
		t.Fatalf("rows up to %d, want up to %d", want, to)
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
}

// A commit's frames reach the file system in a few large writes, before the
// commit returns: another connection reading through the plain unix VFS sees
// every row, a transaction larger than what one log gathers included.
// Not parallel: it compares the process's counts of writes, which the
// commits of parallel tests would swell.
func TestWALVFSCommitIsInTheFile(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows, size int
	}{
		{"a few pages", 8, 1024},
		{"larger than the gathering", 600, 4096}, // about 2.5 MiB: several flushes of walBufMax
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vfs.db")
			w := openVFS(t, path)
			r := openPlain(t, path)
			writes, flushed := walWrites.Load(), walFlushed.Load()
			insert(t, w, 0, tc.rows, tc.size)
			checkRows(t, r, 0, tc.rows, tc.size)
			// Other tests run beside this one, so only a bound holds: without
			// the gathering every write of SQLite's would be one to the file.
			if dw, df := walWrites.Load()-writes, walFlushed.Load()-flushed; df*4 > dw {
				t.Errorf("%d writes to the file system for SQLite's %d", df, dw)
			}
		})
	}
}

// With synchronous=OFF nothing syncs the log before SQLite publishes a commit:
// the barrier it asks for first writes out what is gathered.
func TestWALVFSCommitWithoutSync(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "vfs.db")
	w := openVFS(t, path, "synchronous(OFF)")
	r := openPlain(t, path)
	for i := range 5 {
		insert(t, w, i*10, i*10+10, 2048)
		checkRows(t, r, 0, i*10+10, 2048)
	}
}

// A transaction whose pages spill into the log reads them back, and when it is
// rolled back, what it gathered is written out before the log's write lock
// goes: another connection then writes the same range of the log, and must not
// find its frames overwritten later by the ones rolled back.
func TestWALVFSRollbackAfterSpill(t *testing.T) {
	// Not parallel: it reads walPending, which counts the gathered logs of
	// the whole process, and another test's writes can flush them.
	path := filepath.Join(t.TempDir(), "vfs.db")
	a := openVFS(t, path, "cache_size(10)", "cache_spill(1)") // spills after 10 pages
	b := openVFS(t, path)
	insert(t, a, 0, 10, 1024)

	tx, err := a.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1000; i < 1200; i++ {
		if _, err := tx.Exec(`INSERT INTO blobs (id, data) VALUES (?, ?)`, i, blob(i, 4096)); err != nil {
			t.Fatal(err)
		}
	}
	var total int
	if err := tx.QueryRow(`SELECT sum(length(data)) FROM blobs WHERE id >= 1000`).Scan(&total); err != nil || total != 200*4096 {
		t.Fatalf("the transaction reads back %d bytes (%v), want %d", total, err, 200*4096)
	}
	for i := 1200; i < 1300; i++ { // spills again, after the reading wrote out what it had gathered
		if _, err := tx.Exec(`INSERT INTO blobs (id, data) VALUES (?, ?)`, i, blob(i, 4096)); err != nil {
			t.Fatal(err)
		}
	}
	if walPending.Load() == 0 {
		t.Fatal("the spilled pages were not gathered: the test does not reach its case")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	insert(t, b, 10, 400, 4096) // over the range the rolled-back frames took
	for i := 400; i < 410; i++ {
		insert(t, b, i, i+1, 1024)
	}
	if _, err := a.Exec(`SELECT count(*) FROM blobs`); err != nil { // a's log file is used again
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	r := openPlain(t, path)
	rows := func(db *sql.DB) (n int) {
		if err := db.QueryRow(`SELECT count(*) FROM blobs WHERE id < 1000`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := rows(r); n != 410 {
		t.Fatalf("%d rows after reopening, want 410", n)
	}
	var check string
	if err := r.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
}
