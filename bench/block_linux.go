//go:build linux

package bench

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// blockThread holds the calling OS thread in nanosleep(2) for d. It goes
// through the syscall package's Syscall, so the runtime knows the thread
// is in a system call and hands its P to another thread.
func blockThread(d time.Duration) {
	left := unix.NsecToTimespec(d.Nanoseconds())
	for {
		var rest unix.Timespec
		err := unix.Nanosleep(&left, &rest)
		if !errors.Is(err, unix.EINTR) {
			return
		}
		left = rest // a signal woke it: sleep what is left
	}
}
