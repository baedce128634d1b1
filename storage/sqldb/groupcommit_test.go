package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// gcTestDB opens a new database with the table gc_test (k, v).
func gcTestDB(t *testing.T) *DB {
	t.Helper()
	sqliteOnly(t)
	db := openTest(t)
	if _, err := db.Exec(context.Background(), `CREATE TABLE gc_test (k TEXT PRIMARY KEY, v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// holdWriter starts a transaction that inserts key (none when empty) and then
// holds the writer until release is closed. It returns once the transaction
// holds the writer, with the channel its result arrives on.
func holdWriter(ctx context.Context, db *DB, key string, release <-chan struct{}) <-chan error {
	holding, held := make(chan struct{}), make(chan error, 1)
	go func() {
		held <- db.InTx(ctx, func(ctx context.Context) error {
			var err error
			if key != "" {
				_, err = db.Exec(ctx, `INSERT INTO gc_test (k, v) VALUES (?, 0)`, key)
			}
			close(holding)
			if err == nil {
				<-release
			}
			return err
		})
	}()
	<-holding
	return held
}

// queued waits until n callers are parked in the committer's hand-over.
// waiting() counts a caller a moment before it parks there, and the
// committer takes a group's jobs from the callers parked when it looks: one
// that is counted but not parked yet (its goroutine preempted between the
// two, seen under CI's load) would miss the group a test expects it in.
// On failure it closes release, which holds the committer, first.
func queued(t *testing.T, db *DB, n int, release chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for parkedInRun(db.cm) < n { // a parked caller is counted too
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("%d callers counted, %d parked in the committer's hand-over; want %d", db.cm.waiting(), parkedInRun(db.cm), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// parkedInRun counts the goroutines parked in c.run's select (the hand-over
// of a job; once handed over, a caller waits in a receive).
func parkedInRun(c *committer) int {
	frame := fmt.Sprintf("atrium/storage/sqldb.(*committer).run(%p,", c)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, frames, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "[select") && strings.Contains(frames, frame) {
			count++
		}
	}
	return count
}

// TestGroupCommit: transactions that arrive together share a commit, yet each
// keeps its own outcome — a failing or panicking one leaves no trace, the
// others all commit — and each caller returns only once its change is
// committed.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := gcTestDB(t)

	// The held transaction runs for as long as the others take to queue: it
	// must not take them in (TestGroupCommitJoin tests that).
	db.cm.joinFor = 0
	before := db.WriteStats()
	// Hold the committer in one transaction while the others queue, so that
	// they are taken as one group.
	release := make(chan struct{})
	held := holdWriter(ctx, db, "held", release)

	const n = 40
	errs := make([]error, n)
	panics := make([]any, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			errs[i] = db.InTx(ctx, func(ctx context.Context) error {
				if _, err := db.Exec(ctx, `INSERT INTO gc_test (k, v) VALUES (?, ?)`, fmt.Sprint("k", i), i); err != nil {
					return err
				}
				switch i % 10 {
				case 3:
					return errors.New("refused") // rolled back to its savepoint
				case 7:
					panic("boom") // likewise, and raised again in the caller
				case 5:
					// A duplicate key: the statement fails, the caller sees it.
					_, err := db.Exec(ctx, `INSERT INTO gc_test (k, v) VALUES (?, ?)`, fmt.Sprint("k", i), i)
					return err
				}
				return nil
			})
			if errs[i] == nil {
				// Committed: a reader sees it at once.
				var v int
				if err := db.r.QueryRowContext(ctx, `SELECT v FROM gc_test WHERE k = ?`, fmt.Sprint("k", i)).Scan(&v); err != nil || v != i {
					errs[i] = fmt.Errorf("committed but not visible: %v %d", err, v)
				}
			}
		}()
	}
	// Let them queue, then release the first.
	queued(t, db, n, release)
	close(release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for i := range n {
		var want string
		switch i % 10 {
		case 3:
			want = "refused"
		case 5:
			want = "UNIQUE"
		}
		switch {
		case i%10 == 7:
			if panics[i] == nil || !strings.Contains(fmt.Sprint(panics[i]), "boom") {
				t.Errorf("%d: panic %v, want boom raised in the caller", i, panics[i])
			}
		case want == "" && errs[i] != nil:
			t.Errorf("%d: %v", i, errs[i])
		case want != "" && (errs[i] == nil || !strings.Contains(errs[i].Error(), want)):
			t.Errorf("%d: error %v, want %q", i, errs[i], want)
		}
		var count int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM gc_test WHERE k = ?`, fmt.Sprint("k", i)).Scan(&count); err != nil {
			t.Fatal(err)
		}
		if kept := want == "" && i%10 != 7; (count == 1) != kept {
			t.Errorf("%d: %d rows, kept %v", i, count, kept)
		}
	}
	// The writer's figures (the metrics): the held transaction committed
	// alone, the forty others together, failed ones included; they waited
	// while the first was held.
	after := db.WriteStats()
	if tx, commits := after.Transactions-before.Transactions, after.Commits-before.Commits; tx != n+1 || commits != 2 {
		t.Errorf("write stats: %d transactions in %d commits, want %d in 2", tx, commits, n+1)
	}
	if after.Wait <= before.Wait || after.Statements <= before.Statements || after.Commit <= before.Commit {
		t.Errorf("write stats: times did not grow: %+v then %+v", before, after)
	}

	t.Run("a cancelled context does not begin", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		ran := false
		err := db.InTx(cctx, func(context.Context) error { ran = true; return nil })
		if !errors.Is(err, context.Canceled) || ran {
			t.Fatalf("err %v, ran %v", err, ran)
		}
	})
	t.Run("nested calls join", func(t *testing.T) {
		err := db.InTx(ctx, func(ctx context.Context) error {
			return db.InTx(ctx, func(ctx context.Context) error {
				_, err := db.Exec(ctx, `INSERT INTO gc_test (k, v) VALUES ('nested', 1)`)
				return err
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a statement outside a transaction commits through the committer", func(t *testing.T) {
		// While a transaction holds the committer, statements outside one
		// wait for it and are then committed together.
		release := make(chan struct{})
		held := holdWriter(ctx, db, "", release)
		const n = 8
		errs := make(chan error, n)
		for i := range n {
			go func() {
				_, err := db.Exec(ctx, `INSERT INTO gc_test (k, v) VALUES (?, ?)`, fmt.Sprint("alone", i%(n-1)), i)
				errs <- err
			}()
		}
		queued(t, db, n, release)
		var count int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM gc_test WHERE k LIKE 'alone%'`).Scan(&count); err != nil || count != 0 {
			t.Fatalf("%d statements committed while the committer was held (%v)", count, err)
		}
		close(release)
		if err := <-held; err != nil {
			t.Fatal(err)
		}
		dup := 0
		for range n {
			if err := <-errs; err != nil {
				if !strings.Contains(err.Error(), "UNIQUE") {
					t.Fatalf("statement: %v", err)
				}
				dup++
			}
		}
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM gc_test WHERE k LIKE 'alone%'`).Scan(&count); err != nil || count != n-1 || dup != 1 {
			t.Fatalf("%d rows and %d duplicate-key errors, want %d and 1 (%v)", count, dup, n-1, err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		db2, err := Open(ctx, filepath.Join(t.TempDir(), "atrium.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		db2.Close()
		if err := db2.InTx(ctx, func(context.Context) error { return nil }); !errors.Is(err, errClosed) {
			t.Fatalf("InTx after Close: %v", err)
		}
	})
}

// TestGroupCommitJoin: writes that arrive while a group's statements run join
// that group's commit rather than wait for it and then for their own, each
// with its own outcome: a failing one leaves no trace.
func TestGroupCommitJoin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := gcTestDB(t)
	db.cm.joinFor = time.Hour // however slow the machine, the three share a commit
	before := db.WriteStats()

	// The first transaction runs alone; the two others arrive while it runs.
	release := make(chan struct{})
	first := holdWriter(ctx, db, "first", release)
	late := make([]chan error, 2)
	for i := range late {
		late[i] = make(chan error, 1)
		go func() {
			late[i] <- db.InTx(ctx, func(ctx context.Context) error {
				if _, err := db.Exec(ctx, `INSERT INTO gc_test (k, v) VALUES (?, ?)`, fmt.Sprint("late", i), i); err != nil {
					return err
				}
				if i == 1 {
					return errors.New("refused")
				}
				return nil
			})
		}()
	}
	queued(t, db, len(late), release)
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first: %v", err)
	}
	if err := <-late[0]; err != nil {
		t.Fatalf("late 0: %v", err)
	}
	if err := <-late[1]; err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("late 1: %v, want refused", err)
	}
	var keys []string
	rows, err := db.r.QueryContext(ctx, `SELECT k FROM gc_test ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if got := strings.Join(keys, ","); got != "first,late0" {
		t.Errorf("rows %s, want first,late0", got)
	}
	after := db.WriteStats()
	if tx, commits := after.Transactions-before.Transactions, after.Commits-before.Commits; tx != 3 || commits != 1 {
		t.Errorf("write stats: %d transactions in %d commits, want 3 in 1", tx, commits)
	}
}

// TestGroupCommitFailuresFirst: the jobs of a group that run before any of
// them succeeded have no savepoint; when one fails (an error, a panic, a
// statement refused) the transaction is rolled back and begun again, and
// the group goes on: only the jobs that succeeded commit, together.
func TestGroupCommitFailuresFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := gcTestDB(t)
	db.cm.joinFor = 0 // the held transaction takes nobody in
	before := db.WriteStats()
	insert := func(ctx context.Context, k string) error {
		_, err := db.Exec(ctx, `INSERT INTO gc_test (k, v) VALUES (?, 1)`, k)
		return err
	}
	jobs := []struct {
		key  string
		then func(ctx context.Context) error
		want string // the error (or panic) the caller sees; "" when it commits
	}{
		{"f0", func(context.Context) error { return errors.New("refused") }, "refused"},
		{"f1", func(context.Context) error { panic("boom") }, "boom"},
		{"f2", func(ctx context.Context) error { return insert(ctx, "f2") }, "UNIQUE"},
		{"s3", func(context.Context) error { return nil }, ""},
		{"f4", func(context.Context) error { return errors.New("refused") }, "refused"},
		{"s5", func(context.Context) error { return nil }, ""},
	}
	release := make(chan struct{})
	held := holdWriter(ctx, db, "", release)
	got := make([]chan string, len(jobs))
	for i, j := range jobs {
		got[i] = make(chan string, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					got[i] <- fmt.Sprint(p)
				}
			}()
			err := db.InTx(ctx, func(ctx context.Context) error {
				if err := insert(ctx, j.key); err != nil {
					return err
				}
				return j.then(ctx)
			})
			if err != nil {
				got[i] <- err.Error()
				return
			}
			got[i] <- ""
		}()
		queued(t, db, i+1, release) // one after the other: the group's order
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	var kept []string
	for i, j := range jobs {
		if g := <-got[i]; (j.want == "") != (g == "") || !strings.Contains(g, j.want) {
			t.Errorf("%s: %q, want %q", j.key, g, j.want)
		}
		var n int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM gc_test WHERE k = ?`, j.key).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			kept = append(kept, j.key)
		}
	}
	if k := strings.Join(kept, ","); k != "s3,s5" {
		t.Errorf("rows %s, want s3,s5", k)
	}
	after := db.WriteStats()
	if tx, commits := after.Transactions-before.Transactions, after.Commits-before.Commits; tx != uint64(len(jobs))+1 || commits != 2 {
		t.Errorf("write stats: %d transactions in %d commits, want %d in 2", tx, commits, len(jobs)+1)
	}
}

// The writer's one connection is the committer's: a statement outside a
// transaction runs as a transaction of its own (an Exec when called, a
// QueryRow when its row is scanned), a query of many rows on the writer
// outside a transaction is refused, the statements are prepared once on the
// connection (inside a transaction too) and kept, and onConn reaches the
// connection between transactions.
func TestWriterConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := gcTestDB(t)
	w := db.cm.w

	// A write with RETURNING outside a transaction: it runs when scanned.
	row := db.write(ctx).QueryRowContext(ctx, `INSERT INTO gc_test (k, v) VALUES ('a', 1) RETURNING v + 1`)
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM gc_test`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("before the scan: %d rows, %v; want 0", n, err)
	}
	var v int
	if err := row.Scan(&v); err != nil || v != 2 {
		t.Fatalf("scan: %d, %v; want 2", v, err)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT v FROM gc_test WHERE k = 'a'`).Scan(&v); err != nil || v != 1 {
		t.Fatalf("after the scan: %d, %v; want the row, committed", v, err)
	}
	// No row: sql.ErrNoRows, as from a *sql.Row, and nothing changed.
	err := db.write(ctx).QueryRowContext(ctx, `UPDATE gc_test SET v = 9 WHERE k = 'none' RETURNING v`).Scan(&v)
	if !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("no row: %v, want sql.ErrNoRows", err)
	}
	if _, err := db.write(ctx).QueryContext(ctx, `SELECT k FROM gc_test`); err == nil {
		t.Fatal("a query of many rows on the writer outside a transaction ran")
	}

	// Prepared once, in a transaction, and kept for the next.
	const q = `UPDATE gc_test SET v = v + 1 WHERE k = ?`
	for range 2 {
		if err := db.InTx(ctx, func(ctx context.Context) error {
			_, err := db.write(ctx).ExecContext(ctx, q, "a")
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if w.stmts.cached(q) == nil {
		t.Fatal("the statement was not kept prepared")
	}
	if err := db.r.QueryRowContext(ctx, `SELECT v FROM gc_test WHERE k = 'a'`).Scan(&v); err != nil || v != 3 {
		t.Fatalf("after two updates: %d, %v; want 3", v, err)
	}

	// Between transactions: no transaction is open on the connection (BEGIN
	// fails within one).
	if err := db.cm.onConn(ctx, func(conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			return err
		}
		_, err := conn.ExecContext(ctx, "ROLLBACK")
		return err
	}); err != nil {
		t.Fatalf("onConn: %v; want no open transaction", err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// A failed transaction leaves the connection out of a transaction too.
	if err := db.InTx(ctx, func(ctx context.Context) error {
		if _, err := db.Exec(ctx, `INSERT INTO gc_test (k, v) VALUES ('b', 1)`); err != nil {
			return err
		}
		return errors.New("refused")
	}); err == nil {
		t.Fatal("the refused transaction committed")
	}
	if err := db.InTx(ctx, func(ctx context.Context) error {
		_, err := db.Exec(ctx, `INSERT INTO gc_test (k, v) VALUES ('b', 2)`)
		return err
	}); err != nil {
		t.Fatalf("after a rollback: %v", err)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT v FROM gc_test WHERE k = 'b'`).Scan(&v); err != nil || v != 2 {
		t.Fatalf("b: %d, %v; want 2, the second transaction's", v, err)
	}
	// A transaction left open on the connection is ended before the next
	// begins, without its changes.
	if err := db.cm.onConn(ctx, func(conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			return err
		}
		_, err := conn.ExecContext(ctx, `INSERT INTO gc_test (k, v) VALUES ('left', 1)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO gc_test (k, v) VALUES ('c', 3)`); err != nil {
		t.Fatalf("after a transaction left open: %v", err)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM gc_test WHERE k IN ('left', 'c')`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d of the left-open and the next rows, %v; want the next one alone", n, err)
	}
}
