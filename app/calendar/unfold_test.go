package calendar

import (
	"runtime"
	"strings"
	"testing"
)

// foldedICS is a file whose one event's DESCRIPTION is folded over n lines.
func foldedICS(n int) string {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:f\r\nDTSTART:20260101T090000Z\r\nDESCRIPTION:start\r\n")
	for range n {
		b.WriteString(" abcd\r\n")
	}
	b.WriteString("END:VEVENT\r\nEND:VCALENDAR\r\n")
	return b.String()
}

// TestImportUnfoldIsLinear: splitting an import whose DESCRIPTION is folded
// over many lines allocates in proportion to its size (appending each
// continuation to a string copied it every time: 4 times the lines cost 16
// times the bytes). Work is counted in bytes allocated, not in time: the
// process's, so not in parallel with other tests.
func TestImportUnfoldIsLinear(t *testing.T) {
	split1 := func(n int) uint64 {
		text := foldedICS(n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var got int
		err := split(strings.NewReader(text), func(c chunk) error { got = len(c.lines[3]); return nil })
		runtime.ReadMemStats(&after)
		if err != nil || got != len("DESCRIPTION:start")+4*n {
			t.Fatalf("split: %v, DESCRIPTION of %d bytes", err, got)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := split1(10000), split1(40000)
	if ratio := float64(large) / float64(small); ratio > 6 {
		t.Fatalf("4 times the lines allocate %.1f times the bytes (%d, %d): not linear", ratio, small, large)
	}
}
