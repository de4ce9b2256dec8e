// Package osthreads reads what the Go runtime knows about the process's OS
// threads: the limit past which it dies with "fatal error: thread
// exhaustion" (debug.SetMaxThreads), how many threads it owns and how many
// of them are in use, and the threads loom keeps locked to goroutines.
//
// The runtime keeps the threads it has made, idle ones included, so the
// total never falls after a burst of blocking calls, while only the threads
// in use push it towards its limit: an idle thread is reused before a new one
// is made. In use are the threads of goroutines outside Go code (in a system
// call or cgo), at most GOMAXPROCS running Go code, and those loom keeps
// locked (LockThread), which hold their thread even while parked, where no
// runtime metric sees them. The estimate may count a thread twice, never
// more than the total.
package osthreads

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// maxThreadsMu serialises MaxThreads: two reads at once could each restore
// the other's temporary value and leave the limit raised for good.
var maxThreadsMu sync.Mutex

// MaxThreads returns the runtime's current limit on OS threads
// (debug.SetMaxThreads). The runtime offers no read-only call, so it raises
// the limit to the highest value and puts the old one back at once; raising
// a limit never crashes a process, and putting it back crashes one only if
// it had more threads than its own limit allowed already. Safe for
// concurrent use.
func MaxThreads() int {
	maxThreadsMu.Lock()
	defer maxThreadsMu.Unlock()
	old := debug.SetMaxThreads(math.MaxInt32)
	debug.SetMaxThreads(old)
	return old
}

// metricNames are the runtime metrics a Sampler reads.
var metricNames = [...]string{
	"/sched/threads/total:threads",           // OS threads the runtime owns, idle ones included
	"/sched/goroutines/not-in-go:goroutines", // in a system call or cgo: each holds a thread
	"/sched/gomaxprocs:threads",              // threads running Go code at most
	"/sched/goroutines/runnable:goroutines",  // ready to run: each may block a thread once it runs
}

// A Sampler reads the thread counts. It is not safe for concurrent use:
// each reader keeps its own.
type Sampler struct {
	samples [len(metricNames)]metrics.Sample
}

// NewSampler returns a Sampler ready to read.
func NewSampler() *Sampler {
	var s Sampler
	for i, name := range metricNames {
		s.samples[i].Name = name
	}
	return &s
}

// Counts are the thread figures of one reading.
type Counts struct {
	Total    int // OS threads the runtime owns, idle ones included
	InUse    int // of which in use, estimated (see the package documentation)
	Runnable int // goroutines ready to run but not running, approximately
	Procs    int // GOMAXPROCS: the goroutines running Go code, at most
}

// Read returns the thread counts now.
func (s *Sampler) Read() Counts {
	metrics.Read(s.samples[:])
	value := func(i int) int {
		if s.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int(s.samples[i].Value.Uint64())
	}
	total := value(0)
	return Counts{
		Total:    total,
		InUse:    min(total, value(1)+value(2)+int(locked.Load())),
		Runnable: value(3),
		Procs:    value(2),
	}
}

// Live returns how many OS threads the runtime owns now.
func Live() int {
	return NewSampler().Read().Total
}

// locked counts the goroutines loom keeps locked to their OS threads.
var locked atomic.Int64

// LockThread locks the calling goroutine to its OS thread for good
// (runtime.LockOSThread, never undone) and counts the thread as in use. The
// goroutine must call Retire just before it exits, still locked, which
// retires the thread with it.
func LockThread() {
	runtime.LockOSThread()
	locked.Add(1)
}

// Retire stops counting the thread of a goroutine that called LockThread:
// it is about to exit locked and take the thread with it.
func Retire() { locked.Add(-1) }

// Locked returns how many goroutines hold a thread taken with LockThread.
func Locked() int { return int(locked.Load()) }

// HeadroomFixed is the part of the runtime's thread headroom that does not
// grow with GOMAXPROCS: sysmon, the template thread that starts threads for
// locked goroutines, and threads woken to spin for work. With every worker
// busy, a loopback HTTP load and forced GCs, the runtime needed
// GOMAXPROCS+7 threads or fewer beside the workers (docs/executors.md); the
// threads already running are counted on top, which leaves a margin.
const HeadroomFixed = 8

// Headroom returns how many OS threads the runtime needs besides workers
// that each hold a thread: one per P, to run every other goroutine while the
// workers hold their own, and HeadroomFixed more.
func Headroom() int {
	return runtime.GOMAXPROCS(0) + HeadroomFixed
}
