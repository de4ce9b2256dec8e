package loom

import (
	"context"
	"runtime"
	"runtime/pprof"
)

// ThreadPerTask returns an executor that runs each task on an OS thread no
// other task has run on: a new goroutine locks itself to its thread and exits
// still locked, which makes the runtime retire that thread (and create another
// when it next needs one). It is the control experiment that separates "a new
// thread per task" (Java's Executors.newThreadPerTaskExecutor with platform
// threads) from "a new virtual thread per task": every task pays for creating
// and destroying a thread. It is never full and never queues; Queue and Full
// do not apply and make it panic. It rejects only while a ThreadWatch is
// tripped (see IgnoreThreadWatch). Nor does it bound its
// threads: more tasks running at once than the runtime's thread limit
// (10,000 by default, debug.SetMaxThreads) crash the process, as platform
// threads exhaust a JVM; keep the tasks in flight below it.
//
// Go and Run both start the task's thread; Run waits for the task to return.
// The goroutines carry the pprof labels executor=<name> and
// kind=thread-per-task. A panicking task is recovered and reported.
// ThreadPerTask is safe for concurrent use.
func ThreadPerTask(opts ...Option) Executor {
	cfg := newConfig(KindThreadPerTask, opts)
	e := &threadPerTask{}
	e.init(KindThreadPerTask, cfg, 0, 0)
	e.counts = e.taskCounts
	return e
}

type threadPerTask struct {
	core
}

var _ Executor = (*threadPerTask)(nil)

// Go runs t on a new OS thread.
func (e *threadPerTask) Go(ctx context.Context, t Task) error {
	if e.refuses() {
		return ErrRejected
	}
	inside, ok := e.gate.enter()
	if !ok {
		return ErrClosed
	}
	e.observe(inside)
	go e.thread(ctx, t, e.stamp(e.submitted.Add(1)), nil)
	return nil
}

// Run runs t on a new OS thread and waits for it to return.
func (e *threadPerTask) Run(ctx context.Context, t Task) error {
	if e.refuses() {
		return ErrRejected
	}
	inside, ok := e.gate.enter()
	if !ok {
		return ErrClosed
	}
	e.observe(inside)
	n := e.submitted.Add(1)
	done := results.Get().(chan error)
	go e.thread(ctx, t, e.stamp(n), done)
	<-done
	results.Put(done)
	return nil
}

func (e *threadPerTask) thread(ctx context.Context, t Task, admitted int64, done chan error) {
	// Never unlocked: the thread is retired when this goroutine exits.
	runtime.LockOSThread()
	lockedThreads.Add(1) // for the thread watch
	pprof.SetGoroutineLabels(e.labels)
	defer e.finish(done) // deferred, in case t calls runtime.Goexit
	e.run(ctx, t, admitted, nil)
}

func (e *threadPerTask) finish(done chan error) {
	// Leave the gate first, so that the task no longer counts as running
	// when Run returns; done has room, so the send cannot block.
	lockedThreads.Add(-1)
	e.gate.exit()
	if done != nil {
		done <- nil
	}
}

// Shutdown stops admitting tasks and waits for the running ones to return.
// If ctx ends first, it cancels their contexts and returns an error wrapping
// ErrAbandoned and ctx.Err(); threads whose task ignores the cancellation end
// when it returns. Shutdown may be called more than once and concurrently.
func (e *threadPerTask) Shutdown(ctx context.Context) error {
	return e.shutdown(ctx, e.begin, e.gate.idle, nil)
}

func (e *threadPerTask) begin() {
	e.gate.close()
	close(e.closing)
}

// taskCounts counts every task inside the executor as running: nothing queues.
func (e *threadPerTask) taskCounts() (running, queued int64, completed uint64) {
	return e.gate.inside(), 0, e.completed.Load()
}

// Stats returns a snapshot of the executor's counters.
func (e *threadPerTask) Stats() Stats { return e.stats() }
