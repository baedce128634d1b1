package sqldb

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"atrium/app"
)

//go:embed migrations_pg/*.sql
var migrationsPG embed.FS

// pgEngine is a DB's PostgreSQL connection pool (through pgx's database/sql
// driver, so that the stores' scanning code is the same on both engines) and
// the rewritten text of each query it ran.
//
// Transactions are SERIALIZABLE: every rule that reads, checks and writes
// (quota, seats, the last admin, locks, idempotency claims) holds against
// transactions running beside it, and a transaction that PostgreSQL fails
// for that (a serialization failure or a deadlock) runs again from the start
// (InTx). A transaction nested in another is a savepoint, so that a failed
// statement the caller catches and carries on from does not end the outer
// one.
type pgEngine struct {
	pool *sql.DB
	// queries maps a query as written (SQLite's dialect, ? placeholders) to
	// its PostgreSQL text (rewrite).
	queries sync.Map
	// retries counts the transactions run again after a serialization
	// failure or a deadlock.
	retries atomic.Uint64
	// lanes queues this node's transactions of each organisation (pglanes.go).
	lanes   laneLocks
	noLanes atomic.Bool // SetWriteLanes(false)

	// What the write transactions did, for DB.WriteStats: each committed
	// transaction is its own commit; wait is the time spent in the write
	// lanes, stmt the time in the transactions' functions.
	transactions                      atomic.Uint64
	waitNanos, stmtNanos, commitNanos atomic.Int64
}

func (e *pgEngine) stats() app.WriteStats {
	n := e.transactions.Load()
	return app.WriteStats{Transactions: n, Commits: n, Wait: time.Duration(e.waitNanos.Load()),
		Statements: time.Duration(e.stmtNanos.Load()), Commit: time.Duration(e.commitNanos.Load())}
}

// pgTx is the transaction a context carries on PostgreSQL.
type pgTx struct {
	tx *sql.Tx
	// retry is set when a statement failed for a reason that a new attempt of
	// the whole transaction may not meet (serialization failure, deadlock).
	retry bool
	// savepoints numbers the nested transactions.
	savepoints int
	// outboxLocked is set once the transaction holds the outbox's lock
	// (orderEvents).
	outboxLocked bool
}

type pgTxKey struct{}

// IsPostgresURL reports whether url names a PostgreSQL database (the
// [database] url setting).
func IsPostgresURL(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// OpenPostgres connects to the PostgreSQL database at url and applies pending
// migrations under a cluster-wide lock (nodes starting together migrate
// once). It refuses, with a message an operator can act on, a malformed URL,
// a server it cannot reach or sign in to, a database holding another
// application's tables, and a schema newer than this binary's.
//
// The pool holds up to DefaultMaxConnections connections unless an option
// says otherwise (WithMaxConnections).
func OpenPostgres(ctx context.Context, url string, log *slog.Logger, opts ...PostgresOption) (*DB, error) {
	o := postgresOptions{maxConns: DefaultMaxConnections}
	for _, opt := range opts {
		opt(&o)
	}
	pool, err := pgPool(url, o.maxConns)
	if err != nil {
		return nil, err
	}
	if err := pgPing(ctx, pool, url); err != nil {
		pool.Close()
		return nil, err
	}
	if _, err := migratePG(ctx, pool, log); err != nil {
		pool.Close()
		return nil, err
	}
	db := &DB{pg: &pgEngine{pool: pool}, log: log, path: redactURL(url)}
	// A lock or a subscription may be made by any node: the hints that skip
	// the database while none exists stay on.
	db.webhookSubs.Store(true)
	db.driveLocks.Store(true)
	return db, nil
}

// DefaultMaxConnections is the size of a node's pool of PostgreSQL
// connections when none is configured ([database] max_connections).
const DefaultMaxConnections = 20

// PostgresOption adjusts OpenPostgres.
type PostgresOption func(*postgresOptions)

type postgresOptions struct {
	maxConns int
}

// WithMaxConnections bounds the node's pool to n connections (at least 2:
// the leader's claim holds one for as long as the node leads); 0 keeps
// DefaultMaxConnections.
func WithMaxConnections(n int) PostgresOption {
	return func(o *postgresOptions) {
		if n > 0 {
			o.maxConns = max(n, 2)
		}
	}
}

// pgPool opens a pool of up to maxConns connections for url without
// connecting.
func pgPool(url string, maxConns int) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database url: not a PostgreSQL connection URL (postgres://user:password@host:port/database?sslmode=...): %w", redactErr(err, url))
	}
	if cfg.Database == "" {
		return nil, errors.New("database url: names no database (postgres://user:password@host:port/DATABASE)")
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	pool := stdlib.OpenDB(*cfg)
	pool.SetMaxOpenConns(maxConns)
	pool.SetMaxIdleConns(maxConns)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	return pool, nil
}

// pgPing checks that the server answers and takes the credentials, and says
// which of the two failed.
func pgPing(ctx context.Context, pool *sql.DB, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	err := pool.PingContext(ctx)
	if err == nil {
		var version int
		if err := pool.QueryRowContext(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
			return fmt.Errorf("database: read the server's version: %w", err)
		}
		if version < 150000 {
			return fmt.Errorf("database: PostgreSQL %d.%d is too old: Atrium needs PostgreSQL 15 or later", version/10000, version%10000)
		}
		return nil
	}
	where := redactURL(url)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return fmt.Errorf("database %s: the server refused the user name or password (%s)", where, pe.Message)
		case "3D000":
			return fmt.Errorf("database %s: the database does not exist (%s); create it first (createdb)", where, pe.Message)
		}
		return fmt.Errorf("database %s: %s (SQLSTATE %s)", where, pe.Message, pe.Code)
	}
	return fmt.Errorf("database %s: cannot reach the server: %w", where, redactErr(err, url))
}

// redactURL is url without its password, for messages and logs.
func redactURL(url string) string {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return "(unparsable URL)"
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// redactErr keeps a password of url out of err's text.
func redactErr(err error, url string) error {
	cfg, perr := pgx.ParseConfig(url)
	if perr != nil || cfg.Password == "" || !strings.Contains(err.Error(), cfg.Password) {
		if perr != nil && strings.Contains(err.Error(), "@") {
			return errors.New("the URL could not be parsed")
		}
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), cfg.Password, "xxxxx"))
}

// migratePG applies the pending PostgreSQL migrations under goose's session
// lock (an advisory lock: nodes that start together migrate once).
func migratePG(ctx context.Context, pool *sql.DB, log *slog.Logger) (int, error) {
	var foreign int
	// Tables and views of the schema, but those of extensions (a DBA's
	// pg_stat_statements, say, whose views live in the schema it was
	// created in), while no Atrium migration is recorded.
	err := pool.QueryRowContext(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relname <> 'goose_db_version'
		AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
		AND to_regclass(quote_ident(current_schema()) || '.goose_db_version') IS NULL`).Scan(&foreign)
	if err != nil {
		return 0, fmt.Errorf("database: list its tables: %w", err)
	}
	if foreign > 0 {
		return 0, fmt.Errorf("database: it holds %d tables of another application (no Atrium migrations recorded): give Atrium a database of its own", foreign)
	}
	sub, err := fs.Sub(migrationsPG, "migrations_pg")
	if err != nil {
		return 0, err
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(2, 300)) // up to 10 minutes behind another node
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, pool, sub, goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker))
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil && !errors.Is(err, goose.ErrVersionNotFound) {
		return 0, fmt.Errorf("migrations: read the database's version: %w", err)
	}
	if latest := MigrationVersion(); current > latest {
		return 0, fmt.Errorf("database: its schema is at migration %d, newer than this binary's %d: run the newer Atrium, or restore a backup taken before the upgrade", current, latest)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return 0, fmt.Errorf("apply migrations: %w", err)
	}
	for _, r := range res {
		if log != nil {
			log.Info("migration applied", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
		}
	}
	return len(res), nil
}

// MigratePostgres applies pending migrations to the PostgreSQL database at
// url (atrium migrate) and returns how many were applied.
func MigratePostgres(ctx context.Context, url string, log *slog.Logger) (int, error) {
	pool, err := pgPool(url, DefaultMaxConnections)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	if err := pgPing(ctx, pool, url); err != nil {
		return 0, err
	}
	return migratePG(ctx, pool, log)
}

// pgInTx runs fn in a transaction: a savepoint of the context's transaction
// when it carries one, else a new SERIALIZABLE transaction — in the write lane
// of the principal's organisation when ctx has one (pglanes.go) — run again
// (a few times, after a short random pause) when PostgreSQL fails it for a
// serialization failure or a deadlock.
func (db *DB) pgInTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if st, ok := ctx.Value(pgTxKey{}).(*pgTx); ok {
		return db.pgSavepoint(ctx, st, fn)
	}
	if key, ok := db.writeLane(ctx); ok {
		return db.pgInLane(ctx, key, func(conn beginner) error { return db.pgAttempts(ctx, conn, fn) })
	}
	return db.pgAttempts(ctx, db.pg.pool, fn)
}

// pgAttempts runs fn in transactions begun by begin until one commits, fails
// for a reason of its own, or 100 attempts failed for conflicts.
func (db *DB) pgAttempts(ctx context.Context, begin beginner, fn func(ctx context.Context) error) error {
	const attempts = 100
	for attempt := 1; ; attempt++ {
		err := db.pgAttempt(ctx, begin, fn)
		if err == nil || !retryable(err) || attempt == attempts || ctx.Err() != nil {
			return err
		}
		db.pg.retries.Add(1)
		// Up to 1, 2, 4 ... 16 ms: the other transaction is likely done by then.
		pause := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 4)))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// errRetry marks an attempt that a statement failed for a reason that a new
// attempt may not meet, whatever fn made of that statement's error.
var errRetry = errors.New("transaction conflicted with another; run it again")

func (db *DB) pgAttempt(ctx context.Context, begin beginner, fn func(ctx context.Context) error) (err error) {
	tx, err := begin.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	st := &pgTx{tx: tx}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	t0 := time.Now()
	err = fn(context.WithValue(ctx, pgTxKey{}, st))
	db.pg.stmtNanos.Add(int64(time.Since(t0)))
	if err == nil && st.retry {
		err = errRetry
	}
	if err != nil {
		_ = tx.Rollback()
		if st.retry && !retryable(err) {
			return fmt.Errorf("%w (%w)", errRetry, err)
		}
		return err
	}
	t1 := time.Now()
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	db.pg.commitNanos.Add(int64(time.Since(t1)))
	db.pg.transactions.Add(1)
	return nil
}

// pgSavepoint runs fn inside st as a savepoint: its writes are undone when
// it fails, and the outer transaction goes on.
func (db *DB) pgSavepoint(ctx context.Context, st *pgTx, fn func(ctx context.Context) error) error {
	st.savepoints++
	name := fmt.Sprintf("sp%d", st.savepoints)
	if _, err := st.tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		st.noteErr(err)
		return fmt.Errorf("savepoint: %w", err)
	}
	err := fn(ctx)
	if err != nil {
		if _, rerr := st.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+name); rerr != nil {
			st.noteErr(rerr)
			return errors.Join(err, fmt.Errorf("roll back to savepoint: %w", rerr))
		}
		return err
	}
	if _, err := st.tx.ExecContext(ctx, "RELEASE SAVEPOINT "+name); err != nil {
		st.noteErr(err)
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// retryable reports whether err is PostgreSQL's serialization failure or
// deadlock, or an attempt marked so.
func retryable(err error) bool {
	if errors.Is(err, errRetry) {
		return true
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// noteErr marks the transaction for a new attempt when err calls for one.
func (st *pgTx) noteErr(err error) {
	if err != nil && retryable(err) {
		st.retry = true
	}
}

// pgQuerier runs the stores' queries on PostgreSQL: rewritten from SQLite's
// dialect once per query text (rewrite), with Go booleans passed as 0 and 1
// (the schema keeps SQLite's integer columns for them).
type pgQuerier struct {
	e  *pgEngine
	q  pgRunner
	st *pgTx // nil outside a transaction
}

type pgRunner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (e *pgEngine) text(query string) string {
	if v, ok := e.queries.Load(query); ok {
		return v.(string)
	}
	t := rewritePG(query)
	e.queries.Store(query, t)
	return t
}

func pgArgs(args []any) []any {
	for i, a := range args {
		switch v := a.(type) {
		case bool:
			args[i] = boolInt(v)
		case *bool:
			if v != nil {
				args[i] = boolInt(*v)
			}
		}
	}
	return args
}

func (q pgQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := q.q.ExecContext(ctx, q.e.text(query), pgArgs(args)...)
	if q.st != nil {
		q.st.noteErr(err)
	}
	return res, err
}

func (q pgQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := q.q.QueryContext(ctx, q.e.text(query), pgArgs(args)...)
	if q.st != nil {
		q.st.noteErr(err)
	}
	return rows, err
}

func (q pgQuerier) QueryRowContext(ctx context.Context, query string, args ...any) rowScanner {
	return pgRow{q.q.QueryRowContext(ctx, q.e.text(query), pgArgs(args)...), q.st}
}

// pgRow notes a failure of its query when scanned.
type pgRow struct {
	row *sql.Row
	st  *pgTx
}

func (r pgRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if r.st != nil && !errors.Is(err, sql.ErrNoRows) {
		r.st.noteErr(err)
	}
	return err
}

// pgRead is the querier of ctx's transaction, or of the pool.
func (db *DB) pgQuerier(ctx context.Context) querier {
	if st, ok := ctx.Value(pgTxKey{}).(*pgTx); ok {
		return pgQuerier{e: db.pg, q: st.tx, st: st}
	}
	return pgQuerier{e: db.pg, q: db.pg.pool}
}

// orderEvents makes the outbox's sequence numbers follow the order in which
// their transactions commit, so that a reader that has read up to an event
// never misses one numbered before it that commits after it. SQLite has one
// writer at a time, in that order already. On PostgreSQL a sequence gives
// numbers in the order asked, not committed: a transaction takes a lock of
// the outbox's, held until it ends, before its first event, so that the
// transactions that write events number them one after the other.
func (db *DB) orderEvents(ctx context.Context) error {
	st, ok := ctx.Value(pgTxKey{}).(*pgTx)
	if !ok || st.outboxLocked {
		return nil
	}
	if _, err := st.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+outboxLockKey+`)`); err != nil {
		st.noteErr(err)
		return fmt.Errorf("take the outbox's lock: %w", err)
	}
	st.outboxLocked = true
	return nil
}

// outboxLockKey is the advisory lock of orderEvents.
const outboxLockKey = "74680001"

// pgUniqueViolation reports whether err is PostgreSQL's unique violation.
func pgUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// pgNotText reports whether err is PostgreSQL's refusal of a parameter that
// is not UTF-8 text (a NUL byte, an invalid sequence).
func pgNotText(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "22021" || pe.Code == "22P05")
}

// IsPostgres reports whether db is on PostgreSQL.
func (db *DB) IsPostgres() bool { return db.pg != nil }

var _ app.TxRunner = (*DB)(nil)
