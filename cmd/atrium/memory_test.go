package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// serve runs under a soft memory limit of 128 MiB (serveMemoryLimit), unless
// the operator's GOMEMLIMIT set one, which it leaves as it is.
func TestServeMemoryLimit(t *testing.T) {
	// Not parallel: the limit is the process's.
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	cases := []struct {
		name       string
		gomemlimit string
		start      int64
		want       int64
	}{
		{"no GOMEMLIMIT: 128 MiB", "", math.MaxInt64, 128 << 20},
		{"GOMEMLIMIT set: the runtime's limit stays", "1GiB", 1 << 30, 1 << 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", c.gomemlimit)
			debug.SetMemoryLimit(c.start) // what the runtime read at start
			limitServeMemory()
			if got := debug.SetMemoryLimit(-1); got != c.want {
				t.Errorf("memory limit %d, want %d", got, c.want)
			}
		})
	}
}
