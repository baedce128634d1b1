package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// Small contents commit with the transaction they are put in, or not at all;
// Data, Exists, Delete and Walk see what committed, Walk a page at a time.
func TestSmallBlobs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atrium.db")
	if _, err := Migrate(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sb := SmallBlobs{db}
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	hash := func(i int) string { return fmt.Sprintf("%064x", i) }

	refused := errors.New("refused")
	if err := db.InTx(ctx, func(ctx context.Context) error {
		if err := sb.Put(ctx, hash(1), []byte("rolled back"), at); err != nil {
			return err
		}
		return refused
	}); !errors.Is(err, refused) {
		t.Fatalf("InTx: %v", err)
	}
	if ok, err := sb.Exists(ctx, hash(1)); err != nil || ok {
		t.Fatalf("a rolled-back put is stored: %v %v", ok, err)
	}
	if _, err := sb.Data(ctx, hash(1)); !errors.Is(err, ErrNoSmallBlob) {
		t.Fatalf("Data of a missing content: %v", err)
	}

	if err := db.InTx(ctx, func(ctx context.Context) error {
		for i := range 1001 { // more than a page of Walk
			if err := sb.Put(ctx, hash(i), []byte(fmt.Sprint("content ", i)), at.Add(time.Duration(i)*time.Millisecond)); err != nil {
				return err
			}
		}
		// The same hash again keeps the first row (the same hash is the same bytes).
		return sb.Put(ctx, hash(7), []byte("other"), at)
	}); err != nil {
		t.Fatal(err)
	}
	if err := sb.Put(ctx, hash(2000), nil, at); err != nil { // the empty content, outside a transaction
		t.Fatal(err)
	}
	for _, c := range []struct {
		hash, want string
	}{{hash(0), "content 0"}, {hash(7), "content 7"}, {hash(1000), "content 1000"}, {hash(2000), ""}} {
		if got, err := sb.Data(ctx, c.hash); err != nil || got == nil || string(got) != c.want {
			t.Errorf("Data(%s) = %q %v, want %q", c.hash[56:], got, err, c.want)
		}
	}
	if err := sb.Delete(ctx, hash(5)); err != nil {
		t.Fatal(err)
	}
	if err := sb.Delete(ctx, hash(5)); err != nil {
		t.Fatalf("deleting a missing content: %v", err)
	}
	seen := map[string]time.Time{}
	prev := ""
	if err := sb.Walk(ctx, func(h string, written time.Time) error {
		if h <= prev {
			t.Fatalf("Walk: %s after %s", h, prev)
		}
		prev, seen[h] = h, written
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1001 {
		t.Errorf("Walk saw %d contents, want 1001", len(seen))
	}
	if _, ok := seen[hash(5)]; ok {
		t.Error("Walk saw a deleted content")
	}
	if got := seen[hash(3)]; !got.Equal(at.Add(3 * time.Millisecond)) {
		t.Errorf("Walk: hash 3 written at %v", got)
	}
	stop := errors.New("stop")
	n := 0
	if err := sb.Walk(ctx, func(string, time.Time) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("Walk returns fn's error: %v after %d", err, n)
	}
}
