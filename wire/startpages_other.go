//go:build !linux

package wire

// releaseStartPages does nothing off Linux.
func releaseStartPages() (before, after int64, err error) { return 0, 0, nil }

// releaseExecutable does nothing off Linux.
func releaseExecutable() error { return nil }
