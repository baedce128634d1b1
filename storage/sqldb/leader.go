package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"time"

	"atrium/app"
)

// leadClass is the first key of the leader's advisory lock (two int4 keys,
// beside the write lanes' class).
const leadClass = 0x4c454144 // "LEAD"

// DefaultLeaderRetry is how often a node that does not lead tries to. The
// leader checks that its claim still holds every half of it, and a node that
// takes the claim starts leading one retry later, once a leader that lost it
// has noticed.
const DefaultLeaderRetry = 5 * time.Second

// Leader returns the leadership of name (one per kind of work) on db
// (app.Leader). On PostgreSQL the leader holds a session-level advisory lock
// on a connection of its own for as long as it leads: if the node dies or
// its connection breaks, the server drops the lock and another node takes it
// within one retry. On SQLite the one process always leads.
func (db *DB) Leader(name string, retry time.Duration) app.Leader {
	if retry <= 0 {
		retry = DefaultLeaderRetry
	}
	return leader{db: db, key: leaderKey(name), retry: retry}
}

// leaderKey is the second key of name's lock: a positive int4, so that
// pg_locks shows it as it was given.
func leaderKey(name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int32(h.Sum32() & 0x7fffffff)
}

type leader struct {
	db    *DB
	key   int32
	retry time.Duration
}

// Sole reports whether the one process always leads (SQLite): there is no
// cluster to speak of.
func (l leader) Sole() bool { return l.db.pg == nil }

func (l leader) Lead(ctx context.Context) (context.Context, func(), error) {
	if l.db.pg == nil {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		leading, cancel := context.WithCancel(ctx)
		return leading, cancel, nil
	}
	t := time.NewTicker(l.retry)
	defer t.Stop()
	for {
		conn, err := l.try(ctx)
		if err != nil && ctx.Err() == nil && l.db.log != nil {
			l.db.log.WarnContext(ctx, "leader election: cannot reach the database", "err", err)
		}
		if conn != nil {
			leading, release, err := l.hold(ctx, conn)
			// A leader whose connection died checks its claim every half
			// retry and stops within one: the new one starts after that.
			select {
			case <-leading.Done():
				release()
			case <-time.After(l.retry):
				return leading, release, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
}

// try takes the lock on a connection of the pool: the connection when it got
// it, nil when another session holds it.
func (l leader) try(ctx context.Context) (*sql.Conn, error) {
	conn, err := l.db.pg.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("leader election: %w", err)
	}
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1, $2)`, leadClass, l.key).Scan(&got); err != nil {
		// A lock granted as the call failed would outlive it: the session
		// goes with the connection.
		discard(conn)
		conn.Close()
		return nil, fmt.Errorf("leader election: %w", err)
	}
	if !got {
		conn.Close()
		return nil, nil
	}
	return conn, nil
}

// hold watches the connection that holds the lock: the leading context ends
// when ctx does or when the connection stops answering (its session, and so
// the lock, may be gone).
func (l leader) hold(ctx context.Context, conn *sql.Conn) (context.Context, func(), error) {
	leading, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTicker(l.retry / 2)
		defer t.Stop()
		for {
			select {
			case <-leading.Done():
				return
			case <-t.C:
			}
			pctx, pcancel := context.WithTimeout(leading, l.retry/2)
			var held bool
			err := conn.QueryRowContext(pctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
				AND pid = pg_backend_pid() AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 2 AND granted)`, leadClass, l.key).Scan(&held)
			pcancel()
			if leading.Err() != nil {
				return
			}
			if err != nil || !held {
				if l.db.log != nil {
					l.db.log.Warn("leader election: the leader's claim is lost", "err", err, "held", held)
				}
				cancel()
				return
			}
		}
	}()
	release := func() {
		cancel()
		<-watched
		rctx, rcancel := context.WithTimeout(context.Background(), l.retry)
		defer rcancel()
		if _, err := conn.ExecContext(rctx, `SELECT pg_advisory_unlock($1, $2)`, leadClass, l.key); err != nil {
			discard(conn)
		}
		conn.Close()
	}
	return leading, release, nil
}
