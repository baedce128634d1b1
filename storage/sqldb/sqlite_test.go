package sqldb

import (
	"bytes"
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"atrium/app"

	"github.com/pressly/goose/v3"
)

func TestMigrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atrium.db")

	// An empty database gets every migration.
	n, err := Migrate(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := fsSub()
	files, _ := fs.Glob(sub, "*.sql")
	if n == 0 || n != len(files) || MigrationVersion() < int64(n) {
		t.Fatalf("applied %d migrations, want %d (up to version %d)", n, len(files), MigrationVersion())
	}
	// An existing, migrated database gets none, and keeps its rows.
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := (Auditor{db}).Record(context.Background(), app.AuditEntry{OrgID: "o", Module: "m", Action: "a"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if n, err = Migrate(ctx, path, nil); err != nil || n != 0 {
		t.Fatalf("re-migrate applied %d: %v", n, err)
	}
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := Auditor{db}.List(ctx, "o", "", 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("rows after reopen: %v %v", got, err)
	}
	if ok, err := db.IntegrityCheck(ctx); err != nil || ok != "ok" {
		t.Fatalf("integrity %q %v", ok, err)
	}
	var mode string
	if err := db.r.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q %v", mode, err)
	}
	var fk int
	if err := db.cm.onConn(ctx, func(conn *sql.Conn) error {
		return conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk)
	}); err != nil || fk != 1 {
		t.Fatalf("foreign keys %d %v", fk, err)
	}
}

func TestTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	a, o := Auditor{db}, Outbox{db}

	// A failed transaction leaves nothing of its writes, events included.
	boom := app.Errorf(app.EConflict, "boom")
	err := db.InTx(ctx, func(ctx context.Context) error {
		if err := a.Record(ctx, app.AuditEntry{OrgID: "o", Module: "m", Action: "x"}); err != nil {
			return err
		}
		if err := o.Emit(ctx, app.Event{Type: "t", OrgID: "o"}); err != nil {
			return err
		}
		// A nested call joins the outer transaction.
		return db.InTx(ctx, func(ctx context.Context) error { return boom })
	})
	if err != boom {
		t.Fatalf("err %v", err)
	}
	if l, _ := a.List(ctx, "o", "", 10); len(l) != 0 {
		t.Fatalf("audit rows survived rollback: %v", l)
	}
	if ev, _, _ := o.Events(ctx, 0, 10); len(ev) != 0 {
		t.Fatalf("events survived rollback: %v", ev)
	}
	// A committed one keeps both, and the event id is the one given.
	err = db.InTx(ctx, func(ctx context.Context) error {
		if err := a.Record(ctx, app.AuditEntry{OrgID: "o", Module: "m", Action: "y"}); err != nil {
			return err
		}
		return o.Emit(ctx, app.Event{ID: "ev1", Type: "t", OrgID: "o", Data: map[string]any{"k": "v"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	ev, seq, err := o.Events(ctx, 0, 10)
	if err != nil || len(ev) != 1 || ev[0].ID != "ev1" || ev[0].Data["k"] != "v" || seq[0] < 1 {
		t.Fatalf("events %v %v %v", ev, seq, err)
	}
	// Emitting outside a transaction is refused: an event must commit with its change.
	if err := o.Emit(ctx, app.Event{Type: "t"}); err == nil {
		t.Fatal("emit outside a transaction accepted")
	}
	// A panic rolls back and re-panics.
	func() {
		defer func() { _ = recover() }()
		_ = db.InTx(ctx, func(ctx context.Context) error {
			_ = a.Record(ctx, app.AuditEntry{OrgID: "p", Module: "m", Action: "z"})
			panic("x")
		})
	}()
	if l, _ := a.List(ctx, "p", "", 10); len(l) != 0 {
		t.Fatal("write survived a panic")
	}
	// SQLite's reader pool refuses writes.
	if !db.IsPostgres() {
		if _, err := db.r.ExecContext(ctx, "DELETE FROM audit_log"); err == nil {
			t.Fatal("reader accepted a write")
		}
	}
}

// TestPathWithURICharacters: a data directory with # or ? opens the file named,
// not a truncated path shared with others.
func TestPathWithURICharacters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a#b?c%d")
	db, err := Open(ctx, filepath.Join(dir, "atrium.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := (Auditor{db}).Record(ctx, app.AuditEntry{OrgID: "o", Module: "m", Action: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "atrium.db")); err != nil {
		t.Fatalf("database not at the named path: %v", err)
	}
}

// TestCheckpointInBackground: a commit never copies the log into the database
// (the writer does not checkpoint); the background checkpointer does, within
// about a second, without another write; Close stops it and leaves no log.
func TestCheckpointInBackground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atrium.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Stop the checkpointer while the log is filled, to see what commits alone do.
	if err := db.cp.close(); err != nil {
		t.Fatal(err)
	}
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	before := size(path)
	if _, err := db.Exec(ctx, "CREATE TABLE filler (b BLOB)"); err != nil {
		t.Fatal(err)
	}
	for range 600 { // 600 commits of 8 KiB: past SQLite's default 1,000-page autocheckpoint
		if _, err := db.Exec(ctx, "INSERT INTO filler VALUES (randomblob(8192))"); err != nil {
			t.Fatal(err)
		}
	}
	if got := size(path); got != before {
		t.Fatalf("the database file changed from %d to %d bytes: a commit checkpointed", before, got)
	}
	if size(path+"-wal") < 4<<20 {
		t.Fatalf("the log holds %d bytes, want the 4.8 MB written", size(path+"-wal"))
	}
	if db.cp, err = startCheckpointer(path, db.cm, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for size(path) < before+4<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes 5 s later: no checkpoint", size(path))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Errorf("log left after Close: %v", err)
	}
}

// Drive items named before names were kept in NFC (NFD names, as macOS sends
// them, keyed without normalisation) are renamed to NFC and re-keyed once, so
// that a lookup in either form finds them; a name taken in NFC by a live
// sibling gets a number instead.
func TestFixupDriveNamesNFC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atrium.db")
	if _, err := Migrate(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	const nfd, nfc = "Cafe\u0301.txt", "Caf\u00e9.txt"
	rows := []struct{ id, parent, name, key string }{
		{"a", "", nfd, strings.ToLower(nfd)},                                   // stored before: NFD, old key
		{"b", "", strings.ToLower(nfc), strings.ToLower(nfc)},                  // its NFC twin, already there
		{"c", "", "Re\u0301sume\u0301", strings.ToLower("Re\u0301sume\u0301")}, // NFD, alone
		{"d", "", "plain.txt", "plain.txt"},                                    // ASCII: untouched
	}
	if _, err := raw.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := raw.ExecContext(ctx, `INSERT INTO drive_files (id, organization_id, owner_id, parent_id, name, name_key, is_folder,
			mime_type, mime_group, status, seq, created_at, updated_at) VALUES (?, 'o', 'u', NULL, ?, ?, 0, 'text/plain', 'text', 'active', 1, 0, 0)`,
			r.id, r.name, r.key); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.ExecContext(ctx, `INSERT OR IGNORE INTO pending_fixups(name) VALUES ('drive_names_nfc')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	if n, err := Migrate(ctx, path, nil); err != nil || n != 0 {
		t.Fatalf("migrate: %d %v", n, err)
	}
	raw, err = sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"a": {"Caf\u00e9 (2).txt", "caf\u00e9 (2).txt"},
		"b": {"caf\u00e9.txt", "caf\u00e9.txt"},
		"c": {"R\u00e9sum\u00e9", "r\u00e9sum\u00e9"},
		"d": {"plain.txt", "plain.txt"},
	}
	for id, w := range want {
		var name, key string
		if err := raw.QueryRowContext(ctx, `SELECT name, name_key FROM drive_files WHERE id = ?`, id).Scan(&name, &key); err != nil {
			t.Fatal(err)
		}
		if name != w[0] || key != w[1] {
			t.Errorf("item %s: name %q key %q, want %q %q", id, name, key, w[0], w[1])
		}
	}
	var pending int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM pending_fixups`).Scan(&pending); err != nil || pending != 0 {
		t.Fatalf("pending fix-ups %d %v", pending, err)
	}
}

// longLog opens a database whose log holds more than walTruncateFrames pages
// (about 40 MiB, within walKeepBytes), all of it committed after the last
// checkpoint: the background checkpointer is stopped, the test checkpoints
// by hand (newCheckpointer). frames checkpoints on the writer and reports
// the log's length in pages.
func longLog(t *testing.T) (db *DB, path string, frames func() int) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "atrium.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.cp.close(); err != nil {
		t.Fatal(err)
	}
	db.cp = nil
	if _, err := db.Exec(ctx, "CREATE TABLE filler (b BLOB)"); err != nil {
		t.Fatal(err)
	}
	for range 40 { // 40 MiB: about 10,000 pages
		if _, err := db.Exec(ctx, "INSERT INTO filler VALUES (randomblob(1 << 20))"); err != nil {
			t.Fatal(err)
		}
	}
	frames = func() int {
		var busy, log, copied int
		if err := db.cm.onConn(ctx, func(conn *sql.Conn) error {
			return conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied)
		}); err != nil {
			t.Fatal(err)
		}
		return log
	}
	return db, path, frames
}

// Each connection has the pragmas it was opened with: the driver runs a
// DSN's pragmas sorted, so a pragma given twice would leave either in force.
func TestConnectionPragmas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atrium.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type querier interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}
	direct := func(db *sql.DB) func(func(querier)) { return func(fn func(querier)) { fn(db) } }
	for _, c := range []struct {
		conn                string
		on                  func(func(querier)) // runs its argument with the connection
		busy, autoCk, cache int
	}{
		{"the writer", func(fn func(querier)) { // held by the committer
			if err := db.cm.onConn(ctx, func(conn *sql.Conn) error { fn(conn); return nil }); err != nil {
				t.Error(err)
			}
		}, 10000, 0, -2000}, // a small cache: writerCacheSize
		{"a reader", direct(db.r), 10000, 1000, -8000},
		{"the checkpointer", direct(db.cp.db), 250, 0, -8000},
	} {
		c.on(func(q querier) {
			var busy, autoCk, sync, cache int
			for pragma, v := range map[string]*int{"busy_timeout": &busy, "wal_autocheckpoint": &autoCk, "synchronous": &sync, "cache_size": &cache} {
				if err := q.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(v); err != nil {
					t.Errorf("%s: PRAGMA %s: %v", c.conn, pragma, err)
				}
			}
			if busy != c.busy || autoCk != c.autoCk || sync != 2 || cache != c.cache {
				t.Errorf("%s: busy_timeout %d, wal_autocheckpoint %d, synchronous %d, cache_size %d; want %d, %d, 2 (FULL) and %d",
					c.conn, busy, autoCk, sync, cache, c.busy, c.autoCk, c.cache)
			}
		})
	}
}

// TestCheckpointKeepsLogFile: a log past walTruncateFrames pages is started
// over by the writer's next commit once the checkpointer has asked the
// writer to catch up (no RESTART, which would hold every write while it
// waits), and that commit writes at the start of the file and leaves it its
// length (up to walKeepBytes), so that the commits after it overwrite the
// file rather than grow it.
func TestCheckpointKeepsLogFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path, frames := longLog(t)
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	full := fi.Size()
	if full < (walTruncateFrames+64)*4096 || full > walKeepBytes {
		t.Fatalf("the log is %d bytes; the test needs one past walTruncateFrames and within walKeepBytes", full)
	}
	cp, err := newCheckpointer(path, db.cm)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.close()
	if err := cp.checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if cp.catchUps != 1 || cp.restarts != 0 {
		t.Fatalf("the checkpoint asked the writer to catch up %d times and restarted %d times, want 1 and 0", cp.catchUps, cp.restarts)
	}
	if _, err := db.Exec(ctx, "DELETE FROM filler"); err != nil {
		t.Fatal(err)
	}
	if n := frames(); n >= walTruncateFrames {
		t.Fatalf("the log holds %d pages after the checkpoint and a commit: it was not started over", n)
	}
	if fi, err = os.Stat(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	if fi.Size() != full {
		t.Errorf("the log file is %d bytes after it started over, want the %d it had (journal_size_limit cut it)", fi.Size(), full)
	}
}

// TestCheckpointRestartsPinnedLog: while a reader reads a long log, the
// writer's commit cannot start it over; the next checkpoint finds the log's
// header unchanged and RESTARTs, which waits for the reader in vain (holding
// the writes for its busy timeout), so the checkpointer lets the log be for
// a tick, then asks the writer again, RESTARTs again and lets it be for two.
// Once the reader is done, the log starts over at the next commit, and a
// short log ends the holding off.
func TestCheckpointRestartsPinnedLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path, _ := longLog(t)
	conn, err := db.r.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM filler").Scan(&n); err != nil || n != 40 {
		t.Fatalf("the reader counts %d rows, %v", n, err)
	}
	cp, err := newCheckpointer(path, db.cm)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.close()
	steps := []struct {
		name               string
		before             func()
		catchUps, restarts int
		started            bool // whether the commit after it starts the log over
	}{
		{name: "a long log, read: the writer asked", catchUps: 1},
		{name: "still read: a RESTART, kept waiting", catchUps: 1, restarts: 1},
		{name: "still read: let be for a tick", catchUps: 1, restarts: 1},
		{name: "still read: the writer asked again", catchUps: 2, restarts: 1},
		{name: "still read: a RESTART again, kept waiting", catchUps: 2, restarts: 2},
		{name: "the reader done: let be, started over", before: func() { tx.Rollback() }, catchUps: 2, restarts: 2, started: true},
		{name: "a short log", catchUps: 2, restarts: 2, started: true}, // copied whole, no reader
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		t0 := time.Now()
		if err := cp.checkpoint(ctx); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		// A RESTART holds every write while it waits for the readers: it
		// gives up after its busy timeout (250 ms, once for the log's write
		// lock and once for the readers).
		if d := time.Since(t0); d > 2*time.Second {
			t.Fatalf("%s: the checkpoint took %v", s.name, d)
		}
		if cp.catchUps != s.catchUps || cp.restarts != s.restarts {
			t.Fatalf("%s: %d catch-ups and %d restarts, want %d and %d", s.name, cp.catchUps, cp.restarts, s.catchUps, s.restarts)
		}
		header := cp.walHeader()
		if _, err := db.Exec(ctx, "INSERT INTO filler VALUES (x'00')"); err != nil {
			t.Fatal(err)
		}
		if started := !bytes.Equal(header, cp.walHeader()); started != s.started {
			t.Fatalf("%s: the log started over: %v, want %v", s.name, started, s.started)
		}
	}
	if cp.holdOff != 0 || cp.idle != 0 {
		t.Errorf("after a short log: holding off %d ticks, %d left; want none", cp.holdOff, cp.idle)
	}
}

// migrationsOn opens a fresh database file as Migrate does and returns it
// with a goose provider of the embedded migrations, none applied yet: a test
// of one migration applies those before it (UpTo), writes the rows it
// carries over, and applies it. The file closes with the test.
func migrationsOn(t *testing.T) (*sql.DB, *goose.Provider) {
	t.Helper()
	raw, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "atrium.db"), true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	raw.SetMaxOpenConns(1)
	sub, _ := fsSub()
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return raw, p
}
