//go:build unix

package load

import "syscall"

// fileLimit returns the soft RLIMIT_NOFILE. The Go runtime raises it to the
// hard limit at start, so this is what the process may really use.
func fileLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	return uint64(rl.Cur), true
}
