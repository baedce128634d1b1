package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// maxCachedStatements bounds the statement cache; queries beyond it run
// unprepared (dynamic SQL with many shapes must not grow memory without end).
const maxCachedStatements = 512

// stmtDB runs queries through prepared statements kept per SQL text: the pure-Go
// driver has no statement cache, and parsing a query costs more than running a
// point lookup. database/sql re-prepares a statement lazily on each pooled
// connection it runs on.
type stmtDB struct {
	db *sql.DB

	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

func newStmtDB(db *sql.DB) *stmtDB { return &stmtDB{db: db, stmts: map[string]*sql.Stmt{}} }

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
	// Prepare without holding the lock: on the writer it waits for the one
	// connection, which a transaction may hold while it reads the cache.
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
	if st := s.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return s.db.ExecContext(ctx, query, args...)
}

func (s *stmtDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, query, args...)
}

func (s *stmtDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
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

// prepare prepares the statements of queries that are not cached yet.
func (s *stmtDB) prepare(queries []string) {
	for _, q := range queries {
		s.stmt(context.Background(), q)
	}
}

// stmtTx runs a transaction's queries through the writer's prepared statements
// when they exist. It never prepares one: that needs the writer's only
// connection, which the transaction holds; such queries run unprepared, and
// are prepared when the transaction is over (txState.misses).
type stmtTx struct {
	st    *txState
	cache *stmtDB
}

func (t stmtTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.cache.cached(query); st != nil {
		return t.st.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	t.st.missed(query)
	return t.st.tx.ExecContext(ctx, query, args...)
}

func (t stmtTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.cache.cached(query); st != nil {
		return t.st.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	t.st.missed(query)
	return t.st.tx.QueryContext(ctx, query, args...)
}

func (t stmtTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.cache.cached(query); st != nil {
		return t.st.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	t.st.missed(query)
	return t.st.tx.QueryRowContext(ctx, query, args...)
}
