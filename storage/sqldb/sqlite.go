// Package sqldb implements Atrium's stores on an SQL database: the embedded SQLite
// (modernc.org/sqlite, pure Go): one writer connection, a pool of readers, WAL,
// foreign keys, and numbered migrations embedded in the binary.
package sqldb

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"atrium/app"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open Atrium database.
type DB struct {
	path string
	// w is the writer's pool of one connection, which the committer holds
	// (writerConn); r is the reader pool, whose queries rs runs through cached
	// prepared statements.
	w, r  *sql.DB
	rs    *stmtDB
	Clock app.Clock
	log   *slog.Logger // nil: slow transactions are not logged
	cp    *checkpointer
	cm    *committer
	// webhookSubs is set when a webhook subscription may exist: at Open when
	// one does, and by every subscription created through this DB (before its
	// insert). It is never cleared. While it is unset an event has no
	// deliveries to fan out, and Emit skips building their body and the
	// fan-out's statement. Subscriptions are created only by the server's
	// webhooks service, so another process on the file (a CLI command) learns
	// of one created after it opened only when it opens again.
	webhookSubs atomic.Bool
	// driveLocks is set when a drive lock may exist: at Open when the table
	// holds any lock (live or expired), and by AddLock, in its transaction,
	// before its insert. It is cleared by the committer after a commit that
	// deleted locks (an unlock, the expired ones' sweep, a deleted user's
	// drive) when the table holds none at its end (noteLocksGone). While it
	// is unset the lock checks that every write
	// makes (LocksOn, LocksOnFiles) find none without asking SQLite. Locks are
	// taken only by the server (WebDAV LOCK, the editor), never by a command
	// that opens the file beside it.
	driveLocks atomic.Bool
	// seqs is each drive owner's change sequence as this DB last wrote it
	// (NextSeq): a hint, checked by the next write of it.
	seqs seqHints
	// pg is set when the database is PostgreSQL (OpenPostgres); w, r, rs, cm
	// and cp are then unset.
	pg *pgEngine
}

var _ app.TxRunner = (*DB)(nil)

// Open opens (creating when absent) the database file at path and applies pending
// migrations.
func Open(ctx context.Context, path string, log *slog.Logger) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create database dir: %w", err)
	}
	if _, err := Migrate(ctx, path, log); err != nil {
		return nil, err
	}
	// The writer never checkpoints: see checkpointer. Its page cache is a
	// quarter of a reader's (writerCacheSize).
	w, err := pool(dsn(path, true, "wal_autocheckpoint(0)", writerCacheSize), 1)
	if err != nil {
		return nil, fmt.Errorf("open database writer: %w", err)
	}
	r, err := pool(dsn(path, false), max(4, runtime.GOMAXPROCS(0)*2))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open database readers: %w", err)
	}
	db := &DB{path: path, w: w, r: r, rs: newStmtDB(r), log: log}
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	// The hints of what may exist (webhookSubs, driveLocks), in one read.
	var subs, locks bool
	if err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_subscriptions),
		EXISTS (SELECT 1 FROM drive_locks)`).Scan(&subs, &locks); err != nil {
		db.Close()
		return nil, fmt.Errorf("read webhook subscriptions and drive locks: %w", err)
	}
	db.webhookSubs.Store(subs)
	db.driveLocks.Store(locks)
	if db.cm, err = startCommitter(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database writer: %w", err)
	}
	if db.cp, err = startCheckpointer(path, db.cm, log); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// writerCacheSize is the writer's page cache: 2 MB, about 500 pages, which
// hold the upper levels of every b-tree a write touches. A larger cache costs
// the writer at every commit: when a b-tree page splits, SQLite sorts the new
// pages by number, swapping two through a temporary number past the end of
// the file (the lock page's, 262,145 with 4 KiB pages), and the page cache
// then takes that for its largest page number; the commit's end, which drops
// cached pages past the end of the database, scans the cache's whole hash
// table to find them (modernc.org/sqlite 1.60, SQLite 3.53; seen in a live
// profile of small PUTs: 85-93% of the commits, 3.8% of the server's CPU, with
// 8 MB and a table of 2,048 slots). With 2 MB the table has 512 slots:
// 10,000 WebDAV PUTs took 4.30-4.64 s against 4.50-4.74 s in four alternating
// pairs (faster in three). Transactions larger than the cache spill their
// pages to the log before their commit, as they would past any size.
const writerCacheSize = "cache_size(-2000)"

// pool opens a pool of n connections that are kept open.
func pool(dsn string, n int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxLifetime(0)
	return db, nil
}

func dsn(path string, writer bool, pragmas ...string) string {
	set := []string{
		"busy_timeout(10000)",
		"foreign_keys(1)",
		"journal_mode(WAL)",
		"synchronous(FULL)",
		"temp_store(MEMORY)",
		fmt.Sprintf("journal_size_limit(%d)", walKeepBytes), // what a reset of the log leaves of its file
		// Each connection has its own page cache, so the bound is per connection (the
		// writer's is smaller: writerCacheSize); a reader's holds the pages of one
		// large listing (a WebDAV PROPFIND of 10,000 files reads some 1,200 pages,
		// which 4 MiB could not hold: each repeat read them all again). A commit
		// empties the readers' caches (SQLite starts a reader afresh when the log
		// changed), so they fill only while the database is read, not written.
		"cache_size(-8000)",
	}
	// A pragma of the caller's replaces the default of the same name: the
	// driver runs the _pragma values sorted, not in their order, so two of one
	// name would leave either in force.
	for _, p := range pragmas {
		name, _, _ := strings.Cut(p, "(")
		i := slices.IndexFunc(set, func(d string) bool { return strings.HasPrefix(d, name+"(") })
		if i < 0 {
			set = append(set, p)
		} else {
			set[i] = p
		}
	}
	q := url.Values{}
	for _, p := range set {
		q.Add("_pragma", p)
	}
	if writer {
		q.Add("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	if registerWALVFS() == nil {
		q.Add("vfs", walVFSName)
	}
	return fileURI(path, q)
}

// Migrate applies pending migrations to the database at path and returns how many
// were applied. Each migration runs in its own transaction.
func Migrate(ctx context.Context, path string, log *slog.Logger) (int, error) {
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return 0, fmt.Errorf("open database for migrations: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	sub, _ := fsSub()
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return 0, fmt.Errorf("apply migrations: %w", err)
	}
	for _, r := range res {
		if log != nil {
			log.Info("migration applied", "version", r.Source.Version, "file", filepath.Base(r.Source.Path), "duration", r.Duration)
		}
	}
	if err := runFixups(ctx, db, log); err != nil {
		return len(res), err
	}
	return len(res), nil
}

// MigrationVersion returns the highest migration version embedded in the binary.
func MigrationVersion() int64 {
	sub, _ := fsSub()
	entries, _ := migrationsList(sub)
	return entries
}

// Ping checks that both the writer and the readers answer: the writer's
// connection once the committer holds it, when it is free.
func (db *DB) Ping(ctx context.Context) error {
	if db.pg != nil {
		if err := db.pg.pool.PingContext(ctx); err != nil {
			return fmt.Errorf("ping database: %w", err)
		}
		return nil
	}
	ping := db.w.PingContext
	if db.cm != nil {
		ping = func(ctx context.Context) error {
			return db.cm.onConn(ctx, func(conn *sql.Conn) error { return conn.PingContext(context.Background()) })
		}
	}
	if err := ping(ctx); err != nil {
		return fmt.Errorf("ping database writer: %w", err)
	}
	if err := db.r.PingContext(ctx); err != nil {
		return fmt.Errorf("ping database readers: %w", err)
	}
	return nil
}

// Close closes the connections; the WAL is checkpointed by SQLite on the last close.
func (db *DB) Close() error {
	if db.pg != nil {
		return db.pg.pool.Close()
	}
	var cpErr error
	if db.cp != nil { // first: it may be waiting for the writer
		cpErr = db.cp.close()
	}
	if db.cm != nil {
		db.cm.close()
	}
	db.rs.close()
	return errors.Join(cpErr, db.r.Close(), db.w.Close())
}

// Path is the database file (on PostgreSQL, its URL without the password).
func (db *DB) Path() string { return db.path }

// WriteStats reports what the writer did since the database opened: how
// many transactions and commits, and where its time went (see committer).
func (db *DB) WriteStats() app.WriteStats {
	if db.pg != nil {
		return db.pg.stats()
	}
	return db.cm.stats()
}

type txKey struct{}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) rowScanner
}

// rowScanner is the one row of QueryRowContext (a *sql.Row, or a query
// outside a transaction that runs on the writer when scanned: grouped).
type rowScanner interface {
	Scan(dest ...any) error
}

// InTx runs fn in a write transaction carried by the context; a nested call joins
// it. The transaction commits when fn returns nil and rolls back otherwise (or on
// panic, which InTx then raises again). Transactions that arrive together share
// one commit (see committer); InTx returns once the change is durable.
func (db *DB) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if db.pg != nil {
		return db.pgInTx(ctx, fn)
	}
	if _, ok := ctx.Value(txKey{}).(*txState); ok {
		return fn(ctx)
	}
	return db.cm.run(ctx, fn)
}

// callers names n frames of the stack from skip (file:line, innermost first).
func callers(skip, n int) string {
	pc := make([]uintptr, n)
	return framesOf(pc[:runtime.Callers(skip+1, pc)])
}

// framesOf names the frames of pc (file:line, innermost first).
func framesOf(pc []uintptr) string {
	frames := runtime.CallersFrames(pc)
	var b strings.Builder
	for {
		f, more := frames.Next()
		if f.PC == 0 && f.File == "" {
			return b.String()
		}
		if b.Len() > 0 {
			b.WriteString(" < ")
		}
		fmt.Fprintf(&b, "%s:%d", filepath.Base(f.File), f.Line)
		if !more {
			return b.String()
		}
	}
}

// slowTx is how long a write transaction may hold the writer before it is logged.
const slowTx = 100 * time.Millisecond

// InTransaction reports whether ctx carries a transaction.
func InTransaction(ctx context.Context) bool {
	_, ok := ctx.Value(txKey{}).(*txState)
	_, pg := ctx.Value(pgTxKey{}).(*pgTx)
	return ok || pg
}

// read returns the transaction of ctx, or the reader pool.
func (db *DB) read(ctx context.Context) querier {
	if db.pg != nil {
		return db.pgQuerier(ctx)
	}
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		return st.w.stmts
	}
	return db.rs
}

// write returns the transaction of ctx; outside one, a statement is its own
// transaction, committed through the committer like InTx's, so that it shares
// the wait for the disk with the writes that arrive with it (group commit).
func (db *DB) write(ctx context.Context) querier {
	if db.pg != nil {
		return db.pgQuerier(ctx)
	}
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		return st.w.stmts
	}
	return grouped{db}
}

// grouped runs each statement as a transaction of its own through the
// committer: an Exec when called, a QueryRow (a write with RETURNING) when its
// row is scanned. A query of many rows on the writer runs in InTx: its rows
// would outlive the transaction.
type grouped struct{ db *DB }

func (g grouped) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := g.db.cm.run(ctx, func(ctx context.Context) error {
		var err error
		res, err = g.db.write(ctx).ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

func (g grouped) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return nil, errors.New("sqlite: a query of many rows on the database writer runs in a transaction (InTx)")
}

func (g grouped) QueryRowContext(ctx context.Context, query string, args ...any) rowScanner {
	return groupedRow{g.db, ctx, query, args}
}

// groupedRow is a row of a query on the writer outside a transaction: the
// query runs, and its row is scanned, in a transaction of its own.
type groupedRow struct {
	db    *DB
	ctx   context.Context
	query string
	args  []any
}

func (r groupedRow) Scan(dest ...any) error {
	return r.db.cm.run(r.ctx, func(ctx context.Context) error {
		return r.db.write(ctx).QueryRowContext(ctx, r.query, r.args...).Scan(dest...)
	})
}

// now is the database's clock.
func (db *DB) now() time.Time { return db.Clock.Now() }

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func msPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func fromMSPtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

// mapErr turns driver errors into domain errors: no rows → not_found, a unique or
// primary key violation → conflict.
func mapErr(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return app.Errorf(app.ENotFound, "The %s was not found.", what)
	}
	if pgUniqueViolation(err) {
		return app.Errorf(app.EConflict, "A %s with these values already exists.", what)
	}
	if pgNotText(err) {
		// A value that is not UTF-8 text (a NUL, a stray byte) can be
		// neither stored nor found: what SQLite, which compares bytes,
		// answers for a lookup of it.
		return app.Errorf(app.ENotFound, "The %s was not found.", what)
	}
	var se *sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3lib.SQLITE_CONSTRAINT_UNIQUE, sqlite3lib.SQLITE_CONSTRAINT_PRIMARYKEY:
			return app.Errorf(app.EConflict, "A %s with these values already exists.", what)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// IntegrityCheck runs PRAGMA integrity_check and returns its answer ("ok" when sound).
func (db *DB) IntegrityCheck(ctx context.Context) (string, error) {
	if db.pg != nil {
		return "ok", db.Ping(ctx)
	}
	rows, err := db.r.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", err
		}
		out = append(out, s)
	}
	return strings.Join(out, "; "), rows.Err()
}

// QueryRow runs a query of one row outside any transaction, written as the
// stores' are (SQLite's dialect, rewritten for PostgreSQL): operator tools
// and tests.
func (db *DB) QueryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error } {
	return db.read(ctx).QueryRowContext(ctx, query, args...)
}

// Exec runs one statement on the writer (operator tools and tests).
func (db *DB) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return db.write(ctx).ExecContext(ctx, query, args...)
}
