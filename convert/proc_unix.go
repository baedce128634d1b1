//go:build unix

package convert

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in its own process group and kills the whole group when
// its context ends (soffice starts a child that would outlive it).
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return errNoProcess
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
