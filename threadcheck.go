package loom

import (
	"errors"
	"fmt"
	"runtime"
)

// threadHeadroomFixed is the part of the runtime's thread headroom that does
// not grow with GOMAXPROCS: sysmon, the template thread that starts threads
// for locked goroutines, and threads woken to spin for work. With every
// worker busy, a loopback HTTP load and forced GCs, the runtime needed
// GOMAXPROCS+7 threads or fewer beside the workers (docs/executors.md); the
// threads already running are counted on top, which leaves a margin.
const threadHeadroomFixed = 8

// threadHeadroom returns how many OS threads the runtime needs besides a
// threads executor's workers: one per P, to run every other goroutine while
// the workers hold their own threads, and threadHeadroomFixed more.
func threadHeadroom() int {
	return runtime.GOMAXPROCS(0) + threadHeadroomFixed
}

// liveThreads returns how many OS threads the runtime owns now.
func liveThreads() int {
	total, _ := newThreadSamples().read()
	return total
}

// checkThreads returns an error if n workers, each holding an OS thread,
// would leave the runtime less than its headroom below the process's thread
// limit: past it, the process dies with "fatal error: thread exhaustion".
func checkThreads(n int) error {
	limit, live, headroom := readMaxThreads(), liveThreads(), threadHeadroom()
	if n+live+headroom <= limit {
		return nil
	}
	return fmt.Errorf("%w: %d workers, %d threads running and the runtime's headroom of %d (GOMAXPROCS+%d) exceed the process's thread limit of %d (debug.SetMaxThreads); at most %d workers fit",
		ErrThreadLimit, n, live, headroom, threadHeadroomFixed, limit, max(limit-live-headroom, 0))
}

// ErrThreadLimit is wrapped by the error Spec.New, Parse and FromEnv return
// (and the panic of Threads carries) when a threads executor would need more
// OS threads than the process may have.
var ErrThreadLimit = errors.New("not enough OS threads")
