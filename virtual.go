package loom

import (
	"context"
	"runtime/pprof"
)

// Virtual returns an executor that runs each task on a new goroutine: Go's
// counterpart of a virtual thread per task (Executors.newVirtualThreadPerTaskExecutor).
// It is never full and never queues; Queue and Full do not apply and make it
// panic. It rejects only while a ThreadWatch is tripped (see
// IgnoreThreadWatch). Use it when tasks mostly wait (I/O, sleeps, other
// services) and nothing downstream needs protecting; bound it with Limit when
// something does.
//
// Go starts a goroutine carrying the pprof labels executor=<name> and
// kind=virtual. Run executes the task on the caller's goroutine (keeping the
// caller's pprof labels) and returns when it does. A panicking task is
// recovered and reported. Go allocates the new goroutine's start record, as
// any go statement with arguments does; Run allocates nothing when the submit
// context is context.Background. Virtual is safe for concurrent use.
func Virtual(opts ...Option) Executor {
	cfg := newConfig(KindVirtual, opts)
	v := &virtual{}
	v.init(KindVirtual, cfg, 0, 0)
	v.counts = v.taskCounts
	return v
}

type virtual struct {
	core
}

var _ Executor = (*virtual)(nil)

// Go runs t on a new goroutine.
func (v *virtual) Go(ctx context.Context, t Task) error {
	if v.refuses() {
		return ErrRejected
	}
	n, ok := v.gate.enter()
	if !ok {
		return ErrClosed
	}
	v.observe(n)
	go v.goroutine(ctx, t, v.stamp(v.submitted.Add(1)))
	return nil
}

func (v *virtual) goroutine(ctx context.Context, t Task, admitted int64) {
	pprof.SetGoroutineLabels(v.labels)
	defer v.gate.exit() // deferred, in case t calls runtime.Goexit
	v.run(ctx, t, admitted, nil)
}

// Run runs t on the caller's goroutine.
func (v *virtual) Run(ctx context.Context, t Task) error {
	if v.refuses() {
		return ErrRejected
	}
	inside, ok := v.gate.enter()
	if !ok {
		return ErrClosed
	}
	v.observe(inside)
	n := v.submitted.Add(1)
	defer v.gate.exit() // deferred, in case t calls runtime.Goexit
	v.run(ctx, t, v.stamp(n), nil)
	return nil
}

// Shutdown stops admitting tasks and waits for the running ones to return.
// If ctx ends first, it cancels their contexts and returns an error wrapping
// ErrAbandoned and ctx.Err(); goroutines whose task ignores the cancellation
// end when it returns. Shutdown may be called more than once and
// concurrently.
func (v *virtual) Shutdown(ctx context.Context) error {
	return v.shutdown(ctx, v.begin, v.gate.idle, nil)
}

func (v *virtual) begin() {
	v.gate.close()
	close(v.closing)
}

// taskCounts counts every task inside the executor as running: nothing queues.
func (v *virtual) taskCounts() (running, queued int64, completed uint64) {
	return v.gate.inside(), 0, v.completed.Load()
}

// Stats returns a snapshot of the executor's counters.
func (v *virtual) Stats() Stats { return v.stats() }
