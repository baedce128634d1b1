//go:build !linux

package tus

import "os"

// startWriteback is a no-op where the kernel offers no such hint.
func startWriteback(*os.File, int64, int64) {}
