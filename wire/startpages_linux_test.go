package wire

import (
	"os"
	"syscall"
	"testing"
)

// The pages of the executable's code and read-only data that this process
// touched leave its resident memory when released (the test binary is mapped
// by this process alone). Not parallel: a test running beside it would fault
// the pages back in between the release and the count.
func TestReleaseStartPages(t *testing.T) {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	ranges, rss, err := exeMappings(fi.Sys().(*syscall.Stat_t).Ino)
	if err != nil {
		t.Fatal(err)
	}
	if len(ranges) < 2 || rss < 1024 {
		t.Fatalf("the executable's code and read-only data: %d mappings, %d kB resident", len(ranges), rss)
	}
	before, after, err := releaseStartPages()
	if err != nil {
		t.Skipf("this kernel does not release pages on request: %v", err)
	}
	t.Logf("resident: %d kB before, %d kB after", before, after)
	if before < 1024 || after > before/2 {
		t.Errorf("resident pages of the executable: %d kB before, %d kB after; want at most half left", before, after)
	}
}

// The periodic release (releaseExecutable) unmaps the executable's pages too,
// without counting them. Not parallel, as above.
func TestReleaseExecutable(t *testing.T) {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	_, before, err := exeMappings(ino)
	if err != nil {
		t.Fatal(err)
	}
	if err := releaseExecutable(); err != nil {
		t.Skipf("this kernel does not release pages on request: %v", err)
	}
	_, after, err := exeMappings(ino)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("resident: %d kB before, %d kB after", before, after)
	if before < 1024 || after > before/2 {
		t.Errorf("resident pages of the executable: %d kB before, %d kB after; want at most half left", before, after)
	}
}
