//go:build linux

package main

import (
	"syscall"
	"time"
)

// blockThread holds the calling OS thread in nanosleep(2) for d, through
// the syscall package, so the runtime knows the thread is in a system call
// and starts another for the other goroutines, as for a cgo call.
func blockThread(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
