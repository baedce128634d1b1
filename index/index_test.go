package index_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"atrium/app/drive"
	"atrium/index"
)

func TestIndexLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := index.Dir{Path: filepath.Join(t.TempDir(), "index"), OpenTimeout: 200 * time.Millisecond}
	if _, err := dir.Open(); !errors.Is(err, index.ErrMissing) {
		t.Fatalf("open missing: %v", err)
	}
	now := time.Now().UTC()
	doc := drive.SearchDoc{ID: "f1", OrgID: "o", OwnerID: "u", OwnerName: "Ann Lee", Name: "Quarterly_report-final.pdf",
		MimeType: "application/pdf", MimeGroup: "pdf", ContentHash: "sha256:aa", Content: "Ébauche du budget", SizeBytes: 10,
		CreatedAt: now, UpdatedAt: now}
	idx, err := dir.Build(ctx, func(idx drive.SearchIndex) error { return idx.Apply(ctx, []drive.SearchDoc{doc}, nil, 7) })
	if err != nil {
		t.Fatal(err)
	}
	if c, err := idx.Cursor(); err != nil || c != 7 {
		t.Fatalf("cursor %d %v", c, err)
	}
	if hash, text, ok, err := idx.Content("f1"); err != nil || !ok || hash != "sha256:aa" || text != doc.Content {
		t.Fatalf("content %q %q %v %v", hash, text, ok, err)
	}
	find := func(text, owner string) int {
		t.Helper()
		r, err := idx.Search(ctx, drive.SearchQuery{Text: text, OrgID: "o", OwnerID: owner, SortBy: "relevance", SortOrder: "desc", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return r.Total
	}
	for _, tt := range []struct {
		text, owner string
		want        int
	}{
		{"final", "u", 1},          // a word of the name joined by '-'
		{"quarterly", "u", 1},      // joined by '_'
		{"ebauche", "u", 1},        // accents folded
		{"BUDGET ebauche", "u", 1}, // every word, any order
		{"budget missing", "u", 0},
		{"budget", "someone", 0}, // another owner
	} {
		if got := find(tt.text, tt.owner); got != tt.want {
			t.Errorf("%q by %s: %d, want %d", tt.text, tt.owner, got, tt.want)
		}
	}
	// A second handle (another process) waits for the lock and gives up.
	if _, err := dir.Open(); !errors.Is(err, drive.ErrSearchIndexBusy) {
		t.Fatalf("second open: %v", err)
	}
	if err := idx.Apply(ctx, nil, []string{"f1"}, 9); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	idx, err = dir.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if c, _ := idx.Cursor(); c != 9 {
		t.Fatalf("cursor after reopen %d", c)
	}
	if n, _ := idx.Count(); n != 0 {
		t.Fatalf("%d documents after delete", n)
	}
	if _, err := os.Stat(dir.Path + ".new"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("build left %s.new behind", dir.Path)
	}
}

func TestIndexBuildFailureKeepsTheOldIndex(t *testing.T) {
	ctx := context.Background()
	dir := index.Dir{Path: filepath.Join(t.TempDir(), "index")}
	doc := drive.SearchDoc{ID: "f1", OrgID: "o", OwnerID: "u", Name: "kept.txt"}
	idx, err := dir.Build(ctx, func(idx drive.SearchIndex) error { return idx.Apply(ctx, []drive.SearchDoc{doc}, nil, 1) })
	if err != nil {
		t.Fatal(err)
	}
	idx.Close()
	boom := errors.New("boom")
	if _, err := dir.Build(ctx, func(drive.SearchIndex) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("build: %v", err)
	}
	idx, err = dir.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if n, _ := idx.Count(); n != 1 {
		t.Fatalf("old index has %d documents", n)
	}
}
