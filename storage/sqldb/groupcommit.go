package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
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
// maxGroup), runs them in one transaction — each after the first that
// succeeded in a SAVEPOINT, so that a failing one is rolled back alone and
// the others are unaffected (one that fails before any succeeded rolls the
// transaction back, which begins again) — and commits them with one fsync. Writes that arrive while the group's statements run
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

// connJob is onConn's call: fn runs on the writer's connection between two
// transactions.
type connJob struct {
	fn   func(conn *sql.Conn) error
	done chan error
}

// committer runs the write transactions.
type committer struct {
	db      *DB
	w       *writerConn // the writer's connection, held from start to close
	jobs    chan *txJob
	conns   chan *connJob
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

func startCommitter(db *DB) (*committer, error) {
	w, err := newWriterConn(context.Background(), db.w)
	if err != nil {
		return nil, err
	}
	c := &committer{db: db, w: w, jobs: make(chan *txJob), conns: make(chan *connJob), stop: make(chan struct{}), joinFor: joinFor}
	c.wg.Add(1)
	go c.loop()
	return c, nil
}

// onConn runs fn on the writer's connection outside any transaction, between
// the committer's transactions (a checkpoint, a ping).
func (c *committer) onConn(ctx context.Context, fn func(conn *sql.Conn) error) error {
	j := &connJob{fn: fn, done: make(chan error, 1)}
	select {
	case c.conns <- j:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.stop:
		return errClosed
	}
	return <-j.done
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
	defer c.w.close()
	group := make([]*txJob, 0, maxGroup)
	for {
		select {
		case <-c.stop:
			return
		case j := <-c.conns:
			c.w.items.forget() // what fn does to the database is not seen
			j.done <- j.fn(c.w.conn)
			continue
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
		c.commit(group)
	}
}

// commit runs group in one transaction and tells each job its result. Jobs
// that arrive while the group's statements run join it before the commit (up
// to maxGroup, and while the group has run for less than joinFor): they share
// its flush instead of waiting for it and then for one of their own.
func (c *committer) commit(group []*txJob) {
	results := make([]txResult, len(group), maxGroup)
	defer func() {
		for i, j := range group {
			if results[i].err != nil || results[i].panic != nil {
				// Its statements were rolled back (ROLLBACK forgets the
				// folders too): forget them whatever happened.
				c.w.items.forget()
			}
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
	w := c.w
	// rollback ends the transaction without its changes. An error of SQLite's
	// that rolled the transaction back already makes ROLLBACK fail: the
	// connection is out of a transaction either way.
	rollback := func() {
		w.small = pendingSmall{}
		_ = w.exec("ROLLBACK")
		w.usage.discard()
		w.failed = nil
	}
	// begin starts the transaction, on a connection whose transaction a
	// failed ROLLBACK may have left open.
	begin := func() error {
		err := w.exec("BEGIN IMMEDIATE")
		if err != nil && strings.Contains(err.Error(), "within a transaction") {
			// A transaction left open (a ROLLBACK that failed) would refuse
			// every BEGIN from now on: end it and begin again.
			rollback()
			err = w.exec("BEGIN IMMEDIATE")
		}
		if err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		w.items.begun()
		return nil
	}
	if err := begin(); err != nil {
		fail(err)
		return
	}
	st := &txState{w: w}
	// Until a job of the transaction has succeeded, a job runs without a
	// savepoint: when it fails, the transaction, which holds nothing else,
	// is rolled back whole and begun again for the jobs after it. Once one
	// has succeeded, each runs in a savepoint, so that a failing one is
	// rolled back alone. A savepoint costs more than its two statements:
	// SQLite copies each page a job changes first into the savepoint's
	// journal (about 8% of the writer's time in a live profile of small
	// PUTs, when every job that joined a group had one).
	committed := 0
	for i := 0; i < len(group); i++ {
		if results[i].err == nil {
			j := group[i]
			if committed == 0 {
				if results[i] = runJob(j, st); results[i].err == nil && results[i].panic == nil {
					committed++
				} else {
					rollback()
					if err := begin(); err != nil {
						fail(err)
						return
					}
					st = &txState{w: w}
				}
			} else {
				if err := w.exec("SAVEPOINT grp"); err != nil {
					results[i].err = fmt.Errorf("begin transaction: savepoint: %w", err)
					continue
				}
				usage, failed := w.usage.mark(), w.failed
				results[i] = runJob(j, st)
				if results[i].err != nil || results[i].panic != nil {
					// What the job deferred goes with it.
					w.small = pendingSmall{}
					w.usage.restore(usage)
					w.failed = failed
					if err := w.exec("ROLLBACK TO grp"); err != nil {
						// The transaction is broken: nothing of the group commits.
						rollback()
						fail(fmt.Errorf("roll back a failed change of the group: %w", err))
						return
					}
				} else {
					committed++
				}
				if err := w.exec("RELEASE grp"); err != nil {
					rollback()
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
		rollback()
		return
	}
	// What the group's writes deferred: a small content still pending, and
	// the changes of the usage counters, written once for the group.
	err := w.failed
	if err == nil {
		err = w.small.flush(context.Background(), w.stmts)
	}
	if err == nil {
		err = w.usage.flush(context.Background(), w.stmts)
	}
	if err != nil {
		rollback()
		fail(fmt.Errorf("commit: %w", err))
		return
	}
	// The lock hint may go once a commit that deleted locks leaves none. It
	// is read here, after the group's last statement, and cleared only when
	// the commit holds; a lock taken by a later transaction sets it again
	// (AddLock, inside that transaction) before its insert, on this same
	// goroutine, so no clearing can fall between the two.
	clearLocks := st.locksGone && db.driveLocks.Load() && !w.anyDriveLock()
	t1 = time.Now()
	if err := w.exec("COMMIT"); err != nil {
		// A failed COMMIT may leave the transaction open (SQLITE_BUSY does).
		rollback()
		fail(fmt.Errorf("commit: %w", err))
		return
	}
	w.items.committed()
	if clearLocks {
		db.driveLocks.Store(false)
	}
	c.commits.Add(1)
	if d := time.Since(t0); d >= slowTx && db.log != nil {
		// Every other write waits for this one: say where it came from.
		db.log.Warn("slow write transaction", "held_ms", d.Milliseconds(), "commit_ms", time.Since(t1).Milliseconds(),
			"waited_ms", t0.Sub(group[0].queued).Milliseconds(), "group", committed, "caller", framesOf(group[0].caller[:]))
	}
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

// txState is the transaction a context carries: the committer's, on the
// writer's connection.
type txState struct {
	w *writerConn
	// locksGone: a statement of the transaction deleted drive locks (see
	// DB.driveLocks).
	locksGone bool
}

// noteLocksGone records in ctx's transaction that drive locks were deleted:
// before its commit the committer asks whether any is left, and when none
// is the lock checks skip SQLite again once it has committed. Outside a
// transaction nothing is noted and the hint stays set.
func noteLocksGone(ctx context.Context) {
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		st.locksGone = true
	}
}
