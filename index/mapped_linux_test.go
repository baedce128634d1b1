package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"atrium/app/drive"
)

// resident returns how many pages of m are mapped in this process
// (/proc/self/pagemap; mincore would count the pages in the page cache,
// which a release leaves there).
func resident(t *testing.T, m []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no pagemap: %v", err)
	}
	defer f.Close()
	page := os.Getpagesize()
	start := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	buf := make([]byte, 8*(len(m)/page))
	if _, err := f.ReadAt(buf, int64(start/uintptr(page))*8); err != nil {
		t.Skipf("pagemap: %v", err)
	}
	n := 0
	for i := 0; i < len(buf); i += 8 {
		if buf[i+7]&0x80 != 0 { // bit 63: present
			n++
		}
	}
	return n
}

var sink byte

// mapRead maps the file at path, 1 MiB of zeros, read-only and reads every
// page of it.
func mapRead(t *testing.T, path string) []byte {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, 1<<20, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(m); i += os.Getpagesize() {
		sink += m[i]
	}
	return m
}

// TestReleaseClosedSegment: a segment closed (unmapped) between the listing
// of the mappings and their release does not keep the others mapped, nor
// fail the release: the index's release once stopped for good at the first
// such race, and its pages stayed mapped from then on.
func TestReleaseClosedSegment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	closed := mapRead(t, filepath.Join(dir, "1.zap"))
	open := mapRead(t, filepath.Join(dir, "2.zap"))
	defer syscall.Munmap(open)
	ranges, err := mappingsUnder(dir)
	if err != nil || len(ranges) != 2 {
		t.Fatalf("mappings %v (%v), want 2", ranges, err)
	}
	if err := syscall.Munmap(closed); err != nil {
		t.Fatal(err)
	}
	if err := releaseRanges(ranges); err != nil {
		t.Errorf("release with a segment closed meanwhile: %v", err)
	}
	if got := resident(t, open); got != 0 {
		t.Errorf("%d pages of the open segment still mapped, want none", got)
	}
}

// TestReleaseMapped: the pages of the files under the index's directory
// leave the process's memory when released; those of other files stay.
func TestReleaseMapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mapFile := func(path string) []byte {
		t.Helper()
		m := mapRead(t, path)
		t.Cleanup(func() { syscall.Munmap(m) })
		return m
	}
	segment := mapFile(filepath.Join(dir, "index", "store", "000001.zap"))
	other := mapFile(filepath.Join(dir, "index.other", "000001.zap")) // a sibling with the same prefix
	pages := (1 << 20) / os.Getpagesize()
	if got := resident(t, segment); got != pages {
		t.Fatalf("%d of %d pages of the segment mapped after reading it all", got, pages)
	}
	if err := releaseMapped(filepath.Join(dir, "index")); err != nil {
		t.Fatal(err)
	}
	if got := resident(t, segment); got != 0 {
		t.Errorf("%d pages of the segment still mapped after the release, want none", got)
	}
	if got := resident(t, other); got != pages {
		t.Errorf("%d of %d pages of a file outside the index mapped after the release, want all", got, pages)
	}
	// Reading it again maps the pages again: the data is all there.
	for i, b := range segment {
		if b != 0 {
			t.Fatalf("byte %d is %d after the release, want 0", i, b)
		}
	}
}

// mappedSegments returns how many segment files of dir this process maps
// and how many kB of them are resident (/proc/self/smaps).
func mappedSegments(t *testing.T, dir string) (n, kB int) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	in := false
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			in = len(f) >= 6 && strings.HasPrefix(f[5], dir+"/") && strings.HasSuffix(f[5], ".zap")
			if in {
				n++
			}
			continue
		}
		if in && len(f) >= 2 && f[0] == "Rss:" {
			v, _ := strconv.Atoi(f[1])
			kB += v
		}
	}
	return n, kB
}

// TestBatchMapsLittle: a batch reads a little of every segment (the ids it
// replaces), and maps little more than that: the segments are written in
// 64 KiB writes, whose page-cache folios a read maps whole. With zap's 1 MiB
// writes, a kernel that keeps a file in folios as large as its writes (Linux
// 6.18 here) mapped 1 MiB of each segment a batch.
func TestBatchMapsLittle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := Dir{Path: filepath.Join(t.TempDir(), "index"), segmentDocs: 400}
	x, err := d.Build(ctx, func(drive.SearchIndex) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	idx := x.(*Index)
	defer idx.Close()
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	batch := func() []drive.SearchDoc {
		var docs []drive.SearchDoc
		for range 100 {
			docs = append(docs, drive.SearchDoc{ID: fmt.Sprintf("f%06d", n), OrgID: "o", OwnerID: "u", Name: fmt.Sprintf("note %d.txt", n),
				Content: strings.Repeat(fmt.Sprintf("word%d and more words ", n%97), 50), CreatedAt: at, UpdatedAt: at})
			n++
		}
		return docs
	}
	for range 8 {
		if err := idx.Apply(ctx, batch(), nil, int64(n)); err != nil {
			t.Fatal(err)
		}
		if err := idx.persisted(ctx); err != nil { // segments on disk, merged by the merge path
			t.Fatal(err)
		}
	}
	if err := releaseMapped(d.Path); err != nil {
		t.Fatal(err)
	}
	if err := idx.Apply(ctx, batch(), nil, int64(n)); err != nil {
		t.Fatal(err)
	}
	segs, kB := mappedSegments(t, d.Path)
	if segs < 2 {
		t.Fatalf("%d segments mapped, want several", segs)
	}
	if kB > segs*256 {
		t.Errorf("a batch mapped %d kB of %d segments, more than 256 kB each", kB, segs)
	}
}
