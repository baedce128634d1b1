//go:build !linux

package diskio

import "os"

// StartWriteback is a no-op where the kernel offers no such hint.
func StartWriteback(*os.File, int64, int64) {}
