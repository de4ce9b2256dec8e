//go:build !unix

package bench

import "os/exec"

// ownProcessGroup leaves cmd as it is: without process groups and SIGTERM,
// cancelling cmd kills the process (exec.Cmd's default), with no grace.
func ownProcessGroup(cmd *exec.Cmd) {}
