// Package procstat reads a process's resource use from Linux's /proc: its
// resident memory, its OS threads and the CPU time it has used. loom's
// benchmark runner samples each server under test with it, from outside the
// server, so the figures include what the Go runtime does not see (thread
// stacks, cgo and C memory).
//
//	st, err := procstat.Read(cmd.Process.Pid)
//	if err != nil {
//		return err
//	}
//	fmt.Printf("rss %d MiB, %d threads, %.1f s CPU\n", st.RSSBytes>>20, st.Threads, st.CPUSeconds)
//
// It works on Linux only; elsewhere Read returns ErrUnsupported.
package procstat

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// ErrUnsupported is returned by Read where /proc does not exist.
var ErrUnsupported = errors.New("procstat: /proc not available on " + runtime.GOOS)

// ErrMalformed is returned when /proc/PID/stat does not parse.
var ErrMalformed = errors.New("procstat: malformed stat line")

// Stat is one reading of a process.
type Stat struct {
	RSSBytes   uint64  // resident set size
	Threads    int     // OS threads (kernel tasks) in the process
	CPUSeconds float64 // user plus system CPU time used since it started
	State      byte    // the kernel's state letter: R, S, D, Z, …
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. The
// kernel fixes it at 100 on every architecture Go supports on Linux, and
// reading it otherwise needs sysconf from libc.
const clockTicks = 100

// Read reads the figures of the process pid. It is safe for concurrent use.
// A process that has exited (and been reaped) gives an error wrapping
// os.ErrNotExist.
func Read(pid int) (Stat, error) {
	if runtime.GOOS != "linux" {
		return Stat{}, ErrUnsupported
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: %w", err)
	}
	st, err := ParseStat(string(raw), os.Getpagesize())
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: pid %d: %w", pid, err)
	}
	return st, nil
}

// ParseStat parses the contents of /proc/PID/stat (see proc(5)); pageSize
// converts its resident page count into bytes.
func ParseStat(line string, pageSize int) (Stat, error) {
	// The second field is the command name in parentheses, and the name may
	// itself hold spaces and parentheses: the fields after it start after
	// the last ')'.
	end := strings.LastIndexByte(line, ')')
	if end < 0 || !strings.Contains(line[:end], "(") {
		return Stat{}, fmt.Errorf("%w: no (comm) field", ErrMalformed)
	}
	fields := strings.Fields(line[end+1:])
	// fields[0] is field 3 (state); proc(5) numbers from 1.
	const (
		state      = 3
		utime      = 14
		stime      = 15
		numThreads = 20
		rss        = 24
	)
	at := func(n int) string { return fields[n-3] }
	if len(fields) < rss-2 {
		return Stat{}, fmt.Errorf("%w: %d fields after (comm); want at least %d", ErrMalformed, len(fields), rss-2)
	}
	if len(at(state)) != 1 {
		return Stat{}, fmt.Errorf("%w: state %q", ErrMalformed, at(state))
	}
	number := func(n int, name string) (uint64, error) {
		bits := 64
		if n == numThreads {
			bits = 31 // it becomes an int
		}
		v, err := strconv.ParseUint(at(n), 10, bits)
		if err != nil {
			return 0, fmt.Errorf("%w: %s %q", ErrMalformed, name, at(n))
		}
		return v, nil
	}
	user, err := number(utime, "utime")
	if err != nil {
		return Stat{}, err
	}
	system, err := number(stime, "stime")
	if err != nil {
		return Stat{}, err
	}
	threads, err := number(numThreads, "num_threads")
	if err != nil {
		return Stat{}, err
	}
	// rss is signed in the kernel's format; a negative value cannot occur
	// for a live process, so it is a parse error here.
	pages, err := number(rss, "rss")
	if err != nil {
		return Stat{}, err
	}
	return Stat{
		RSSBytes:   pages * uint64(pageSize),
		Threads:    int(threads),
		CPUSeconds: float64(user+system) / clockTicks,
		State:      at(state)[0],
	}, nil
}
