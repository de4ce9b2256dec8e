package loom

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/loomrt/loom/internal/semaphore"
)

// Limit returns an executor that runs each task on its own goroutine, at
// most n at once: a concurrency limit for shedding load. Defaults: WithQueue(0)
// and WithFull(FullReject), so Go and Run return ErrRejected at once unless the
// task can start. WithQueue(q) lets q admitted tasks wait for a slot;
// WithFull(FullWait) makes a caller that finds no room block until there is, or
// until its context ends (then it returns ctx.Err(); such callers do not
// count in Stats.Queued). Waiting is first come, first served. Go returns
// once the task is admitted; Run runs it on the caller's goroutine once it
// has a slot and returns when it does. After Shutdown both return ErrClosed.
// A queued task whose submit context has ended (or passed its deadline)
// when its turn comes is dropped unrun and counted in Stats.Expired; Run
// then returns the context's error. A started task runs even if its context
// ends. WithMaxQueueWait also bounds the queue by the wait a newcomer can
// expect in it. When the thread watch refuses a task, Go and Run return ErrRejected
// (see ThreadWatch). Go's goroutines carry the pprof labels executor=<name> and kind=limit; a panicking task is
// recovered and reported. Neither Go nor Run allocates beyond the caller's
// closure with a context.Background submit context. Safe for concurrent use.
// It panics if n is not positive.
func Limit(n int, opts ...Option) Executor {
	if n <= 0 {
		panic(fmt.Sprintf("loom: limit executor needs a positive limit, got %d", n))
	}
	cfg := newConfig(KindLimit, opts)
	if cfg.full == 0 {
		cfg.full = FullReject
	}
	if cfg.maxQueueWait != 0 && (cfg.queue == 0 || cfg.full != FullReject) {
		panic(fmt.Sprintf("loom: WithMaxQueueWait(%v) needs a queue (WithQueue) and WithFull(FullReject), got queue %d and %v",
			cfg.maxQueueWait, cfg.queue, cfg.full))
	}
	l := &limit{tickets: semaphore.New(n + cfg.queue), n: n, maxQueueWait: cfg.maxQueueWait}
	if cfg.queue > 0 {
		l.slots = semaphore.New(n)
	}
	l.init(KindLimit, cfg, n, cfg.queue)
	if l.maxQueueWait != 0 {
		l.sampleShift = 64 // time every task: the mean run time needs them
		l.keepMeanRun = true
	}
	l.counts = l.taskCounts
	if l.slots != nil {
		// When Shutdown gives up, no queued task may start: closing the
		// slots wakes the tasks waiting for one, and refuses the others.
		l.onAbandon = l.slots.Close
	}
	return l
}

type limit struct {
	core
	// tickets holds one token per admitted task, running or queued; closing
	// it stops admission, and its idle channel tells Shutdown that every
	// admitted task is done.
	tickets *semaphore.Semaphore
	// slots holds one token per running task; nil when nothing may queue,
	// because then a ticket is a slot.
	slots *semaphore.Semaphore
	// n is the limit; maxQueueWait the bound on a newcomer's expected wait
	// (WithMaxQueueWait), 0 for none.
	n            int
	maxQueueWait time.Duration
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
	if l.start(ctx) != nil {
		return
	}
	defer l.finish() // deferred, in case t calls runtime.Goexit
	l.run(ctx, t, admitted, &l.tickets.Completed)
}

// Run admits t and runs it on the caller's goroutine once a slot is free.
func (l *limit) Run(ctx context.Context, t Task) error {
	if err := l.admit(ctx); err != nil {
		return err
	}
	admitted := l.stamp(l.submitted.Load())
	if err := l.start(ctx); err != nil {
		return err
	}
	defer l.finish() // deferred, in case t calls runtime.Goexit
	l.run(ctx, t, admitted, &l.tickets.Completed)
	return nil
}

// admit takes a ticket, waiting for one under WithFull(FullWait).
func (l *limit) admit(ctx context.Context) error {
	if l.refuses() {
		return ErrRejected
	}
	if l.maxQueueWait != 0 && l.waitTooLong() {
		l.rejected.Add(1)
		return ErrRejected
	}
	ok, isClosed := l.tickets.TryAcquire()
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
	if ok, _ := l.tickets.TryAcquire(); ok {
		l.countAdmitted()
		return nil
	}
	switch l.tickets.Wait(ctx.Done()) {
	case semaphore.Acquired:
		// The unit taken above was taken before this caller parked, when a
		// reading could not see the task coming: take one now, after the
		// last wait, as the thread budget's contract asks.
		if l.refuses() {
			l.tickets.Release()
			return ErrRejected
		}
		l.countAdmitted()
		return nil
	case semaphore.Closed:
		return ErrClosed
	}
	select {
	case <-l.closing:
		return ErrClosed
	default:
		return ctx.Err()
	}
}

// waitTooLong reports whether a task admitted now would expect to wait in
// the queue longer than maxQueueWait: the slots free up at n per mean run
// time, and it waits for as many as the tasks ahead of it, plus one.
// Admission happens after, so callers in motion may all pass: the queue's
// length, which the tickets bound exactly, is the hard bound.
func (l *limit) waitTooLong() bool {
	ahead := l.tickets.Held() - l.n
	if ahead < 0 {
		return false // a slot is free
	}
	// In floating point: a mean of hours times a queue of millions would
	// overflow an int64 of nanoseconds.
	wait := float64(l.meanRun.Load()) * float64(ahead+1) / float64(l.n)
	return wait > float64(l.maxQueueWait)
}

// countAdmitted counts a task that has its ticket. Without a queue a ticket is a
// running slot, so this is also where the peak is kept: on the submitter's
// side, which has the semaphore's cache line at hand.
func (l *limit) countAdmitted() {
	l.submitted.Add(1)
	if l.slots == nil {
		l.observe(int64(l.tickets.Held()))
	}
}

// start waits for a running slot. It returns ErrAbandoned, having counted
// the task as abandoned, if Shutdown gives up first, and the context's error,
// having counted the task as expired, if ctx ended while it waited.
func (l *limit) start(ctx context.Context) error {
	if l.slots == nil {
		return nil
	}
	if ok, _ := l.slots.TryAcquire(); !ok {
		if l.slots.Wait(nil) != semaphore.Acquired {
			l.abandonQueued(ctx)
			return ErrAbandoned
		}
	}
	if l.abandoning.Load() {
		// Shutdown gave up while this task waited: a slot freed by a
		// cancelled task does not let a queued one start.
		l.slots.Release()
		l.abandonQueued(ctx)
		return ErrAbandoned
	}
	if ctx.Done() != nil {
		if err := expiry(ctx); err != nil {
			l.slots.Release()
			l.dropped(ctx, err)
			l.expired.Add(1)
			l.tickets.Release()
			return err
		}
	}
	l.observe(int64(l.slots.Held()))
	return nil
}

// abandonQueued drops a queued task that holds a ticket and no slot. The
// ticket is returned last, so that the task counts as queued, and Shutdown
// waits, until its OnDrop function has returned.
func (l *limit) abandonQueued(ctx context.Context) {
	l.dropped(ctx, ErrAbandoned)
	l.abandoned.Add(1)
	l.tickets.Release()
}

func (l *limit) finish() {
	if l.slots != nil {
		l.slots.Release()
	}
	l.tickets.Release()
}

// Shutdown stops admitting tasks and waits for the admitted ones to return.
// If ctx ends first, it cancels the running tasks' contexts, abandons the
// queued ones (a waiting Run returns ErrAbandoned) and returns an error
// wrapping ErrAbandoned and ctx.Err(); goroutines whose task ignores the
// cancellation end when it returns. Shutdown may be called more than once and
// concurrently.
func (l *limit) Shutdown(ctx context.Context) error {
	return l.shutdown(ctx, l.begin, l.tickets.Idle(), nil)
}

func (l *limit) begin() {
	l.tickets.Close()
	close(l.closing)
}

// taskCounts reads the semaphores: tasks holding a slot run, tasks holding
// only a ticket wait. Slots are read before tickets, so that a task moving
// while they are read makes queued too high, never too low.
func (l *limit) taskCounts() (running, queued int64, completed uint64) {
	if l.slots == nil {
		return int64(l.tickets.Held()), 0, l.tickets.Completed.Load()
	}
	running = int64(l.slots.Held())
	queued = int64(l.tickets.Held()) - running
	return running, queued, l.tickets.Completed.Load()
}

// Stats returns a snapshot of the executor's counters.
func (l *limit) Stats() Stats { return l.stats() }
