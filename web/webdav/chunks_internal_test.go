package webdav

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An upload folder untouched for the lifetime is deleted by a sweep; one in
// use stays; sweeps run at most every chunkSweepEvery.
func TestChunkFoldersExpire(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store, err := NewDirChunks(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &chunks{store: store, ttl: 24 * time.Hour}
	ctx := context.Background()
	now := time.Now()
	mk := func(name string, age time.Duration) string {
		t.Helper()
		p := filepath.Join(dir, "user", name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "0000000000000000"), []byte("chunk"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	old, recent := mk("1", 25*time.Hour), mk("2", time.Hour)
	c.sweep(ctx, now, slog.Default())
	if exists(old) || !exists(recent) {
		t.Fatalf("after a sweep: old %v, recent %v", exists(old), exists(recent))
	}
	later := mk("3", 30*time.Hour)
	c.sweep(ctx, now.Add(time.Minute), slog.Default())
	if !exists(later) {
		t.Fatal("a sweep ran again within chunkSweepEvery")
	}
	c.sweep(ctx, now.Add(chunkSweepEvery+time.Second), slog.Default())
	if exists(later) {
		t.Fatal("the next sweep kept an abandoned folder")
	}
}
