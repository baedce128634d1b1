package index

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"

	"atrium/app/drive"
)

// segmentSizes returns the documents of each segment of x.
func segmentSizes(t *testing.T, x *Index) []uint64 {
	t.Helper()
	adv, err := x.bi.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.(*scorch.Scorch).Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var sizes []uint64
	for _, s := range r.(*scorch.IndexSnapshot).Segments() {
		sizes = append(sizes, s.Count())
	}
	return sizes
}

// TestBuildSegmentBound: a build merges its batches into segments of at
// most the bound (a merge maps all of its segments), as few as that allows,
// and every batch is on disk when Build returns: the index opened again
// holds them all. Before, a build ended in one segment of every document.
func TestBuildSegmentBound(t *testing.T) {
	t.Parallel()
	const docs, perBatch, bound = 240, 20, 60
	ctx := context.Background()
	d := Dir{Path: filepath.Join(t.TempDir(), "index"), segmentDocs: bound}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	idx, err := d.Build(ctx, func(idx drive.SearchIndex) error {
		for i := 0; i < docs; i += perBatch {
			var batch []drive.SearchDoc
			for j := i; j < i+perBatch; j++ {
				batch = append(batch, drive.SearchDoc{ID: fmt.Sprintf("f%04d", j), OrgID: "o", OwnerID: "u", Name: fmt.Sprintf("note %d.txt", j),
					Content: "some words", CreatedAt: at, UpdatedAt: at})
			}
			if err := idx.Apply(ctx, batch, nil, 7); err != nil {
				return err
			}
			// On disk one by one, as batches a second apart would be (the
			// persister merges the batches of a second in memory first).
			if err := idx.(*Index).persisted(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if n, err := idx.Count(); err != nil || n != docs {
		t.Fatalf("the index opened after the build holds %d documents (%v), want %d", n, err, docs)
	}
	if c, err := idx.Cursor(); err != nil || c != 7 {
		t.Errorf("cursor %d (%v), want 7", c, err)
	}
	sizes := segmentSizes(t, idx.(*Index))
	for _, n := range sizes {
		if n > bound {
			t.Errorf("a segment of %d documents, more than %d: %v", n, bound, sizes)
		}
	}
	if len(sizes) > 2*docs/bound {
		t.Errorf("%d segments %v, want at most %d: merged up to the bound", len(sizes), sizes, 2*docs/bound)
	}
}

// TestUnwrittenBound: batches applied faster than the persister writes them
// (it naps here) wait once maxUnwritten of them are in memory only, rather
// than pile up there.
func TestUnwrittenBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := Dir{Path: filepath.Join(t.TempDir(), "index"), napMS: 200}
	x, err := d.Build(ctx, func(drive.SearchIndex) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	idx := x.(*Index)
	defer idx.Close()
	adv, err := idx.bi.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	most := 0
	for i := range 20 {
		doc := drive.SearchDoc{ID: fmt.Sprintf("f%04d", i), OrgID: "o", OwnerID: "u", Name: fmt.Sprintf("note %d.txt", i),
			Content: "some words", CreatedAt: at, UpdatedAt: at}
		if err := idx.Apply(ctx, []drive.SearchDoc{doc}, nil, int64(i)); err != nil {
			t.Fatal(err)
		}
		r, err := adv.(*scorch.Scorch).Reader()
		if err != nil {
			t.Fatal(err)
		}
		inMemory := 0
		for _, s := range r.(*scorch.IndexSnapshot).Segments() {
			if _, onDisk := s.Segment().(interface{ Data() []byte }); !onDisk {
				inMemory++
			}
		}
		r.Close()
		most = max(most, inMemory)
	}
	if most > maxUnwritten {
		t.Errorf("%d segments in memory only at once, want at most %d", most, maxUnwritten)
	}
	if n, err := idx.Count(); err != nil || n != 20 {
		t.Errorf("%d documents (%v), want 20", n, err)
	}
}
