package loom

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomrt/loom/internal/latency"
	"github.com/loomrt/loom/internal/threadbudget"
)

// core holds what every executor shares: identity, counters, the panic
// report, the admission gate and the machinery Shutdown uses to give up.
// Its methods live in two files: identity, admission and counting here;
// running a task, dropping one and Shutdown in core_run.go.
type core struct {
	name          string
	kind          Kind
	workers       int
	queueCapacity int
	full          FullPolicy
	onPanic       func(name string, v any, stack []byte)
	labels        context.Context // carries the pprof labels of started goroutines
	epoch         time.Time
	sampleShift   uint // see sampleShift; 64 times every task
	untimed       bool // time no task: lets the benchmarks show what timing costs
	// keepMeanRun makes timed keep meanRun, the moving mean of the run
	// time in nanoseconds (0 until a timed task has returned).
	keepMeanRun bool
	meanRun     atomic.Int64
	// budget is the thread budget each task takes a unit of: threadBudget,
	// or unguarded, which never runs out, under WithoutThreadWatch.
	budget *threadbudget.Budget

	// Admission and completion write the first group of counters. Virtual
	// and ThreadPerTask write them at both ends of a task, and keep them on
	// one cache line so that a task ending on another core moves one line,
	// not several. A pool's workers count in their own tallies and Limit's
	// tasks in its semaphore, so their submitters keep this line to
	// themselves.
	_         [64]byte
	gate      gate
	submitted atomic.Uint64
	rejected  atomic.Uint64
	completed atomic.Uint64 // Virtual's and ThreadPerTask's
	_         [64]byte
	peak      atomic.Int64
	panicked  atomic.Uint64
	abandoned atomic.Uint64
	expired   atomic.Uint64
	// rejectedByWatch counts the refusals of a tripped ThreadWatch, also
	// counted in rejected.
	rejectedByWatch atomic.Uint64
	_               [64]byte
	tallies         []tally // a pool's, one per worker; nil for other executors

	// onAbandon, if not nil, is called once Shutdown has given up and set
	// abandoning, to wake what waits without watching stop.
	onAbandon func()

	// counts returns the tasks running and queued now and the tasks
	// completed, from whatever the executor keeps. queued must err on the
	// high side while tasks move: Shutdown waits for it to reach zero.
	counts func() (running, queued int64, completed uint64)

	queueWait latency.Histogram
	runTime   latency.Histogram

	// stop is cancelled, with cause ErrAbandoned, when Shutdown gives up
	// waiting; every task's context ends with it.
	stop       context.Context
	cancel     context.CancelCauseFunc
	abandoning atomic.Bool
	// cancels holds the cancel functions of the running tasks whose submit
	// context was cancellable, for Shutdown to call when it gives up.
	cancels [cancelShards]cancelList

	closing chan struct{} // closed when Shutdown begins: wakes callers waiting for room

	beginOnce   sync.Once
	abandonOnce sync.Once
	abandonErr  error
}

func (c *core) init(kind Kind, cfg config, workers, queueCapacity int) {
	c.name = cfg.name
	c.kind = kind
	c.workers = workers
	c.queueCapacity = queueCapacity
	c.full = cfg.full
	c.budget = threadBudget
	if cfg.ignoreThreads {
		c.budget = unguarded
	}
	c.onPanic = cfg.onPanic
	if c.onPanic == nil {
		logger := cfg.logger
		c.onPanic = func(name string, v any, stack []byte) {
			logger.Error("loom: task panicked", "executor", name, "kind", kind,
				"panic", fmt.Sprint(v), "stack", string(stack))
		}
	}
	c.labels = pprof.WithLabels(context.Background(), pprof.Labels("executor", cfg.name, "kind", string(kind)))
	c.epoch = time.Now()
	c.sampleShift = sampleShift
	c.stop, c.cancel = context.WithCancelCause(context.Background())
	for i := range c.cancels {
		c.cancels[i].init()
	}
	c.gate.idle = make(chan struct{})
	c.closing = make(chan struct{})
}

// refuses reports whether the thread watch refuses a new task, and counts
// the refusal. Each task takes one unit of the thread budget: one atomic
// add.
func (c *core) refuses() bool {
	if c.budget.Take() {
		return false // inlined into Go and Run: the rest is not
	}
	return c.refusesSpent()
}

// refusesSpent is kept out of line so that refuses inlines: the budget is
// spent, so it reads the thread counts again, if no one did just now, and
// refuses the task if that allows none.
//
//go:noinline
func (c *core) refusesSpent() bool {
	if c.budget.Refill() && c.budget.Take() {
		return false
	}
	threadRefusals.count(c.name)
	c.rejected.Add(1)
	c.rejectedByWatch.Add(1)
	return true
}

// sampleShift selects which tasks are timed for the QueueWait and RunTime
// percentiles: one in 1<<(64-sampleShift) = 32. Reading the clock three
// times per task costs more than the rest of Limit.Run or Virtual.Run (see
// BenchmarkStatsSampling); one task in 32 costs a few nanoseconds and still
// gives a p99 from a hundred samples after a few thousand tasks.
const sampleShift = 59

// sampleSpread is 2^64 divided by the golden ratio. Task number n is timed
// when the top bits of n*sampleSpread are zero: a Weyl sequence, which picks
// one task in 32 without a random number and without lining up with any
// period in the workload (alternating fast and slow tasks are both sampled).
const sampleSpread = 0x9E3779B97F4A7C15

// stamp returns the admission time of task number n if it is timed, or 0.
func (c *core) stamp(n uint64) int64 {
	if c.untimed || (n*sampleSpread)>>c.sampleShift != 0 {
		return 0
	}
	return int64(time.Since(c.epoch)) + 1
}

// started records the queue wait of a timed task admitted at admitted and
// returns the time it starts.
func (c *core) started(admitted int64) time.Duration {
	start := time.Since(c.epoch)
	c.queueWait.Record(start - time.Duration(admitted-1))
	return start
}

// ended records the run time of a task that started at start, if it is
// timed, and counts it as completed in done.
func (c *core) ended(admitted int64, start time.Duration, done *atomic.Uint64) {
	if admitted != 0 {
		c.timed(start)
	}
	done.Add(1)
}

// timed records the run time of a timed task that started at start.
func (c *core) timed(start time.Duration) {
	d := time.Since(c.epoch) - start
	c.runTime.Record(d)
	if c.keepMeanRun {
		c.averageRun(int64(d))
	}
}

// averageRun moves meanRun an eighth of the way to d: a mean of about the
// last eight tasks, which follows a change of run time within a few dozen.
func (c *core) averageRun(d int64) {
	for {
		old := c.meanRun.Load()
		mean := d
		if old != 0 {
			mean = old + (d-old)/8
		}
		if c.meanRun.CompareAndSwap(old, max(mean, 1)) {
			return
		}
	}
}

// observe raises PeakRunning to r if r is higher.
func (c *core) observe(r int64) {
	for p := c.peak.Load(); r > p && !c.peak.CompareAndSwap(p, r); p = c.peak.Load() {
	}
}

// A tally is where one pool worker counts its tasks, on a cache line of its
// own: shared counters written by every worker would bounce between cores on
// every task, and that costs more than the rest of the hand-off.
type tally struct {
	taken     atomic.Uint64 // jobs the worker took from the queue
	completed atomic.Uint64 // of which it ran to the end
	_         [112]byte
}

// stats returns a snapshot of the counters, settled (see Stats.settle).
func (c *core) stats() Stats {
	s := c.snapshot()
	s.settle()
	return s
}

// snapshot reads the counters, unsettled: a pool adds its hand-offs to
// Submitted first.
func (c *core) snapshot() Stats {
	running, queued, completed := c.counts()
	return Stats{
		Name:          c.name,
		Kind:          c.kind,
		Workers:       c.workers,
		QueueCapacity: c.queueCapacity,
		Submitted:     c.submitted.Load(),
		Completed:     completed,
		Rejected:      c.rejected.Load(),
		Panicked:      c.panicked.Load(),
		Abandoned:     c.abandoned.Load(),
		Expired:       c.expired.Load(),
		Running:       int(max(running, 0)),
		Queued:        int(max(queued, 0)),
		PeakRunning:   int(c.peak.Load()),
		QueueWait:     Percentiles{P50: c.queueWait.Quantile(0.50), P99: c.queueWait.Quantile(0.99)},
		RunTime:       Percentiles{P50: c.runTime.Quantile(0.50), P99: c.runTime.Quantile(0.99)},

		RejectedByWatch: c.rejectedByWatch.Load(),
		Threads:         WatchedThreads(),
	}
}

// settle raises Submitted to what the other counters prove was submitted.
// They are read one after another, and a submitter counts its task only
// once it is queued, by which time a worker may have run it: without this a
// snapshot could show more tasks completed than submitted.
func (s *Stats) settle() {
	s.Submitted = max(s.Submitted, s.Completed+s.Abandoned+s.Expired+uint64(s.Running))
}

// gateClosed marks a closed gate in its state word.
const gateClosed = 1 << 63

// gate counts the callers and tasks inside an executor, refuses new ones once
// closed, and closes idle when the last one leaves after that.
type gate struct {
	state atomic.Uint64 // gateClosed | count
	once  sync.Once
	idle  chan struct{}
}

// enter reports whether the caller may come in, and how many are inside
// with it; a caller let in must call exit later.
func (g *gate) enter() (int64, bool) {
	n := g.state.Add(1)
	if n&gateClosed != 0 {
		g.exit()
		return 0, false
	}
	return int64(n), true
}

// inside returns how many callers are inside.
func (g *gate) inside() int64 {
	return int64(g.state.Load() &^ gateClosed)
}

func (g *gate) exit() {
	if g.state.Add(^uint64(0)) == gateClosed {
		g.once.Do(func() { close(g.idle) })
	}
}

func (g *gate) close() {
	if old := g.state.Or(gateClosed); old&^gateClosed == 0 {
		g.once.Do(func() { close(g.idle) })
	}
}
