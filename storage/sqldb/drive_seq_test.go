package sqldb

import (
	"context"
	"errors"
	"testing"
)

// TestDriveNextSeq: an owner's change sequence goes up by one a write, from
// the value stored, whatever the hint NextSeq keeps says: after a rolled-back
// transaction, after another process wrote the sequence, after the owner's
// sequence was deleted.
func TestDriveNextSeq(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	st := DriveStore{DB: db}
	next := func(owner string) int64 {
		t.Helper()
		var seq int64
		if err := db.InTx(ctx, func(ctx context.Context) error {
			var err error
			seq, err = st.NextSeq(ctx, owner)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return seq
	}
	stored := func(owner string) int64 {
		t.Helper()
		var seq int64
		if err := db.read(ctx).QueryRowContext(ctx, `SELECT coalesce((SELECT seq FROM drive_seq WHERE owner_id = ?), 0)`, owner).Scan(&seq); err != nil {
			t.Fatal(err)
		}
		return seq
	}
	rolledBack := errors.New("rolled back")
	steps := []struct {
		name   string
		before func()
		owner  string
		want   int64
	}{
		{"first write", nil, "u1", 1},
		{"second write", nil, "u1", 2},
		{"another owner", nil, "u2", 1},
		{"after a rolled-back transaction", func() {
			if err := db.InTx(ctx, func(ctx context.Context) error {
				if seq, err := st.NextSeq(ctx, "u1"); err != nil || seq != 3 {
					t.Fatalf("in the rolled-back transaction: %d, %v", seq, err)
				}
				return rolledBack
			}); !errors.Is(err, rolledBack) {
				t.Fatal(err)
			}
		}, "u1", 3},
		{"after another process wrote it", func() {
			if _, err := db.Exec(ctx, `UPDATE drive_seq SET seq = 40 WHERE owner_id = 'u1'`); err != nil {
				t.Fatal(err)
			}
		}, "u1", 41},
		{"after the sequence was deleted", func() {
			if _, err := db.Exec(ctx, `DELETE FROM drive_seq WHERE owner_id = 'u2'`); err != nil {
				t.Fatal(err)
			}
		}, "u2", 1},
		{"and on", nil, "u2", 2},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		if got := next(s.owner); got != s.want {
			t.Fatalf("%s: NextSeq %d, want %d", s.name, got, s.want)
		}
		if got := stored(s.owner); got != s.want {
			t.Fatalf("%s: stored %d, want %d", s.name, got, s.want)
		}
	}
}
