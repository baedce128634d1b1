package index

import (
	"bytes"
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

// pattern is 1 MiB of bytes none of which is zero.
func pattern() []byte {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i%251 + 1)
	}
	return b
}

// mapRead writes the file at path (pattern), maps it read-only and reads
// every page of it.
func mapRead(t *testing.T, path string) []byte {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pattern(), 0o600); err != nil {
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

// TestReleasePages: the pages of a mapped file leave the process's memory
// when released, those of another file stay, and what is read again is all
// there.
func TestReleasePages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mapFile := func(path string) []byte {
		t.Helper()
		m := mapRead(t, path)
		t.Cleanup(func() { syscall.Munmap(m) })
		return m
	}
	segment := mapFile(filepath.Join(dir, "index", "store", "000001.zap"))
	other := mapFile(filepath.Join(dir, "other.zap"))
	pages := (1 << 20) / os.Getpagesize()
	if got := resident(t, segment); got != pages {
		t.Fatalf("%d of %d pages of the segment mapped after reading it all", got, pages)
	}
	if err := releasePages(segment); err != nil {
		t.Fatal(err)
	}
	if got := resident(t, segment); got != 0 {
		t.Errorf("%d pages of the segment still mapped after the release, want none", got)
	}
	if got := resident(t, other); got != pages {
		t.Errorf("%d of %d pages of another file mapped after the release, want all", got, pages)
	}
	if !bytes.Equal(segment, pattern()) {
		t.Error("the segment's bytes read after the release are not the file's")
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
	if err := idx.releaseMapped(); err != nil {
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

// TestReleaseAfterWork: the pages a batch, a write of new segments or a merge
// read are released once that work is over, not only at the next periodic
// release (an hour away here).
func TestReleaseAfterWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := Dir{Path: filepath.Join(t.TempDir(), "index"), segmentDocs: 400, releaseEvery: time.Hour}
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
	for range 4 {
		if err := idx.Apply(ctx, batch(), nil, int64(n)); err != nil {
			t.Fatal(err)
		}
		if err := idx.persisted(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Every document's stored text: a search maps pages of every segment.
	// A merge the batches began may end meanwhile and release them (work
	// of the index's own): the reading is done again until they stay
	// mapped.
	for try := 0; ; try++ {
		for i := 0; i < n; i += 7 {
			if _, _, ok, err := idx.Content(fmt.Sprintf("f%06d", i)); err != nil || !ok {
				t.Fatalf("content of f%06d: %v %v", i, ok, err)
			}
		}
		if _, kB := mappedSegments(t, d.Path); kB > 0 {
			break
		}
		if try == 20 {
			t.Fatal("nothing of the segments mapped after reading their stored text, 20 times")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A batch, then its write and the merges it brings: each releases.
	if err := idx.Apply(ctx, batch(), nil, int64(n)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		segs, kB := mappedSegments(t, d.Path)
		if kB <= 4*segs { // a page of each at most: the release after the last work
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d kB of %d segments still mapped 5 s after a batch", kB, segs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
