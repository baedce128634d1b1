package indexer

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"atrium/app/drive"
)

// applied is one Apply call the fake index saw.
type applied struct {
	docs    []string // ids
	deletes []string
	weight  int
	cursor  int64
}

// recordingIndex is a drive.SearchIndex that records the batches applied.
type recordingIndex struct {
	drive.SearchIndex // the methods the tests do not use
	mu                sync.Mutex
	batches           []applied
	cursor            int64
	contents          int // Content calls
}

func (x *recordingIndex) Apply(_ context.Context, docs []drive.SearchDoc, deletes []string, cursor int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	a := applied{deletes: slices.Clone(deletes), cursor: cursor}
	for _, d := range docs {
		a.docs = append(a.docs, d.ID)
		a.weight += docWeight(d)
	}
	x.batches = append(x.batches, a)
	x.cursor = cursor
	return nil
}

func (x *recordingIndex) Cursor() (int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.cursor, nil
}

func (x *recordingIndex) Content(string) (string, string, bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.contents++
	return "", "", false, nil
}

func (x *recordingIndex) Close() error { return nil }

// docsApplied returns the ids of every document applied, in order.
func (x *recordingIndex) docsApplied() []string {
	var ids []string
	for _, b := range x.batches {
		ids = append(ids, b.docs...)
	}
	return ids
}

// checkBounds fails t when a batch holds more than maxItems items, or weighs
// more than maxBytes while holding more than one document.
func checkBounds(t *testing.T, batches []applied, maxItems, maxBytes int) {
	t.Helper()
	for i, b := range batches {
		if n := len(b.docs) + len(b.deletes); n > maxItems {
			t.Errorf("batch %d holds %d items, more than %d", i, n, maxItems)
		}
		if b.weight > maxBytes && len(b.docs) > 1 {
			t.Errorf("batch %d of %d documents weighs %d, more than %d", i, len(b.docs), b.weight, maxBytes)
		}
	}
}

// TestBatcherBounds: a batch never holds more than its items nor weighs more
// than its bytes (a lone heavier document goes alone); every document goes
// in once, in order; every batch but the last records the cursor the batcher
// was made with, the last the cursor flushed with.
func TestBatcherBounds(t *testing.T) {
	t.Parallel()
	const maxItems, maxBytes = 4, 10_000
	cases := []struct {
		name    string
		weights []int // of each document (docWeight); -1 a removal
		batches int
	}{
		{"nothing: the cursor still moves", nil, 1},
		{"light documents: by count", []int{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, 3},
		{"removals count as items", []int{-1, -1, -1, -1, -1, 1000}, 2},
		{"heavy documents: by weight", []int{6000, 6000, 6000}, 3},
		{"exactly the budget", []int{maxBytes}, 1},
		{"a lone document over the budget", []int{1000, 50_000, 1000}, 3},
		{"mixed", []int{4000, 4000, 1100, 1100, maxBytes, -1, 1000}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			x := &recordingIndex{}
			b := newBatcher(x, 7)
			b.maxItems, b.maxBytes = maxItems, maxBytes
			var want []string
			var docs int
			b.applied = func(n int) { docs += n }
			ctx := context.Background()
			for i, w := range c.weights {
				id := fmt.Sprintf("f%02d", i)
				var err error
				if w < 0 {
					err = b.remove(ctx, id)
				} else {
					want = append(want, id)
					err = b.add(ctx, drive.SearchDoc{ID: id, Content: strings.Repeat("x", w-docOverhead)})
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := b.flush(ctx, 9); err != nil {
				t.Fatal(err)
			}
			checkBounds(t, x.batches, maxItems, maxBytes)
			if len(x.batches) != c.batches {
				t.Errorf("%d batches, want %d", len(x.batches), c.batches)
			}
			if got := x.docsApplied(); !slices.Equal(got, want) {
				t.Errorf("documents applied %v, want %v", got, want)
			}
			if docs != len(want) {
				t.Errorf("told of %d documents applied, want %d", docs, len(want))
			}
			for i, a := range x.batches {
				wantCursor := int64(7)
				if i == len(x.batches)-1 {
					wantCursor = 9
				}
				if a.cursor != wantCursor {
					t.Errorf("batch %d records cursor %d, want %d", i, a.cursor, wantCursor)
				}
			}
		})
	}
}

// fakeStore is a drive of one owner: folders and files by id, and an outbox
// of events about them.
type fakeStore struct {
	Store    // the methods the tests do not use
	files    map[string]drive.File
	order    []string // ids in creation order
	events   []string // the file id of each event, seq = index + 1
	created  map[int]bool
	below    map[int]bool // the events that may change what is below their item
	subtrees int          // Subtree calls
}

func newFakeStore() *fakeStore {
	return &fakeStore{files: map[string]drive.File{}, created: map[int]bool{}, below: map[int]bool{}}
}

// create adds an item under parent ("" the root) with an event; a file's
// content yields size bytes of text.
func (s *fakeStore) create(id, parent string, folder bool, size int64) {
	f := drive.File{ID: id, OrgID: "org", OwnerID: "u", OwnerName: "U", Name: id + ".txt", IsFolder: folder,
		Status: drive.StatusActive, MimeType: "text/plain"}
	if parent != "" {
		f.ParentID = &parent
	}
	if !folder {
		f.SizeBytes, f.ContentHash = size, "sha256:"+id
	}
	s.files[id] = f
	s.order = append(s.order, id)
	s.events = append(s.events, id)
	s.created[len(s.events)] = true
}

// touch adds an event about id that is not its creation: one that may
// change what is below it (a move), or not (a rename).
func (s *fakeStore) touch(id string, below bool) {
	s.events = append(s.events, id)
	s.below[len(s.events)] = below
}

func (s *fakeStore) DriveEventsAfter(_ context.Context, seq int64, limit int) (drive.SearchChanges, int64, error) {
	ch := drive.SearchChanges{FileIDs: []string{}}
	last := seq
	for i := seq; i < int64(len(s.events)) && i < seq+int64(limit); i++ {
		ch.FileIDs = append(ch.FileIDs, s.events[i])
		if s.created[int(i+1)] {
			ch.Created = append(ch.Created, s.events[i])
		}
		if s.below[int(i+1)] {
			ch.Below = append(ch.Below, s.events[i])
		}
		last = i + 1
	}
	return ch, last, nil
}

func (s *fakeStore) FilesByID(_ context.Context, ids []string) ([]drive.File, error) {
	var out []drive.File
	for _, id := range ids {
		if f, ok := s.files[id]; ok {
			out = append(out, f)
		}
	}
	return out, nil
}

func (s *fakeStore) Ancestors(_ context.Context, id string) ([]drive.File, error) {
	var out []drive.File
	for p := s.files[id].Parent(); p != ""; p = s.files[p].Parent() {
		out = append(out, s.files[p])
	}
	slices.Reverse(out)
	return out, nil
}

func (s *fakeStore) Subtree(_ context.Context, id string, _ bool) ([]drive.File, error) {
	s.subtrees++
	below := map[string]bool{id: true}
	var out []drive.File
	for _, c := range s.order { // parents before children
		if f := s.files[c]; below[f.Parent()] {
			below[c] = true
			out = append(out, f)
		}
	}
	return out, nil
}

func (s *fakeStore) IndexableFiles(_ context.Context, _, after string, limit int) ([]drive.File, error) {
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range s.files {
			if id > after && !yield(id) {
				return
			}
		}
	})
	var out []drive.File
	for _, id := range ids[:min(limit, len(ids))] {
		out = append(out, s.files[id])
	}
	return out, nil
}

func (s *fakeStore) FolderParents(context.Context) (map[string]string, error) {
	m := map[string]string{}
	for id, f := range s.files {
		if f.IsFolder {
			m[id] = f.Parent()
		}
	}
	return m, nil
}

func (s *fakeStore) LastEventSeq(context.Context) (int64, error) { return int64(len(s.events)), nil }

func (s *fakeStore) CountIndexable(context.Context) (int64, error) { return int64(len(s.files)), nil }

// sizedContents opens any content; textExtractor returns size bytes of words
// for a content of size bytes.
type sizedContents struct{}

func (sizedContents) Open(context.Context, string) (io.ReadSeekCloser, error) {
	return struct {
		io.ReadSeeker
		io.Closer
	}{strings.NewReader(""), io.NopCloser(nil)}, nil
}

type textExtractor struct{}

func (textExtractor) Supported(string, string) bool { return true }

func (textExtractor) Text(_ context.Context, _ io.Reader, size int64, _, _ string, max int) (string, bool, error) {
	return strings.Repeat("word ", int(min(size, int64(max)))/5), true, nil
}

// TestPendingBounded: the events about a folder whose subtree holds far more
// text than one batch may (a moved or renamed folder) are applied in batches
// within the bounds, every one but the last under the cursor before the
// events; before, the whole subtree went into one batch.
func TestPendingBounded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files int
		size  int64
	}{
		{"many small files", 3 * batch, 1 << 10},
		{"fewer, larger files", 40, 150_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newFakeStore()
			s.create("dir", "", true, 0)
			for i := range c.files {
				s.create(fmt.Sprintf("f%04d", i), "dir", false, c.size)
			}
			x := &recordingIndex{}
			ix := New(s, sizedContents{}, nil, textExtractor{}, nil)
			ix.idx = x
			ctx := context.Background()
			if err := ix.Pending(ctx); err != nil {
				t.Fatal(err)
			}
			// The folder is moved: everything below it is indexed again.
			s.touch("dir", true)
			start := int64(len(s.events) - 1)
			x.batches = nil
			if err := ix.Pending(ctx); err != nil {
				t.Fatal(err)
			}
			checkBounds(t, x.batches, batch, batchBytes)
			if got := len(x.docsApplied()); got != c.files+1 {
				t.Errorf("%d documents applied, want %d", got, c.files+1)
			}
			if len(x.batches) < 2 {
				t.Fatalf("%d batches, want several", len(x.batches))
			}
			for i, a := range x.batches {
				want := start
				if i == len(x.batches)-1 {
					want = start + 1
				}
				if a.cursor != want {
					t.Errorf("batch %d records cursor %d, want %d", i, a.cursor, want)
				}
			}
		})
	}
}

// TestPendingFolderEvents: a folder is walked only for an event that may
// change what is below it. A new folder's items have events of their own,
// and each item is indexed once (before, a burst into a new folder was
// indexed twice, the first time all in one batch); a renamed one's items do
// not change (a copied folder is renamed after its items are copied).
func TestPendingFolderEvents(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	s.create("dir", "", true, 0)
	s.create("sub", "dir", true, 0)
	for i := range 2 * batch {
		s.create(fmt.Sprintf("f%04d", i), "sub", false, 1<<10)
	}
	s.touch("sub", false) // renamed
	x := &recordingIndex{}
	ix := New(s, sizedContents{}, nil, textExtractor{}, nil)
	ix.idx = x
	if err := ix.Pending(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Every item once, and the renamed folder again by itself.
	got := x.docsApplied()
	if len(got) != len(s.files)+1 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(s.files) {
		t.Errorf("%d documents applied, want %d: each item once, the renamed folder twice", len(got), len(s.files)+1)
	}
	if s.subtrees != 0 {
		t.Errorf("%d subtrees walked, want none", s.subtrees)
	}
	if x.contents != 0 {
		t.Errorf("%d texts looked up in the index for new files, want none", x.contents)
	}
	checkBounds(t, x.batches, batch, batchBytes)
	if c, _ := x.Cursor(); c != int64(len(s.events)) {
		t.Errorf("cursor %d, want %d", c, len(s.events))
	}
}

// TestRebuildBounded: a rebuild applies the drive in batches within the
// bounds and reports every document done.
func TestRebuildBounded(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	s.create("dir", "", true, 0)
	for i := range 30 {
		s.create(fmt.Sprintf("big%02d", i), "dir", false, 180_000)
	}
	for i := range batch {
		s.create(fmt.Sprintf("small%03d", i), "dir", false, 100)
	}
	x := &recordingIndex{}
	ix := New(s, sizedContents{}, buildInto{x}, textExtractor{}, nil)
	var done, total int64
	if err := ix.Rebuild(context.Background(), func(d, t int64) { done, total = d, t }); err != nil {
		t.Fatal(err)
	}
	checkBounds(t, x.batches, batch, batchBytes)
	if n := int64(len(x.docsApplied())); n != int64(len(s.files)) || done != n || total != n {
		t.Errorf("applied %d documents, progress %d of %d, want %d", n, done, total, len(s.files))
	}
	if c, _ := x.Cursor(); c != int64(len(s.events)) {
		t.Errorf("cursor %d, want %d", c, len(s.events))
	}
}

// buildInto is a drive.SearchIndexes whose new index is x.
type buildInto struct{ x *recordingIndex }

func (b buildInto) Open() (drive.SearchIndex, error) { return nil, fmt.Errorf("no index") }

func (b buildInto) Build(_ context.Context, fill func(drive.SearchIndex) error) (drive.SearchIndex, error) {
	if err := fill(b.x); err != nil {
		return nil, err
	}
	return b.x, nil
}
