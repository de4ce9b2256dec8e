package loom

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// maxThreadsMu serialises readMaxThreads: two reads at once could each
// restore the other's temporary value and leave the limit raised for good.
var maxThreadsMu sync.Mutex

// readMaxThreads returns the runtime's current limit on OS threads
// (debug.SetMaxThreads). The runtime offers no read-only call, so it raises
// the limit to the highest value and puts the old one back at once; raising
// a limit never crashes a process, and putting it back crashes one only if
// it had more threads than its own limit allowed already.
func readMaxThreads() int {
	maxThreadsMu.Lock()
	defer maxThreadsMu.Unlock()
	old := debug.SetMaxThreads(math.MaxInt32)
	debug.SetMaxThreads(old)
	return old
}

// threadMetrics are the runtime metrics the thread watch reads.
var threadMetrics = [...]string{
	"/sched/threads/total:threads",           // OS threads the runtime owns, idle ones included
	"/sched/goroutines/not-in-go:goroutines", // in a system call or cgo: each holds a thread
	"/sched/gomaxprocs:threads",              // threads running Go code at most
}

// threadSamples reads threadMetrics; it is not safe for concurrent use, and
// each reader keeps its own.
type threadSamples [len(threadMetrics)]metrics.Sample

func newThreadSamples() *threadSamples {
	var s threadSamples
	for i, name := range threadMetrics {
		s[i].Name = name
	}
	return &s
}

// read returns the OS threads the runtime owns and how many of them are in
// use, estimated.
//
// The runtime keeps the threads it has made, idle ones included, so the
// total never falls after a burst of blocking calls, while only the threads
// in use push it towards its limit: an idle thread is reused before a new
// one is made. In use are the threads of goroutines outside Go code, at most
// GOMAXPROCS running Go code, and those loom's Threads and ThreadPerTask
// executors keep locked (lockedThreads); the estimate may count a thread
// twice, never more than the total.
func (s *threadSamples) read() (total, inUse int) {
	metrics.Read(s[:])
	value := func(i int) int {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int(s[i].Value.Uint64())
	}
	total = value(0)
	inUse = min(total, value(1)+value(2)+int(lockedThreads.Load()))
	return total, inUse
}

// lockedThreads counts the goroutines loom keeps locked to their OS threads:
// the workers of Threads executors and the tasks ThreadPerTask runs. Each
// holds its thread, whether it runs Go code, waits in a system call or is
// parked, so the thread watch counts them as in use.
var lockedThreads atomic.Int64
