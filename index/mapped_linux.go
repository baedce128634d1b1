package index

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseMapped drops this process's mapping of the pages of the files under
// dir: the index's segments, which Bleve maps read-only and reads in place.
// Every page a search, a batch's look-up of the ids it replaces or a merge
// touched stays mapped, and counted in the process's resident memory, for as
// long as its segment lives: a few MB a segment, a few hundred MB for the
// merges of a large index. MADV_DONTNEED on these read-only mappings of the
// files drops the mapping and nothing else (as for the executable's start-up
// pages, cmd/atrium/wire): the pages stay in the page cache, for the kernel to
// keep or reclaim as memory allows, and the ones read again come back with a
// minor fault.
func releaseMapped(dir string) error {
	ranges, err := mappingsUnder(dir)
	if err != nil {
		return err
	}
	return releaseRanges(ranges)
}

// releaseRanges releases the pages of the mappings ranges (start, end). A
// segment closed since the mappings were listed is no longer mapped (ENOMEM):
// nothing to release; the others are released all the same.
func releaseRanges(ranges [][2]uintptr) error {
	var first error
	for _, r := range ranges {
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, r[0], r[1]-r[0], syscall.MADV_DONTNEED); e != 0 && e != syscall.ENOMEM && first == nil {
			first = fmt.Errorf("release the index's mapped pages: madvise: %w", e)
		}
	}
	return first
}

// mappingsUnder returns this process's read-only mappings (start, end) of
// files under dir, deleted ones too.
func mappingsUnder(dir string) ([][2]uintptr, error) {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, fmt.Errorf("release the index's mapped pages: %w", err)
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var ranges [][2]uintptr
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// start-end perms offset dev inode path; only the path has a slash.
		line := sc.Text()
		i := strings.IndexByte(line, '/')
		f := strings.Fields(line)
		if i < 0 || len(f) < 6 || len(f[1]) != 4 || f[1][1] == 'w' || !strings.HasPrefix(line[i:], prefix) {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("release the index's mapped pages: maps: %q", line)
		}
		ranges = append(ranges, [2]uintptr{uintptr(start), uintptr(end)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("release the index's mapped pages: %w", err)
	}
	return ranges, nil
}
