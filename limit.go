package loom

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync"
)

// Limit returns an executor that runs each task on its own goroutine, at most
// n at once: Spring's concurrency limit, or "cap in-flight requests". It is
// for shedding load: past the limit, work is refused fast (a 503) instead of
// piling up until memory runs out.
//
// Defaults: Queue(0) and Full(FullReject): a task is admitted only if it can start
// at once, otherwise Go and Run return ErrRejected. Queue(q) lets up to q
// admitted tasks wait for a running slot. Full(FullWait) makes a caller that
// finds the running slots and the queue full wait for room until its context
// ends, then return the context's error; such callers are not counted in
// Stats.Queued, so Queue bounds the queue under both policies. Waiting is
// first come, first served: a slot or room that frees up goes straight to
// the task or caller that has waited longest, and nobody takes it past them.
// (A task submitted with Go queues once its goroutine has started, so tasks
// submitted at nearly the same moment may start in either order.)
// Once admitted, a task runs even if its submit context ends meanwhile (the
// task sees the context's error).
//
// Go starts a goroutine that carries the pprof labels executor=<name> and
// kind=limit. Run executes the task inline on the caller's goroutine once it
// has a slot (no hand-off; the caller keeps its pprof labels). A panicking
// task is recovered and reported. Run allocates nothing beyond the caller's
// closure when the submit context is context.Background (a cancellable one
// costs a derived context, two allocations); neither does Go, which recycles
// what it hands to the new goroutine. Admission is one compare-and-swap
// while nobody waits; a caller that must wait queues under a mutex and parks
// on a recycled channel of its own, and is woken by the task that frees its
// slot. Limit is safe for concurrent use. It panics if n is not positive.
func Limit(n int, opts ...Option) Executor {
	if n <= 0 {
		panic(fmt.Sprintf("loom: limit executor needs a positive limit, got %d", n))
	}
	cfg := newConfig(KindLimit, opts)
	if cfg.full == 0 {
		cfg.full = FullReject
	}
	l := &limit{tickets: newSemaphore(n + cfg.queue)}
	if cfg.queue > 0 {
		l.slots = newSemaphore(n)
	}
	l.init(KindLimit, cfg, n, cfg.queue)
	l.counts = l.taskCounts
	if l.slots != nil {
		// When Shutdown gives up, no queued task may start: closing the
		// slots wakes the tasks waiting for one, and refuses the others.
		l.onAbandon = l.slots.close
	}
	return l
}

type limit struct {
	core
	// tickets holds one token per admitted task, running or queued; closing
	// it stops admission, and its idle channel tells Shutdown that every
	// admitted task is done.
	tickets *semaphore
	// slots holds one token per running task; nil when nothing may queue,
	// because then a ticket is a slot.
	slots *semaphore
}

var _ Executor = (*limit)(nil)

// Go admits t and runs it on a new goroutine.
func (l *limit) Go(ctx context.Context, t Task) error {
	if err := l.admit(ctx); err != nil {
		return err
	}
	s, _ := starts.Get().(*start)
	if s == nil {
		s = new(start)
		s.run = s.goroutine
	}
	s.l, s.ctx, s.task, s.admitted = l, ctx, t, l.stamp(l.submitted.Load())
	go s.run()
	return nil
}

// A start carries a task to the goroutine Go starts for it. A go statement
// whose function takes arguments, or is a closure, allocates a start record
// for them on every call; a go statement on a func value made in advance does
// not. So starts are recycled, each with its method value bound once.
type start struct {
	l        *limit
	ctx      context.Context
	task     Task
	admitted int64
	run      func() // s.goroutine
}

// starts holds the idle starts. It has no New function: goroutine puts
// starts back, and a pool that made them would refer to itself.
var starts sync.Pool

// goroutine takes its task out of s, recycles s and runs the task.
func (s *start) goroutine() {
	l, ctx, t, admitted := s.l, s.ctx, s.task, s.admitted
	s.l, s.ctx, s.task = nil, nil, nil // let the task be collected
	starts.Put(s)
	l.goroutine(ctx, t, admitted)
}

func (l *limit) goroutine(ctx context.Context, t Task, admitted int64) {
	pprof.SetGoroutineLabels(l.labels)
	if !l.start() {
		return
	}
	defer l.finish() // deferred, in case t calls runtime.Goexit
	l.run(ctx, t, admitted, &l.tickets.completed)
}

// Run admits t and runs it on the caller's goroutine once a slot is free.
func (l *limit) Run(ctx context.Context, t Task) error {
	if err := l.admit(ctx); err != nil {
		return err
	}
	admitted := l.stamp(l.submitted.Load())
	if !l.start() {
		return ErrAbandoned
	}
	defer l.finish() // deferred, in case t calls runtime.Goexit
	l.run(ctx, t, admitted, &l.tickets.completed)
	return nil
}

// admit takes a ticket, waiting for one under Full(FullWait).
func (l *limit) admit(ctx context.Context) error {
	if l.refuses() {
		return ErrRejected
	}
	ok, isClosed := l.tickets.tryAcquire()
	switch {
	case ok:
		l.countAdmitted()
		return nil
	case isClosed:
		return ErrClosed
	case l.full == FullReject:
		l.rejected.Add(1)
		return ErrRejected
	}
	// Full: yield once before parking. The tasks this caller just started
	// are likely runnable on this very P, and letting them finish frees
	// several slots for one wake-up instead of one slot per park.
	runtime.Gosched()
	if ok, _ := l.tickets.tryAcquire(); ok {
		l.countAdmitted()
		return nil
	}
	switch l.tickets.wait(ctx.Done()) {
	case acquired:
		l.countAdmitted()
		return nil
	case closed:
		return ErrClosed
	}
	select {
	case <-l.closing:
		return ErrClosed
	default:
		return ctx.Err()
	}
}

// countAdmitted counts a task that has its ticket. Without a queue a ticket is a
// running slot, so this is also where the peak is kept: on the submitter's
// side, which has the semaphore's cache line at hand.
func (l *limit) countAdmitted() {
	l.submitted.Add(1)
	if l.slots == nil {
		l.observe(int64(l.tickets.held()))
	}
}

// start waits for a running slot; it reports false, having counted the task
// as abandoned, if Shutdown gives up first.
func (l *limit) start() bool {
	if l.slots == nil {
		return true
	}
	if ok, _ := l.slots.tryAcquire(); !ok {
		if l.slots.wait(nil) != acquired {
			l.abandonQueued()
			return false
		}
	}
	if l.abandoning.Load() {
		// Shutdown gave up while this task waited: a slot freed by a
		// cancelled task does not let a queued one start.
		l.slots.release()
		l.abandonQueued()
		return false
	}
	l.observe(int64(l.slots.held()))
	return true
}

func (l *limit) abandonQueued() {
	l.abandoned.Add(1)
	l.tickets.release()
}

func (l *limit) finish() {
	if l.slots != nil {
		l.slots.release()
	}
	l.tickets.release()
}

// Shutdown stops admitting tasks and waits for the admitted ones to return.
// If ctx ends first, it cancels the running tasks' contexts, abandons the
// queued ones (a waiting Run returns ErrAbandoned) and returns an error
// wrapping ErrAbandoned and ctx.Err(); goroutines whose task ignores the
// cancellation end when it returns. Shutdown may be called more than once and
// concurrently.
func (l *limit) Shutdown(ctx context.Context) error {
	return l.shutdown(ctx, l.begin, l.tickets.idle, nil)
}

func (l *limit) begin() {
	l.tickets.close()
	close(l.closing)
}

// taskCounts reads the semaphores: tasks holding a slot run, tasks holding
// only a ticket wait. Slots are read before tickets, so that a task moving
// while they are read makes queued too high, never too low.
func (l *limit) taskCounts() (running, queued int64, completed uint64) {
	if l.slots == nil {
		return int64(l.tickets.held()), 0, l.tickets.completed.Load()
	}
	running = int64(l.slots.held())
	queued = int64(l.tickets.held()) - running
	return running, queued, l.tickets.completed.Load()
}

// Stats returns a snapshot of the executor's counters.
func (l *limit) Stats() Stats { return l.stats() }
