package loom

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomrt/loom/internal/latency"
)

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

// cancelShards spreads the registrations of tasks whose submit context is
// cancellable over several lists, so they do not all take one mutex.
const cancelShards = 8

// core holds what every executor shares: identity, counters, the panic
// report, the admission gate and the machinery Shutdown uses to give up.
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
	ignoreThreads bool // IgnoreThreadWatch

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
	_         [64]byte
	tallies   []tally // a pool's, one per worker; nil for other executors

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
	c.ignoreThreads = cfg.ignoreThreads
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

// refuses reports whether a tripped ThreadWatch refuses a new task, and
// counts the refusal. While no watch is tripped it is one atomic load.
func (c *core) refuses() bool {
	if !threadRefusals.refuse(c.name, c.ignoreThreads) {
		return false
	}
	c.rejected.Add(1)
	return true
}

// stamp returns the admission time of task number n if it is timed, or 0.
func (c *core) stamp(n uint64) int64 {
	if c.untimed || (n*sampleSpread)>>c.sampleShift != 0 {
		return 0
	}
	return int64(time.Since(c.epoch)) + 1
}

// run runs t under the executor's context and counts it as completed in done,
// or in c.completed if done is nil.
func (c *core) run(parent context.Context, t Task, admitted int64, done *atomic.Uint64) {
	if parent == context.Background() {
		// No values and no cancellation: the executor's own context is an
		// exact substitute, and costs nothing. Looked at first: it is the
		// commonest case, and a context of another type fails the
		// comparison at its first step (the type words differ).
		c.count(c.stop, t, admitted, done)
		return
	}
	c.runWith(parent, t, admitted, done)
}

// runWith is run for a submit context other than context.Background.
func (c *core) runWith(parent context.Context, t Task, admitted int64, done *atomic.Uint64) {
	if parent.Done() == nil {
		if parent == context.TODO() {
			c.count(c.stop, t, admitted, done)
			return
		}
		c.count(detached{Context: parent, stop: c.stop}, t, admitted, done)
		return
	}
	// The task's context must end with its submit context and with the
	// executor's stop. Deriving it from the submit context and listing its
	// cancel function, in a list Shutdown walks, costs two allocations
	// (context.WithCancelCause's); context.AfterFunc would cost three more.
	ctx, cancel := context.WithCancelCause(parent)
	entry := cancelEntries.Get().(*cancelEntry)
	entry.cancel = cancel
	list := &c.cancels[rand.Uint32()%cancelShards]
	list.add(entry, &c.abandoning)
	defer unlist(list, entry, cancel) // deferred: see count
	c.count(ctx, t, admitted, done)
}

func unlist(list *cancelList, entry *cancelEntry, cancel context.CancelCauseFunc) {
	list.remove(entry)
	entry.cancel = nil
	cancelEntries.Put(entry)
	cancel(nil)
}

// count runs t, recovering its panic and keeping Completed and the sampled
// latencies. The bookkeeping after t is deferred so that it also happens when
// t calls runtime.Goexit (as t.FailNow does in a test), which no recover
// stops; one deferred call does both jobs, as a second frame and a second
// defer cost a measurable share of a task's round trip.
func (c *core) count(ctx context.Context, t Task, admitted int64, done *atomic.Uint64) {
	if done == nil {
		done = &c.completed
	}
	var start time.Duration
	if admitted != 0 {
		start = c.started(admitted)
	}
	defer c.finish(admitted, start, done)
	t(ctx)
}

// finish is count's deferred call: it recovers the task's panic, counts the
// task, and then reports the panic. Counted first: a panic handler that calls
// runtime.Goexit (t.Fatal in a test's handler) must not leave the task
// uncounted.
func (c *core) finish(admitted int64, start time.Duration, done *atomic.Uint64) {
	v := recover()
	c.ended(admitted, start, done)
	if v != nil {
		c.recovered(v)
	}
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
	c.runTime.Record(time.Since(c.epoch) - start)
}

// recovered reports a task's panic: counted, and handed to the panic handler
// with the stack of the goroutine that recovered it.
func (c *core) recovered(v any) {
	c.panicked.Add(1)
	c.onPanic(c.name, v, debug.Stack())
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
	}
}

// settle raises Submitted to what the other counters prove was submitted.
// They are read one after another, and a submitter counts its task only
// once it is queued, by which time a worker may have run it: without this a
// snapshot could show more tasks completed than submitted.
func (s *Stats) settle() {
	s.Submitted = max(s.Submitted, s.Completed+s.Abandoned+s.Expired+uint64(s.Running))
}

// shutdown is the Shutdown every executor shares: begin (run once) stops
// admission; finished is closed when every goroutine of the executor is gone;
// drain, if not nil, counts the queued tasks as abandoned once Shutdown has
// given up.
func (c *core) shutdown(ctx context.Context, begin func(), finished <-chan struct{}, drain func()) error {
	c.beginOnce.Do(begin)
	select {
	case <-finished:
		return nil
	default:
	}
	select {
	case <-finished:
		return nil
	case <-ctx.Done():
	}
	if err := c.abandon(ctx.Err(), drain); err != nil {
		return err
	}
	// Nothing was running or queued: the goroutines are on their way out
	// and run no task code, so waiting for them is short.
	<-finished
	return nil
}

// abandon cancels every task's context, counts the tasks that will never
// start, and waits until each queued task has either started or been counted.
// That wait involves no task code, so it is short. It returns nil if there was
// nothing to give up on.
func (c *core) abandon(cause error, drain func()) error {
	c.abandonOnce.Do(func() {
		c.abandoning.Store(true)
		if c.onAbandon != nil {
			c.onAbandon()
		}
		running, _, _ := c.counts()
		c.cancel(ErrAbandoned)
		for i := range c.cancels {
			c.cancels[i].cancelAll()
		}
		if drain != nil {
			drain()
		}
		for {
			if _, queued, _ := c.counts(); queued <= 0 {
				break
			}
			time.Sleep(50 * time.Microsecond)
		}
		never := c.abandoned.Load()
		if after, _, _ := c.counts(); never == 0 && running == 0 && after == 0 {
			return
		}
		c.abandonErr = &abandonError{
			kind:      string(c.kind),
			name:      c.name,
			cause:     cause,
			never:     never,
			cancelled: running,
		}
	})
	return c.abandonErr
}

// abandonError is what Shutdown returns when its context ends first.
type abandonError struct {
	kind, name string
	cause      error
	never      uint64
	cancelled  int64
}

func (e *abandonError) Error() string {
	return fmt.Sprintf("loom: shutdown %s executor %q: %v: %d queued tasks abandoned, %d running tasks cancelled",
		e.kind, e.name, e.cause, e.never, e.cancelled)
}

func (e *abandonError) Unwrap() []error { return []error{ErrAbandoned, e.cause} }

// cancelEntry links one running task's cancel function into a cancelList.
// Entries are recycled, so listing a task allocates nothing.
type cancelEntry struct {
	cancel     context.CancelCauseFunc
	prev, next *cancelEntry
}

var cancelEntries = sync.Pool{New: func() any { return new(cancelEntry) }}

// cancelList is a doubly linked list of running tasks' cancel functions.
type cancelList struct {
	mu   sync.Mutex
	root cancelEntry // sentinel: root.next is the first entry
	_    [40]byte    // keeps neighbouring lists off one cache line
}

func (l *cancelList) init() {
	l.root.next, l.root.prev = &l.root, &l.root
}

// add lists e, or cancels it at once if Shutdown has already given up: the
// flag is read under the lock cancelAll takes, so no task slips between.
func (l *cancelList) add(e *cancelEntry, abandoning *atomic.Bool) {
	l.mu.Lock()
	if abandoning.Load() {
		l.mu.Unlock()
		e.cancel(ErrAbandoned)
		e.prev, e.next = nil, nil
		return
	}
	e.prev, e.next = &l.root, l.root.next
	l.root.next.prev = e
	l.root.next = e
	l.mu.Unlock()
}

func (l *cancelList) remove(e *cancelEntry) {
	l.mu.Lock()
	if e.next != nil {
		e.prev.next, e.next.prev = e.next, e.prev
		e.prev, e.next = nil, nil
	}
	l.mu.Unlock()
}

// cancelAll cancels every listed task; the caller has set the abandoning flag.
func (l *cancelList) cancelAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for e := l.root.next; e != &l.root; e = e.next {
		e.cancel(ErrAbandoned)
	}
}

// detached gives a task the values of a submit context that cannot be
// cancelled, and the cancellation of the executor.
type detached struct {
	context.Context
	stop context.Context
}

func (d detached) Done() <-chan struct{} { return d.stop.Done() }
func (d detached) Err() error            { return d.stop.Err() }

// gate counts the callers and tasks inside an executor, refuses new ones once
// closed, and closes idle when the last one leaves after that.
type gate struct {
	state atomic.Uint64 // closedBit | count
	once  sync.Once
	idle  chan struct{}
}

// enter reports whether the caller may come in, and how many are inside
// with it; a caller let in must call exit later.
func (g *gate) enter() (int64, bool) {
	n := g.state.Add(1)
	if n&closedBit != 0 {
		g.exit()
		return 0, false
	}
	return int64(n), true
}

// inside returns how many callers are inside.
func (g *gate) inside() int64 {
	return int64(g.state.Load() &^ closedBit)
}

func (g *gate) exit() {
	if g.state.Add(^uint64(0)) == closedBit {
		g.once.Do(func() { close(g.idle) })
	}
}

func (g *gate) close() {
	if old := g.state.Or(closedBit); old&^closedBit == 0 {
		g.once.Do(func() { close(g.idle) })
	}
}
