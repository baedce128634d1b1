package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// maxCachedStatements bounds the statement cache; queries beyond it run
// unprepared (dynamic SQL with many shapes must not grow memory without end).
const maxCachedStatements = 512

// stmtDB runs queries through prepared statements kept per SQL text: the pure-Go
// driver has no statement cache, and parsing a query costs more than running a
// point lookup. On the reader pool (a *sql.DB) database/sql re-prepares a
// statement lazily on each pooled connection it runs on; on the writer's one
// connection (a *sql.Conn, see writerConn) a statement is prepared once.
type stmtDB struct {
	db runner
	// onStatement, when set (on the writer), is told of each statement
	// before it runs (the writer's folder cache, itemCache).
	onStatement func(query string, args []any)

	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

// runner is what stmtDB runs on: *sql.DB or *sql.Conn.
type runner interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func newStmtDB(db runner) *stmtDB { return &stmtDB{db: db, stmts: map[string]*sql.Stmt{}} }

// cached returns the prepared statement for query if there is one.
func (s *stmtDB) cached(query string) *sql.Stmt {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stmts[query]
}

// stmt returns the prepared statement for query, preparing it when absent; nil
// when the cache is full or preparing failed (the caller then runs the query
// directly, which reports the error).
func (s *stmtDB) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := s.cached(query); st != nil {
		return st
	}
	s.mu.RLock()
	full := len(s.stmts) >= maxCachedStatements
	s.mu.RUnlock()
	if full {
		return nil
	}
	// Prepare without holding the lock: on the pool it waits for a connection.
	st, err := s.db.PrepareContext(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.stmts[query]; prev != nil {
		st.Close()
		return prev
	}
	s.stmts[query] = st
	return st
}

func (s *stmtDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s.onStatement != nil {
		s.onStatement(query, args)
	}
	if st := s.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return s.db.ExecContext(ctx, query, args...)
}

func (s *stmtDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s.onStatement != nil {
		s.onStatement(query, args)
	}
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, query, args...)
}

func (s *stmtDB) QueryRowContext(ctx context.Context, query string, args ...any) rowScanner {
	if s.onStatement != nil {
		s.onStatement(query, args)
	}
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.db.QueryRowContext(ctx, query, args...)
}

// close releases the statements.
func (s *stmtDB) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stmts {
		st.Close()
	}
	clear(s.stmts)
}

// writerConn is the writer's one connection, which the committer holds for
// its whole life (a sql.Conn taken from the writer's pool of one), with the
// statements prepared on it. A statement run on it costs half of what it did
// in a sql.Tx: a transaction's statement is bound to the transaction anew on
// each run (sql.Tx.StmtContext), and each of its queries starts a goroutine
// that waits for the transaction's end (its context can be cancelled), where
// a connection's queries under a context without cancellation start none. A
// SELECT of one value took 2.2 us against 4.7 us, and 20 allocations
// against 30. Only the committer's goroutine uses it, between and inside the
// transactions it begins and ends itself; a statement is prepared on first
// use, inside a transaction or not.
type writerConn struct {
	conn  *sql.Conn
	stmts *stmtDB      // the transaction's queries (read and write in a transaction)
	items itemCache    // the folders LiveItemAt found, while nothing changed them
	usage pendingUsage // the transaction's changes of the usage counters, not yet written
	small pendingSmall // a small content the transaction put, not yet written
	// failed is why the transaction must not commit: a write deferred to a
	// later statement (usage, small) failed there, where no caller hears it.
	failed error
}

// fail records that the transaction must not commit; the first reason stays.
func (w *writerConn) fail(err error) {
	if w.failed == nil {
		w.failed = err
	}
}

func newWriterConn(ctx context.Context, w *sql.DB) (*writerConn, error) {
	conn, err := w.Conn(ctx)
	if err != nil {
		return nil, err
	}
	wc := &writerConn{conn: conn, stmts: newStmtDB(conn)}
	wc.stmts.onStatement = wc.onStatement
	wc.items.dataVersion = wc.dataVersion
	return wc, nil
}

// onStatement is told of each statement before it runs.
func (w *writerConn) onStatement(query string, args []any) {
	if w.small.set && !w.small.flushing {
		if err := w.small.flush(context.Background(), w.stmts); err != nil {
			// The statement runs without the content; the transaction does
			// not commit.
			w.fail(fmt.Errorf("write a small content before %.40q: %w", query, err))
		}
	}
	w.flushUsageFirst(query)
	w.items.statement(query, args)
}

// dataVersion returns the pager's data version of the writer's database
// (SQLITE_FCNTL_DATA_VERSION), which changes with every change of it: the
// connection's own commits, and those of other connections it finds when a
// transaction begins.
func (w *writerConn) dataVersion() (uint32, error) {
	var v uint32
	err := w.conn.Raw(func(dc any) error {
		fc, ok := dc.(interface {
			FileControlDataVersion(dbName string) (uint32, error)
		})
		if !ok {
			return fmt.Errorf("data version: the driver's connection (%T) has no file control for it", dc)
		}
		var err error
		v, err = fc.FileControlDataVersion("main")
		return err
	})
	return v, err
}

// exec runs a statement of transaction control (BEGIN, COMMIT, SAVEPOINT...).
func (w *writerConn) exec(query string) error {
	_, err := w.stmts.ExecContext(context.Background(), query)
	return err
}

// close releases the statements and gives the connection back to its pool.
func (w *writerConn) close() error {
	w.stmts.close()
	return w.conn.Close()
}
