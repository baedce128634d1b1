package index_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"atrium/app/drive"
	"atrium/index"
)

func TestIndexLifecycle(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// TestTimeRanges: the created and modified filters are exact to the
// millisecond the store keeps, however the bounds fall on the indexed whole
// seconds, before 1970 too; sorting by a time is by the millisecond.
func TestTimeRanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	at := map[string]time.Time{
		"a": base.Add(-1500 * time.Millisecond), // 11:59:58.500
		"b": base.Add(-1 * time.Millisecond),    // 11:59:59.999
		"c": base,                               // 12:00:00.000
		"d": base.Add(1 * time.Millisecond),     // 12:00:00.001
		"e": base.Add(999 * time.Millisecond),   // 12:00:00.999
		"f": base.Add(1000 * time.Millisecond),  // 12:00:01.000
		"g": base.Add(5 * time.Second),          // 12:00:05.000
		"h": time.Date(1969, 12, 31, 23, 59, 59, 500e6, time.UTC),
		"i": time.Date(1969, 12, 31, 23, 59, 58, 0, time.UTC),
	}
	var docs []drive.SearchDoc
	for id, c := range at {
		// Modified one hour after created: the two fields are apart.
		docs = append(docs, drive.SearchDoc{ID: id, OrgID: "o", OwnerID: "u", Name: id + ".txt", CreatedAt: c, UpdatedAt: c.Add(time.Hour)})
	}
	dir := index.Dir{Path: filepath.Join(t.TempDir(), "index")}
	idx, err := dir.Build(ctx, func(idx drive.SearchIndex) error { return idx.Apply(ctx, docs, nil, 1) })
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	ptr := func(d time.Duration) *time.Time { v := base.Add(d); return &v }
	epoch := func(d time.Duration) *time.Time { v := time.Unix(0, 0).UTC().Add(d); return &v }
	search := func(q drive.SearchQuery) string {
		t.Helper()
		q.OrgID, q.OwnerID, q.Limit = "o", "u", 20
		if q.SortBy == "" {
			q.SortBy, q.SortOrder = "created_at", "asc"
		}
		r, err := idx.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range r.Hits {
			ids = append(ids, h.ID)
		}
		if len(ids) != r.Total {
			t.Fatalf("%d hits of %d", len(ids), r.Total)
		}
		return strings.Join(ids, "")
	}
	for _, tt := range []struct {
		name          string
		after, before *time.Time
		want          string
	}{
		{"no bound", nil, nil, "ihabcdefg"},
		{"after a whole second", ptr(0), nil, "cdefg"},
		{"after a millisecond", ptr(time.Millisecond), nil, "defg"},
		{"after within a millisecond", ptr(500 * time.Microsecond), nil, "defg"},
		{"after the second's last millisecond", ptr(999 * time.Millisecond), nil, "efg"},
		{"before a whole second", nil, ptr(0), "ihabc"},
		{"before within a millisecond", nil, ptr(time.Millisecond - 1), "ihabc"},
		{"before the second's last millisecond", nil, ptr(-time.Millisecond), "ihab"},
		{"within one second", ptr(time.Millisecond), ptr(999 * time.Millisecond), "de"},
		{"one millisecond", ptr(999 * time.Millisecond), ptr(999 * time.Millisecond), "e"},
		{"across adjacent seconds", ptr(-time.Millisecond), ptr(time.Millisecond), "bcd"},
		{"across several seconds", ptr(-1500 * time.Millisecond), ptr(5 * time.Second), "abcdefg"},
		{"whole seconds between edges", ptr(-1499 * time.Millisecond), ptr(4999 * time.Millisecond), "bcdef"},
		{"empty", ptr(2 * time.Second), ptr(3 * time.Second), ""},
		{"reversed", ptr(time.Second), ptr(0), ""},
		{"before 1970", nil, epoch(-time.Second), "i"},
		{"around 1970", epoch(-time.Second + 1), epoch(0), "h"},
		{"after 1970", epoch(0), ptr(-2 * time.Second), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := search(drive.SearchQuery{CreatedAfter: tt.after, CreatedBefore: tt.before}); got != tt.want {
				t.Errorf("created: %q, want %q", got, tt.want)
			}
			// The same an hour later by the modified time.
			later := func(p *time.Time) *time.Time {
				if p == nil {
					return nil
				}
				v := p.Add(time.Hour)
				return &v
			}
			if got := search(drive.SearchQuery{ModifiedAfter: later(tt.after), ModifiedBefore: later(tt.before)}); got != tt.want {
				t.Errorf("modified: %q, want %q", got, tt.want)
			}
		})
	}
	if got := search(drive.SearchQuery{SortBy: "updated_at", SortOrder: "desc"}); got != "gfedcbahi" {
		t.Errorf("by modified, newest first: %q", got)
	}
}
