package webdav

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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

// The chunks of a MOVE are read in their order, each opened as it is
// reached; a chunk that changed size since the listing is refused, not mixed
// into the file.
func TestChunkReaderRefusesAChangedChunk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := NewDirChunks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &chunks{store: store}
	if _, err := store.MakeFolder(ctx, "u", "t"); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"2": "world", "1": "hello "} {
		if err := store.Put(ctx, "u", "t", name, strings.NewReader(body), int64(len(body)), 100); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.list(ctx, "u", "t")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(&chunkReader{ctx: ctx, store: store, user: "u", transfer: "t", list: list})
	if err != nil || string(got) != "hello world" {
		t.Fatalf("read %q (%v), want the chunks in their order", got, err)
	}
	if err := store.Put(ctx, "u", "t", "2", strings.NewReader("world, longer"), 13, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(&chunkReader{ctx: ctx, store: store, user: "u", transfer: "t", list: list}); err == nil {
		t.Fatal("a chunk replaced since the listing was read into the file")
	}
}
