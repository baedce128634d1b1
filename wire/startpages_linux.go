package wire

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseStartPages unmaps the pages of the executable's code and read-only
// data that start-up touched. Package initialisation, the migrations,
// template parsing and opening the stores touch some 30 MB of the binary
// (with the kernel's fault-around, most of it) that a running server does not
// use again; without this they stay counted in its resident memory for as
// long as it runs. MADV_DONTNEED on these read-only mappings of the file
// drops this process's mapping of the pages and nothing else: they stay in
// the page cache, and the ones the server needs later come back with a minor
// fault. (MADV_PAGEOUT would evict them from the page cache too, and the next
// start would read the binary from the disk again.) It returns the resident
// kilobytes of those mappings before and after.
func releaseStartPages() (before, after int64, err error) {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		return 0, 0, err
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	ranges, before, err := exeMappings(ino)
	if err != nil {
		return 0, 0, err
	}
	for _, r := range ranges {
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, r[0], r[1]-r[0], syscall.MADV_DONTNEED); e != 0 {
			return before, before, fmt.Errorf("madvise: %w", e)
		}
	}
	_, after, err = exeMappings(ino)
	return before, after, err
}

// releaseExecutable unmaps the pages of the executable's code and read-only
// data that this process touched since the last release, as
// releaseStartPages does, without counting them (/proc/self/maps rather than
// smaps, which walks every page table).
func releaseExecutable() error {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		return err
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 5 || len(f[1]) != 4 || f[1][1] == 'w' {
			continue
		}
		if n, _ := strconv.ParseUint(f[4], 10, 64); n != ino {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("maps: %q", sc.Text())
		}
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED); e != 0 {
			return fmt.Errorf("madvise: %w", e)
		}
	}
	return sc.Err()
}

// exeMappings returns the read-only and executable mappings of file inode ino
// in this process (start, end) and their resident kilobytes.
func exeMappings(ino uint64) (ranges [][2]uintptr, rssKB int64, err error) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	mine := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			mine = false
			n, _ := strconv.ParseUint(f[4], 10, 64)
			if n != ino || f[1][1] == 'w' {
				continue
			}
			lo, hi, _ := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 != nil || err2 != nil {
				return nil, 0, fmt.Errorf("smaps: %q", sc.Text())
			}
			ranges = append(ranges, [2]uintptr{uintptr(start), uintptr(end)})
			mine = true
			continue
		}
		if mine && len(f) >= 2 && f[0] == "Rss:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			rssKB += kb
		}
	}
	return ranges, rssKB, sc.Err()
}
