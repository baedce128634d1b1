package contacts

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// foldedCard is a vCard whose NOTE is folded over n continuation lines.
func foldedCard(n int) []byte {
	var b strings.Builder
	b.WriteString("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Folded\r\nNOTE:start\r\n")
	for range n {
		b.WriteString(" abcd\r\n")
	}
	b.WriteString("END:VCARD\r\n")
	return []byte(b.String())
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestUnfoldIsLinear: reading a vCard whose NOTE is folded over many lines
// allocates in proportion to its size (joining the lines one by one copied the
// note every time: 4 times the lines cost 16 times the bytes). Work is counted
// in bytes allocated, not in time: the process's, so not in parallel with
// other tests.
func TestUnfoldIsLinear(t *testing.T) {
	parse := func(n int) uint64 {
		data := foldedCard(n)
		return allocated(func() {
			d, err := parseDoc(data)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(d.first("NOTE").Value); got != len("start")+4*n {
				t.Fatalf("NOTE of %d bytes", got)
			}
		})
	}
	small, large := parse(10000), parse(40000)
	if ratio := float64(large) / float64(small); ratio > 6 {
		t.Fatalf("4 times the lines allocate %.1f times the bytes (%d, %d): not linear", ratio, small, large)
	}
}

// BenchmarkParseFoldedNote reads a vCard whose NOTE is folded over 50,000
// and 200,000 lines; ns/line stays flat when unfolding is linear.
func BenchmarkParseFoldedNote(b *testing.B) {
	for _, n := range []int{50000, 200000} {
		data := foldedCard(n)
		b.Run(strconv.Itoa(n)+"-lines", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := parseDoc(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/line")
		})
	}
}
