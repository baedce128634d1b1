package sqldb

import (
	"context"
	"sync"
	"testing"
	"time"

	"atrium/app"
)

// TestWriteLanes: on PostgreSQL, transactions of one organisation's
// principals queue in its lane and none has to run again, where the same
// read-then-write transactions without a principal conflict and are retried;
// either way every increment counts once, and the lane's lock is given back.
func TestWriteLanes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	if !db.IsPostgres() {
		t.Skip("write lanes are PostgreSQL's; SQLite has one writer")
	}
	if _, err := db.pg.pool.ExecContext(ctx, `CREATE TABLE lane_counter (n int NOT NULL); INSERT INTO lane_counter VALUES (0)`); err != nil {
		t.Fatal(err)
	}
	increment := func(ctx context.Context) error {
		return db.InTx(ctx, func(ctx context.Context) error {
			q := db.pgQuerier(ctx)
			var n int
			if err := q.QueryRowContext(ctx, `SELECT n FROM lane_counter`).Scan(&n); err != nil {
				return err
			}
			time.Sleep(5 * time.Millisecond) // the others read the same n meanwhile, unless they queue
			_, err := q.ExecContext(ctx, `UPDATE lane_counter SET n = ?`, n+1)
			return err
		})
	}
	run := func(ctx context.Context) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				for range 3 {
					if err := increment(ctx); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	count := func() int {
		var n int
		if err := db.pg.pool.QueryRowContext(ctx, `SELECT n FROM lane_counter`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	run(ctx)
	if n, r := count(), db.pg.retries.Load(); n != 24 || r == 0 {
		t.Fatalf("without a lane: counter %d (want 24), %d transactions run again (want some: they conflict)", n, r)
	}
	before := db.pg.retries.Load()
	run(app.WithPrincipal(ctx, &app.Principal{OrgID: "org-1"}))
	if n, r := count(), db.pg.retries.Load()-before; n != 48 || r != 0 {
		t.Fatalf("in the organisation's lane: counter %d (want 48), %d transactions run again (want none)", n, r)
	}
	// The writes are counted for the metrics and the indexer's burst
	// detection, as SQLite's writer counts its own.
	if ws := db.WriteStats(); ws.Transactions != 48 || ws.Commits != 48 || ws.Wait <= 0 || ws.Statements <= 0 || ws.Commit <= 0 {
		t.Fatalf("write stats %+v, want 48 transactions and commits, and time in the lane, the statements and the commits", ws)
	}
	var held int
	if err := db.pg.pool.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1`, laneClass).Scan(&held); err != nil || held != 0 {
		t.Fatalf("lane locks still held after the writes: %d (%v)", held, err)
	}
	if len(db.pg.lanes.m) != 0 {
		t.Fatalf("the node's lane queue keeps %d lanes after the writes", len(db.pg.lanes.m))
	}
}

// TestWriteLaneWaitCancelled: a caller whose context ends while it waits for
// its lane gets the context's error and leaves the lane to the others.
func TestWriteLaneWaitCancelled(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	if !db.IsPostgres() {
		t.Skip("write lanes are PostgreSQL's")
	}
	ctx := app.WithPrincipal(context.Background(), &app.Principal{OrgID: "org-2"})
	holding, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.InTx(ctx, func(context.Context) error { close(holding); <-release; return nil })
	}()
	<-holding
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := db.InTx(wctx, func(context.Context) error { return nil }); err == nil {
		t.Fatal("a transaction ran while another held its organisation's lane")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("after the holder and a cancelled waiter: %v", err)
	}
}
