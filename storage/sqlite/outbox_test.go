package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"atrium/app"
)

// Pruning the outbox moves its horizon; the newest seq stays the newest ever
// written, so an index built after everything was pruned is not taken for
// one that missed events.
func TestOutboxPruning(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "atrium.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
