package sqldb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"atrium/app"
)

// LiveItemAt follows the names from the root of the owner's drive through
// live items only and returns the last one whole; a name missing on the way,
// a trashed folder, a file on the way or another owner's drive find nothing.
func TestDriveLiveItemAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s := lockTree(t) // u1: d1/d2/d3/f
	trashed, err := s.File(ctx, "d3")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		owner string
		keys  []string
		want  string // the item's id, "" for not found
	}{
		{"a folder at the top", "u1", []string{"d1"}, "d1"},
		{"a folder below", "u1", []string{"d1", "d2"}, "d2"},
		{"a file four deep", "u1", []string{"d1", "d2", "d3", "f"}, "f"},
		{"a missing name at the top", "u1", []string{"x"}, ""},
		{"a missing name on the way", "u1", []string{"d1", "x", "d3"}, ""},
		{"a name under a file", "u1", []string{"d1", "d2", "d3", "f", "g"}, ""},
		{"a folder skipped", "u1", []string{"d2"}, ""},
		{"another owner's drive", "u2", []string{"d1"}, ""},
	}
	check := func(t *testing.T, owner string, keys []string, want string) {
		t.Helper()
		f, err := s.LiveItemAt(ctx, owner, keys)
		if want == "" {
			if app.ErrorCode(err) != app.ENotFound {
				t.Fatalf("LiveItemAt(%v): %+v, %v; want not found", keys, f, err)
			}
			return
		}
		if err != nil || f.ID != want || f.Name != want || f.OwnerID != owner {
			t.Fatalf("LiveItemAt(%v): %+v, %v; want %s", keys, f, err, want)
		}
	}
	for _, c := range cases {
		check(t, c.owner, c.keys, c.want)
	}
	// A trashed folder hides what is below it, and itself.
	now := time.Now()
	trashed.TrashedAt, trashed.TrashRoot = &now, "d3"
	if err := s.UpdateFile(ctx, trashed); err != nil {
		t.Fatal(err)
	}
	check(t, "u1", []string{"d1", "d2", "d3"}, "")
	check(t, "u1", []string{"d1", "d2", "d3", "f"}, "")
	check(t, "u1", []string{"d1", "d2"}, "d2")
}

// BenchmarkDriveLiveItemAt is a PUT's folder walk in its write transaction,
// one and three folders deep: LiveItemAt against ResolvePath's recursive
// query, and the empty transaction around them.
//
//	go test -run '^$' -bench BenchmarkDriveLiveItemAt ./storage/sqldb/
func BenchmarkDriveLiveItemAt(b *testing.B) {
	ctx := context.Background()
	db, s := lockTree(b)
	inTx := func(b *testing.B, fn func(ctx context.Context) error) {
		for b.Loop() {
			if err := db.InTx(ctx, fn); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, keys := range [][]string{{"d1"}, {"d1", "d2", "d3"}} {
		deep := fmt.Sprintf("%d deep", len(keys))
		b.Run("LiveItemAt/"+deep, func(b *testing.B) {
			inTx(b, func(ctx context.Context) error {
				_, err := s.LiveItemAt(ctx, "u1", keys)
				return err
			})
		})
		b.Run("ResolvePath/"+deep, func(b *testing.B) {
			inTx(b, func(ctx context.Context) error {
				items, err := s.ResolvePath(ctx, "u1", "", keys)
				if err == nil && len(items) != len(keys) {
					err = fmt.Errorf("%d items", len(items))
				}
				return err
			})
		})
	}
	b.Run("empty transaction", func(b *testing.B) {
		inTx(b, func(ctx context.Context) error { return nil })
	})
}
