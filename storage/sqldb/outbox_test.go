package sqldb

import (
	"context"
	"testing"
	"time"

	"atrium/app"
)

// Pruning the outbox moves its horizon; the newest seq stays the newest ever
// written, so an index built after everything was pruned is not taken for
// one that missed events.
func TestOutboxPruning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	st := DriveStore{DB: db}
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	emit := func(at time.Time) {
		t.Helper()
		if err := db.InTx(ctx, func(ctx context.Context) error {
			return Outbox{DB: db}.Emit(ctx, app.Event{Type: "drive.file.created", OrgID: "o", CreatedAt: at, Data: map[string]any{"file_id": "f"}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, horizon, last int64) {
		t.Helper()
		h, err1 := st.EventsHorizon(ctx)
		l, err2 := st.LastEventSeq(ctx)
		if err1 != nil || err2 != nil || h != horizon || l != last {
			t.Fatalf("%s: horizon %d, last %d (%v %v); want %d, %d", when, h, l, err1, err2, horizon, last)
		}
	}
	check("empty", 0, 0)
	for i := range 5 {
		emit(day.Add(time.Duration(i) * time.Hour))
	}
	check("five events", 0, 5)

	cases := []struct {
		name          string
		upTo          int64
		before        time.Time
		pruned        int
		horizon, last int64
	}{
		{"nothing old enough", 5, day, 0, 0, 5},
		{"only up to the index's cursor", 2, day.Add(24 * time.Hour), 2, 2, 5},
		{"only the old ones", 5, day.Add(3*time.Hour + time.Minute), 2, 4, 5},
		{"all of them", 5, day.Add(24 * time.Hour), 1, 5, 5},
	}
	for _, tc := range cases {
		n, err := (Outbox{DB: db}).PruneEvents(ctx, tc.upTo, tc.before, 1000)
		if err != nil || n != tc.pruned {
			t.Fatalf("%s: pruned %d (%v), want %d", tc.name, n, err, tc.pruned)
		}
		check(tc.name, tc.horizon, tc.last)
	}
	emit(day.Add(48 * time.Hour))
	check("a new event after all were pruned", 5, 6)
}

// TestOutboxMigrationKeepsSequence: migration 00024 rebuilds the outbox
// without its index on id, keeping the events and the AUTOINCREMENT mark, so
// that an event after it gets a seq above every one given before, even one
// pruned; and back down.
func TestOutboxMigrationKeepsSequence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw, p := migrationsOn(t)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	state := func() (events string, mark int64, idIndex int) {
		t.Helper()
		if err := raw.QueryRowContext(ctx, `SELECT coalesce(group_concat(seq || ':' || id, ','), '') FROM (SELECT seq, id FROM outbox ORDER BY seq)`).Scan(&events); err != nil {
			t.Fatal(err)
		}
		if err := raw.QueryRowContext(ctx, `SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'outbox'), -1)`).Scan(&mark); err != nil {
			t.Fatal(err)
		}
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM pragma_index_list('outbox')`).Scan(&idIndex); err != nil {
			t.Fatal(err)
		}
		return events, mark, idIndex
	}
	if _, err := p.UpTo(ctx, 23); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"e1", "e2", "e3", "e4"} {
		exec(`INSERT INTO outbox (id, type, organization_id, data, created_at) VALUES (?, 'drive.file.created', 'o', '{}', 1)`, id)
	}
	exec(`DELETE FROM outbox WHERE seq >= 3`) // pruned: the mark stays at 4
	if ev, mark, idx := state(); ev != "1:e1,2:e2" || mark != 4 || idx != 1 {
		t.Fatalf("before: events %q, mark %d, indexes %d", ev, mark, idx)
	}
	if _, err := p.UpTo(ctx, 24); err != nil {
		t.Fatal(err)
	}
	if ev, mark, idx := state(); ev != "1:e1,2:e2" || mark != 4 || idx != 0 {
		t.Fatalf("after 00024: events %q, mark %d, indexes %d; want the events, mark 4, no index", ev, mark, idx)
	}
	exec(`INSERT INTO outbox (id, type, organization_id, data, created_at) VALUES ('e5', 'drive.file.created', 'o', '{}', 1)`)
	if ev, mark, _ := state(); ev != "1:e1,2:e2,5:e5" || mark != 5 {
		t.Fatalf("the next event: events %q, mark %d; want seq 5", ev, mark)
	}
	if _, err := p.DownTo(ctx, 23); err != nil {
		t.Fatal(err)
	}
	if ev, mark, idx := state(); ev != "1:e1,2:e2,5:e5" || mark != 5 || idx != 1 {
		t.Fatalf("down again: events %q, mark %d, indexes %d", ev, mark, idx)
	}
}

// A reader of the outbox skips nothing: an event numbered before another is
// visible before it. Transaction A emits first and commits last; B emits and
// commits meanwhile. On PostgreSQL, a sequence alone would number A's event
// 1 and B's 2 and show B's while A is open, and a reader that moved past 2
// would never see 1; events are numbered in commit order (orderEvents), so
// B's waits for A. On SQLite B waits for the writer A holds.
func TestOutboxReadersSkipNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	o := Outbox{db}
	emitted, release := make(chan struct{}), make(chan struct{})
	errs := make(chan error, 2)
	go func() {
		errs <- db.InTx(ctx, func(ctx context.Context) error {
			if err := o.Emit(ctx, app.Event{ID: "a", Type: "t", OrgID: "o"}); err != nil {
				return err
			}
			close(emitted)
			<-release
			return nil
		})
	}()
	<-emitted
	bDone := make(chan struct{})
	go func() {
		errs <- db.InTx(ctx, func(ctx context.Context) error { return o.Emit(ctx, app.Event{ID: "b", Type: "t", OrgID: "o"}) })
		close(bDone)
	}()
	// What passing time is for: B has all the time it needs to commit
	// ahead of A, were it free to.
	select {
	case <-bDone:
		t.Fatal("B committed its event while A, which emitted first, was open")
	case <-time.After(300 * time.Millisecond):
	}
	seen, _, err := o.Events(ctx, 0, 10)
	if err != nil || len(seen) != 0 {
		t.Fatalf("while A is open the reader sees %v (%v), want nothing", seen, err)
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	evs, seqs, err := o.Events(ctx, 0, 10)
	if err != nil || len(evs) != 2 || evs[0].ID != "a" || evs[1].ID != "b" || seqs[0] >= seqs[1] {
		t.Fatalf("events %v at %v (%v), want a then b", evs, seqs, err)
	}
}
