package index

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
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

// TestReleaseMapped: the pages of the files under the index's directory
// leave the process's memory when released; those of other files stay.
func TestReleaseMapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mapFile := func(path string) []byte {
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
		t.Cleanup(func() { syscall.Munmap(m) })
		for i := 0; i < len(m); i += os.Getpagesize() {
			sink += m[i]
		}
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
