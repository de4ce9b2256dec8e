//go:build unix

package bench

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in its own process group, so that a Ctrl-C at
// the terminal reaches loom bench alone, which then stops the child itself,
// in order; cancelling cmd sends SIGTERM to the whole group.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}
