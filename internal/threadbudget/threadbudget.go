// Package threadbudget bounds the OS threads that the tasks loom admits can
// take, by construction rather than by sampling.
//
// A goroutine blocked in cgo or a raw system call holds its OS thread, and
// the runtime starts another for everything else; past its limit
// (debug.SetMaxThreads) the process dies. A guard that only reads the thread
// count now and then is a race: a burst of tasks that block at once makes
// threads faster than any reading interval, and every task admitted before
// the next reading can take one.
//
// The budget closes the race. At each reading of the runtime's counts it is
// set to the allowance
//
//	mark − threads in use − 2 × goroutines runnable − GOMAXPROCS
//
// where the threads in use are the goroutines in system calls or cgo, the
// GOMAXPROCS threads running Go code and the goroutines loom keeps locked
// (see package osthreads), and the runnable goroutines are those made or
// woken but not yet running, each of which may block as soon as it runs.
// Every task admitted takes one unit of the budget first; none is admitted
// once it is spent, until the next reading. A task holds at most one thread
// (the one its goroutine blocks), so between two readings the threads in use
// stay at most the count at the last reading plus the tasks admitted since:
// at most the mark.
//
// Two kinds of admission escape a reading's counts, and the allowance
// charges both. A task admitted while the counts are read may have no
// goroutine yet: the reading charges every unit taken between its start and
// its end. A task admitted just before may be in flight: its unit taken, its
// goroutine not yet made. An executor takes its unit after its last
// blocking wait (a ticket, a lock), so the submitter of an admission in
// flight is either running Go code on one of the GOMAXPROCS threads or was
// preempted and is runnable: at most GOMAXPROCS + runnable admissions are in
// flight at a reading, and the allowance keeps a thread for each.
//
// A reading happens when the watch's timer fires, and also when an
// admission finds the budget spent (at most one every MinRefill), so a
// pass-through workload that spends the budget faster than the watch reads
// is not refused: it pays one atomic add per task, and one reading per
// allowance's worth of tasks.
//
// The bound counts a task from its admission until its goroutine parks:
// tasks admitted earlier that parked (on a channel, a timer, the network)
// while the reading was taken, and then block a thread when they wake, are
// counted at the next reading, not before. Bounded executors (Pool, Limit)
// bound those by their size; loom.Blocking bounds the calls themselves.
package threadbudget

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
)

// MinRefill is the least time between two readings taken by admissions
// that found the budget spent: while threads really run short, refused
// admissions read the counts at most this often.
const MinRefill = 100 * time.Microsecond

// A Budget is how many more tasks may be admitted until the next reading.
// It is safe for concurrent use; make one with New.
type Budget struct {
	left atomic.Int64 // spent below 0; MaxInt64 while unbounded
	_    [56]byte     // off the line of the fields below, read on refills only

	mu      sync.Mutex // serialises readings, Hold, Release and Unbound; guards sampler and last
	sampler *osthreads.Sampler
	last    time.Time
	mark    atomic.Int64 // in threads in use, from the last Set; 0 while unbounded
	held    atomic.Bool  // Hold: admit nothing whatever the readings say
}

// unbounded is what an unbounded budget holds: Take would have to admit a
// task a nanosecond for three centuries to spend it.
const unbounded = math.MaxInt64

// New returns an unbounded budget: it admits every task until Set.
func New() *Budget {
	b := new(Budget)
	b.left.Store(unbounded)
	return b
}

// Take takes one unit of the budget for a task about to be admitted, and
// reports whether there was one: one atomic add.
func (b *Budget) Take() bool {
	return b.left.Add(-1) >= 0
}

// Set reads the counts with read and bounds the budget with them: mark is
// the most threads the tasks may bring the process to. Until the next
// reading, Take admits the allowance (see the package documentation) less
// the tasks admitted while read ran, or none while held. It returns what
// read returned. Set and Refill serialise: one reading at a time.
func (b *Budget) Set(mark int, read func() osthreads.Counts) osthreads.Counts {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mark.Store(int64(max(mark, 1)))
	b.last = time.Now()
	return b.read(mark, read)
}

// read runs read and sets the budget from its counts; the caller holds mu.
func (b *Budget) read(mark int, read func() osthreads.Counts) osthreads.Counts {
	begun := b.left.Load()
	c := read()
	// One add rather than a store: what was taken while read ran (begun −
	// left now) stays spent.
	b.left.Add(b.allowance(mark, c) - begun)
	return c
}

func (b *Budget) allowance(mark int, c osthreads.Counts) int64 {
	if b.held.Load() {
		return 0
	}
	return int64(max(mark-c.InUse-2*c.Runnable-c.Procs, 0))
}

// Refill reads the counts again for an admission that found the budget
// spent, unless another reading was taken less than MinRefill ago, the
// budget is held or it is unbounded, and sets the budget from it. It
// reports whether it read; the caller then takes again.
func (b *Budget) Refill() bool {
	if b.held.Load() || b.mark.Load() == 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.held.Load() || b.mark.Load() == 0 || now.Sub(b.last) < MinRefill {
		return false
	}
	b.last = now
	if b.sampler == nil {
		b.sampler = osthreads.NewSampler()
	}
	b.read(int(b.mark.Load()), b.sampler.Read)
	return true
}

// Hold spends the budget and keeps it spent, whatever the readings say,
// until Release: a watch past its high-water mark refuses every task until
// the threads fall below its low-water mark.
func (b *Budget) Hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held.Store(true)
	b.left.Store(0)
}

// Release ends a Hold; the next reading, or the next Refill, sets the
// budget again.
func (b *Budget) Release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held.Store(false)
}

// Unbound makes Take admit every task again, as when no watch runs. A Hold
// outlasts it.
func (b *Budget) Unbound() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held.Load() {
		return
	}
	b.mark.Store(0)
	b.left.Store(unbounded)
}

// Left returns how many tasks the budget admits until the next reading:
// math.MaxInt64 while it is unbounded.
func (b *Budget) Left() int64 { return max(b.left.Load(), 0) }
