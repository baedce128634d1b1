//go:build !unix

package convert

import "os/exec"

// killGroup leaves the default: kill the process when its context ends.
func killGroup(*exec.Cmd) {}
