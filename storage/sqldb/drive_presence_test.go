package sqldb

import (
	"context"
	"testing"
	"time"

	"atrium/app/drive"
)

// TestEditorPresence: a session's presence is recorded once (its arrival
// kept), refreshed only when stale, listed by when it was last seen, and
// pruned once it is old.
func TestEditorPresence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := DriveStore{DB: openTest(t)}
	t0 := time.UnixMilli(1_700_000_000_000)
	if ok, err := s.SeenEditor(ctx, "f1", "u1", t0, t0); err != nil || ok {
		t.Fatalf("seen before any arrival: %v %v", ok, err)
	}
	for _, k := range []string{"u1", "link:s1"} {
		if err := s.AddEditor(ctx, "f1", k, drive.EditorPresence{UserID: k, Name: k, Guest: k != "u1", Since: t0, Seen: t0}); err != nil {
			t.Fatal(err)
		}
	}
	later := t0.Add(10 * time.Minute)
	if err := s.AddEditor(ctx, "f1", "u1", drive.EditorPresence{UserID: "u1", Since: later, Seen: later}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SeenEditor(ctx, "f1", "link:s1", later, later.Add(-time.Minute)); err != nil || !ok {
		t.Fatalf("seen: %v %v", ok, err)
	}
	eds, err := s.Editors(ctx, "f1", later)
	// Both arrived at t0 (the second arrival of u1 kept the first's time):
	// in the order of their keys.
	if err != nil || len(eds) != 2 || eds[0].UserID != "link:s1" || !eds[0].Guest || eds[1].Guest || !eds[1].Since.Equal(t0) ||
		!eds[1].Seen.Equal(later) {
		t.Fatalf("editors since the refresh: %+v %v", eds, err)
	}
	if n, err := s.PruneEditors(ctx, later.Add(time.Second)); err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want 2", n, err)
	}
	if eds, err := s.Editors(ctx, "f1", time.Time{}); err != nil || len(eds) != 0 {
		t.Fatalf("after the prune: %+v %v", eds, err)
	}
}
