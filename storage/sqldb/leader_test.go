package sqldb

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"atrium/app"
)

// TestLeaderSQLite: the one process on a SQLite file always leads.
func TestLeaderSQLite(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	if db.IsPostgres() {
		t.Skip("SQLite's leader")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	leading, release, err := db.Leader("maintenance", time.Second).Lead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if leading.Err() != nil {
		t.Fatal("the leading context ended at once")
	}
	release()
	if leading.Err() == nil {
		t.Fatal("release did not end the leading context")
	}
	// Its jobs run, and its log speaks of no cluster.
	var logs bytes.Buffer
	ran := make(chan struct{})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		app.RunAsLeader(runCtx, db.Leader("maintenance", time.Second), slog.New(slog.NewTextHandler(&logs, nil)),
			func(ctx context.Context) { close(ran); <-ctx.Done() })
	}()
	<-ran
	stop()
	<-done
	if strings.Contains(logs.String(), "leading") {
		t.Errorf("the one process announced that it leads: %s", logs.String())
	}
}

// node is one "node" of TestLeaderTwoNodes: its database handle and how its
// job ran.
type node struct {
	db      *DB
	cancel  context.CancelFunc
	done    chan struct{}
	running atomic.Bool
	starts  atomic.Int32
}

// TestLeaderTwoNodes: two handles on one PostgreSQL database are two nodes:
// exactly one runs the jobs; when the leader's connection dies the other takes
// over within a retry, and the old leader's jobs stop; when a leader stops
// gracefully the other takes over.
func TestLeaderTwoNodes(t *testing.T) {
	admin := TestPostgresURL()
	if admin == "" {
		t.Skip("leader election between nodes needs PostgreSQL (" + TestDatabaseEnv + ")")
	}
	t.Parallel()
	ctx := context.Background()
	url, drop, err := NewTestPostgres(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const retry = 100 * time.Millisecond
	var nodes [2]*node
	var wg sync.WaitGroup
	for i := range nodes {
		db, err := OpenPostgres(ctx, url, log)
		if err != nil {
			t.Fatal(err)
		}
		n := &node{db: db, done: make(chan struct{})}
		nodes[i] = n
		nctx, cancel := context.WithCancel(ctx)
		n.cancel = cancel
		wg.Go(func() {
			defer close(n.done)
			app.RunAsLeader(nctx, db.Leader("maintenance", retry), log, func(ctx context.Context) {
				n.starts.Add(1)
				n.running.Store(true)
				<-ctx.Done()
				n.running.Store(false)
			})
		})
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.cancel()
		}
		wg.Wait()
		for _, n := range nodes {
			n.db.Close()
		}
	})
	// leaderNow waits until exactly one node runs its job and returns it; it
	// fails when both ever run at once.
	leaderNow := func(not *node) *node {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			a, b := nodes[0].running.Load(), nodes[1].running.Load()
			if a && b {
				t.Fatal("both nodes run the jobs")
			}
			for i, r := range []bool{a, b} {
				if r && nodes[i] != not {
					// Still the only one a few retries later.
					time.Sleep(3 * retry)
					if !nodes[i].running.Load() || nodes[1-i].running.Load() {
						t.Fatalf("leadership did not settle: node %d %v, node %d %v", i, nodes[i].running.Load(), 1-i, nodes[1-i].running.Load())
					}
					return nodes[i]
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("no node took the lead")
		return nil
	}
	first := leaderNow(nil)
	other := nodes[0]
	if other == first {
		other = nodes[1]
	}
	if other.starts.Load() != 0 {
		t.Fatal("the node that does not lead ran the jobs")
	}

	// The leader's connection dies (its node is cut off): the server drops
	// the lock, the other node takes over and the old leader stops.
	var pid int
	if err := other.db.pg.pool.QueryRowContext(ctx, `SELECT pid FROM pg_locks WHERE locktype = 'advisory'
		AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 2 AND granted`, leadClass, leaderKey("maintenance")).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := other.db.pg.pool.ExecContext(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	// Either node may lead next (the old leader reconnects and competes
	// too), but the old claim's jobs stopped and leadership started again.
	for deadline := time.Now().Add(10 * time.Second); first.starts.Load()+other.starts.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no node led again after the leader's connection died")
		}
	}
	second := leaderNow(nil)
	if first.starts.Load()+other.starts.Load() != 2 {
		t.Fatalf("jobs started %d and %d times after the leader's connection died, want one new start in all",
			first.starts.Load(), other.starts.Load())
	}

	// The leader stops gracefully: the remaining node leads.
	remaining := first
	if second == first {
		remaining = other
	}
	before := remaining.starts.Load()
	second.cancel()
	<-second.done
	if leaderNow(second) != remaining {
		t.Fatal("the remaining node did not take over")
	}
	if remaining.starts.Load() != before+1 {
		t.Fatalf("the remaining node started its jobs %d times, want %d", remaining.starts.Load(), before+1)
	}
}
