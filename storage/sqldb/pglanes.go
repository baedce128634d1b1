package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"atrium/app"
)

// Write lanes. Under SERIALIZABLE, two transactions that change the same rows
// (an owner's change sequence, an organisation's usage counters) cannot both
// commit: the later fails and runs again from the start, and with a few
// clients of one organisation writing at once most transactions ran two or
// three times, the p99 of a WebDAV PUT 70 times SQLite's. A transaction made
// for a signed-in principal therefore first queues in its organisation's lane:
// it takes a session-level advisory lock keyed by the organisation on its
// connection before BEGIN — before its snapshot, so that it sees what the
// previous holder committed — and gives it back after COMMIT. One
// organisation's writes take turns, on every node (the lock is the server's);
// different organisations' run side by side. Within a node, callers of one
// lane first queue in process (laneLocks), so that waiting writers do not each
// hold one of the pool's connections.
//
// The lane is a queue, not the rule: every transaction stays SERIALIZABLE and
// is run again on a conflict, so a write outside any lane (the collector, the
// dispatcher, a share link's upload) or on another path is still safe.

// laneClass is the first key of the lanes' advisory locks (two int4 keys, a
// space apart from the one-bigint locks such as the outbox's).
const laneClass = 0x4c414e45 // "LANE"

// SetWriteLanes turns the write lanes on (the default) or off. Off, one
// organisation's transactions run side by side and their conflicts are
// settled by SERIALIZABLE alone: the race tests turn them off to prove the
// rules hold without the queue (as they must between nodes that lose their
// lock's session, or for writes outside any lane). No effect on SQLite.
func (db *DB) SetWriteLanes(on bool) {
	if db.pg != nil {
		db.pg.noLanes.Store(!on)
	}
}

// writeLane returns the lane of ctx's transactions: the organisation of its
// principal; ok false when it has none or lanes are off.
func (db *DB) writeLane(ctx context.Context) (key int32, ok bool) {
	if db.pg.noLanes.Load() {
		return 0, false
	}
	p := app.PrincipalFrom(ctx)
	if p == nil || p.OrgID == "" {
		return 0, false
	}
	h := fnv.New32a()
	h.Write([]byte(p.OrgID))
	return int32(h.Sum32()), true
}

// laneLocks queues a node's callers of each lane.
type laneLocks struct {
	mu sync.Mutex
	m  map[int32]*laneQueue
}

type laneQueue struct {
	turn  chan struct{} // holds a value while the lane is free
	users int           // callers holding or waiting for it
}

// acquire waits for lane key's turn in this process; release gives it back.
func (l *laneLocks) acquire(ctx context.Context, key int32) (release func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[int32]*laneQueue)
	}
	q := l.m[key]
	if q == nil {
		q = &laneQueue{turn: make(chan struct{}, 1)}
		q.turn <- struct{}{}
		l.m[key] = q
	}
	q.users++
	l.mu.Unlock()
	done := func() {
		l.mu.Lock()
		if q.users--; q.users == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
	select {
	case <-q.turn:
		return func() { q.turn <- struct{}{}; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}

// pgInLane runs attempts of a transaction (run) on one connection that holds
// lane key's advisory lock throughout.
func (db *DB) pgInLane(ctx context.Context, key int32, run func(begin beginner) error) error {
	t0 := time.Now()
	release, err := db.pg.lanes.acquire(ctx, key)
	if err != nil {
		return fmt.Errorf("wait for the organisation's write lane: %w", err)
	}
	defer release()
	conn, err := db.pg.pool.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1, $2)`, laneClass, key); err != nil {
		// A lock granted as the wait was cancelled would outlive this call:
		// the session goes with the connection.
		discard(conn)
		return fmt.Errorf("wait for the organisation's write lane: %w", err)
	}
	db.pg.waitNanos.Add(int64(time.Since(t0)))
	err = run(conn)
	if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, $2)`, laneClass, key); uerr != nil {
		discard(conn)
	}
	return err
}

// discard closes conn's session rather than return it to the pool.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}

// beginner begins a transaction: the pool, or one connection of it.
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}
