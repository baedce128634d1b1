package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// serve and reindex run under a soft memory limit of 48 MiB (memoryLimit),
// unless the operator's GOMEMLIMIT set one, which they leave as it is.
func TestMemoryLimit(t *testing.T) {
	t.Setenv("GOGC", "100") // this test is about the limit alone
	// Not parallel: the limit is the process's.
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	cases := []struct {
		name       string
		gomemlimit string
		start      int64
		want       int64
	}{
		{"no GOMEMLIMIT: 48 MiB", "", math.MaxInt64, 48 << 20},
		{"GOMEMLIMIT set: the runtime's limit stays", "1GiB", 1 << 30, 1 << 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", c.gomemlimit)
			debug.SetMemoryLimit(c.start) // what the runtime read at start
			limitMemory()
			if got := debug.SetMemoryLimit(-1); got != c.want {
				t.Errorf("memory limit %d, want %d", got, c.want)
			}
		})
	}
}

// serve and reindex run with GOGC 200 (gcPercent), unless the operator's
// GOGC set one (off included), which they leave as it is.
func TestGCPercent(t *testing.T) {
	// Not parallel: the GC percent is the process's.
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	t.Setenv("GOMEMLIMIT", "1GiB") // this test is about the GC percent alone
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(limit) })

	cases := []struct {
		name  string
		gogc  string
		start int // what the runtime read at start
		want  int
	}{
		{"no GOGC: 200", "", 100, 200},
		{"GOGC set: the runtime's percent stays", "50", 50, 50},
		{"GOGC=off: the collector stays off", "off", -1, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", c.gogc)
			debug.SetGCPercent(c.start)
			limitMemory()
			if got := debug.SetGCPercent(100); got != c.want {
				t.Errorf("GC percent %d, want %d", got, c.want)
			}
		})
	}
}
