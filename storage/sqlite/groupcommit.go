package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"atrium/app"
)

// Group commit. Every write transaction (InTx) runs on the one writer
// connection, in turn. With synchronous=FULL each commit waits for the disk
// (an fsync of the log), so when writes arrive together they would each wait
// for their own. Instead one goroutine, the committer, runs the transactions:
// it takes the one that arrived and every other already waiting (up to
// maxGroup), runs each in a SAVEPOINT of one transaction — a failing one is
// rolled back to its savepoint alone, the others are unaffected — and commits
// them with one fsync. Writes that arrive while the group's statements run
// join it before its commit (for up to joinFor): they share its flush rather
// than wait for it and then for one of their own. Each caller returns once
// the commit that holds its change is durable, exactly as with a transaction
// of its own; only the wait for the disk is shared. A lone write is not
// delayed: the committer never waits for company.
//
// A transaction's function runs with its caller's context values but not its
// cancellation: the driver answers a cancelled statement by interrupting
// SQLite, which rolls back the whole transaction, the group's other changes
// with it. A change whose client has gone is finished (it was going to be, a
// moment later) or, when its context ended before it started, not begun.

// maxGroup bounds the transactions committed together.
const maxGroup = 64

// txJob is one InTx call waiting for the committer.
type txJob struct {
	ctx    context.Context
	fn     func(ctx context.Context) error
	queued time.Time
	caller [3]uintptr // where InTx was called, for the slow-transaction log
	done   chan txResult
}

type txResult struct {
	err   error
	panic any // fn panicked: InTx panics with it in the caller
	stack []byte
}

// committer runs the write transactions.
type committer struct {
	db      *DB
	jobs    chan *txJob
	pending atomic.Int32  // callers waiting to hand their job over
	joinFor time.Duration // how long a group takes in jobs that arrive while it runs
	stop    chan struct{}
	wg      sync.WaitGroup

	// What the writer did, for the metrics (DB.WriteStats).
	transactions, commits             atomic.Uint64
	waitNanos, stmtNanos, commitNanos atomic.Int64
}

func (c *committer) stats() app.WriteStats {
	return app.WriteStats{Transactions: c.transactions.Load(), Commits: c.commits.Load(),
		Wait: time.Duration(c.waitNanos.Load()), Statements: time.Duration(c.stmtNanos.Load()),
		Commit: time.Duration(c.commitNanos.Load())}
}

func startCommitter(db *DB) *committer {
	c := &committer{db: db, jobs: make(chan *txJob), stop: make(chan struct{}), joinFor: joinFor}
	c.wg.Add(1)
	go c.loop()
	return c
}

// errClosed answers InTx after Close.
var errClosed = errors.New("database is closed")

// run hands fn to the committer and waits for its result.
func (c *committer) run(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	j := &txJob{ctx: ctx, fn: fn, queued: time.Now(), done: make(chan txResult, 1)}
	runtime.Callers(3, j.caller[:])
	c.pending.Add(1)
	select {
	case c.jobs <- j:
	case <-ctx.Done():
		c.pending.Add(-1)
		return fmt.Errorf("begin transaction: %w", ctx.Err())
	case <-c.stop:
		c.pending.Add(-1)
		return errClosed
	}
	r := <-j.done
	if r.panic != nil {
		panic(fmt.Sprintf("%v [in a write transaction; its stack:\n%s]", r.panic, r.stack))
	}
	return r.err
}

func (c *committer) loop() {
	defer c.wg.Done()
	group := make([]*txJob, 0, maxGroup)
	for {
		select {
		case <-c.stop:
			return
		case j := <-c.jobs:
			c.pending.Add(-1)
			group = append(group[:0], j)
		}
	more:
		for len(group) < maxGroup {
			select {
			case j := <-c.jobs:
				c.pending.Add(-1)
				group = append(group, j)
			default:
				break more
			}
		}
		misses := c.commit(group)
		// Once the callers have their answers, while the connection is free.
		c.db.ws.prepare(misses)
	}
}

// commit runs group in one transaction and tells each job its result; it
// returns the queries the transaction ran unprepared. Jobs that arrive while
// the group's statements run join it before the commit (up to maxGroup, and
// while the group has run for less than joinFor): they share its flush
// instead of waiting for it and then for one of their own.
func (c *committer) commit(group []*txJob) (misses []string) {
	results := make([]txResult, len(group), maxGroup)
	defer func() {
		for i, j := range group {
			j.done <- results[i]
		}
		clear(group)
	}()
	live := 0
	for i, j := range group {
		if err := j.ctx.Err(); err != nil {
			results[i].err = fmt.Errorf("begin transaction: %w", err)
			continue
		}
		live++
	}
	if live == 0 {
		return
	}
	db := c.db
	t0 := time.Now()
	var wait time.Duration
	for i, j := range group {
		if results[i].err == nil {
			wait += t0.Sub(j.queued)
		}
	}
	c.transactions.Add(uint64(live))
	c.waitNanos.Add(int64(wait))
	var t1 time.Time // when the commit began
	defer func() {
		if t1.IsZero() {
			c.stmtNanos.Add(int64(time.Since(t0)))
			return
		}
		c.stmtNanos.Add(int64(t1.Sub(t0)))
		c.commitNanos.Add(int64(time.Since(t1)))
	}()
	// fail gives every job without a result err.
	fail := func(err error) {
		for k := range results {
			if results[k].err == nil && results[k].panic == nil {
				results[k].err = err
			}
		}
	}
	tx, err := db.w.BeginTx(context.Background(), nil)
	if err != nil {
		fail(fmt.Errorf("begin transaction: %w", err))
		return
	}
	st := &txState{tx: tx}
	// A lone job runs without a savepoint: when it fails, the transaction
	// is rolled back whole. Jobs that join later run in savepoints.
	bare := live == 1
	committed := 0
	for i := 0; i < len(group); i++ {
		if results[i].err == nil {
			j := group[i]
			if bare {
				bare = false
				if results[i] = runJob(j, st); results[i].err != nil || results[i].panic != nil {
					tx.Rollback()
					return
				}
				committed++
			} else {
				if _, err := tx.Exec("SAVEPOINT grp"); err != nil {
					results[i].err = fmt.Errorf("begin transaction: savepoint: %w", err)
					continue
				}
				results[i] = runJob(j, st)
				if results[i].err != nil || results[i].panic != nil {
					if _, err := tx.Exec("ROLLBACK TO grp"); err != nil {
						// The transaction is broken: nothing of the group commits.
						tx.Rollback()
						fail(fmt.Errorf("roll back a failed change of the group: %w", err))
						return
					}
				} else {
					committed++
				}
				if _, err := tx.Exec("RELEASE grp"); err != nil {
					tx.Rollback()
					fail(fmt.Errorf("release savepoint: %w", err))
					return
				}
			}
		}
		if i == len(group)-1 {
			group, results = c.join(group, results, t0)
		}
	}
	if committed == 0 {
		tx.Rollback()
		return
	}
	t1 = time.Now()
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("commit: %w", err))
		return
	}
	c.commits.Add(1)
	if d := time.Since(t0); d >= slowTx && db.log != nil {
		// Every other write waits for this one: say where it came from.
		db.log.Warn("slow write transaction", "held_ms", d.Milliseconds(), "commit_ms", time.Since(t1).Milliseconds(),
			"waited_ms", t0.Sub(group[0].queued).Milliseconds(), "group", committed, "caller", framesOf(group[0].caller[:]))
	}
	return st.misses
}

// joinFor bounds how long a group keeps taking in jobs that arrive while it
// runs: its first jobs are answered only after the last one's commit.
const joinFor = 2 * time.Millisecond

// join adds to group the jobs waiting now, while the group has run for less
// than c.joinFor (t0: when it began) and holds fewer than maxGroup.
func (c *committer) join(group []*txJob, results []txResult, t0 time.Time) ([]*txJob, []txResult) {
	for len(group) < maxGroup && time.Since(t0) < c.joinFor {
		var j *txJob
		select {
		case j = <-c.jobs:
			c.pending.Add(-1)
		default:
			return group, results
		}
		group, results = append(group, j), append(results, txResult{})
		if err := j.ctx.Err(); err != nil {
			results[len(results)-1].err = fmt.Errorf("begin transaction: %w", err)
			continue
		}
		c.transactions.Add(1)
		c.waitNanos.Add(int64(time.Since(j.queued)))
	}
	return group, results
}

// runJob runs one job's function in the transaction, catching a panic.
func runJob(j *txJob, st *txState) (r txResult) {
	defer func() {
		if p := recover(); p != nil {
			buf := make([]byte, 16<<10)
			r = txResult{panic: p, stack: buf[:runtime.Stack(buf, false)]}
		}
	}()
	return txResult{err: j.fn(context.WithValue(context.WithoutCancel(j.ctx), txKey{}, st))}
}

// waiting returns how many callers wait to hand their transaction over.
func (c *committer) waiting() int { return int(c.pending.Load()) }

// close stops the committer once the group under way is done; later InTx
// calls answer errClosed.
func (c *committer) close() {
	close(c.stop)
	c.wg.Wait()
}

// txState is the transaction a context carries.
type txState struct {
	tx *sql.Tx
	// misses are queries the transaction ran unprepared (the cache had no
	// statement for them, and preparing one needs the connection the
	// transaction holds): they are prepared once it is over.
	mu     sync.Mutex
	misses []string
}

// missed records that query ran unprepared.
func (st *txState) missed(query string) {
	st.mu.Lock()
	if len(st.misses) < 64 {
		st.misses = append(st.misses, query)
	}
	st.mu.Unlock()
}
