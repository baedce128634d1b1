package index

import (
	"fmt"
	"syscall"
)

// releasePages drops this process's mapping of the pages of m, a read-only
// mapping of a segment file, which Bleve reads in place. Every page a search,
// a batch's look-up of the ids it replaces or a merge touched stays mapped,
// and counted in the process's resident memory, for as long as its segment
// lives: a few MB a segment, a few hundred MB for the merges of a large
// index. MADV_DONTNEED on a read-only mapping of a file drops the mapping and
// nothing else (as for the executable's pages, wire): the pages
// stay in the page cache, for the kernel to keep or reclaim as memory allows,
// and the ones read again come back with a minor fault. The caller holds the
// segment open (releaseMapped): a range unmapped meanwhile and mapped again
// for something else would lose that memory's contents.
func releasePages(m []byte) error {
	if len(m) == 0 {
		return nil
	}
	if err := syscall.Madvise(m, syscall.MADV_DONTNEED); err != nil {
		return fmt.Errorf("release the index's mapped pages: madvise: %w", err)
	}
	return nil
}
