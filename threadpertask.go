package loom

import (
	"context"
	"runtime/pprof"

	"github.com/loomrt/loom/internal/osthreads"
)

// ThreadPerTask returns an executor that runs each task on an OS thread no
// other task has run on: the task's goroutine locks itself to its thread and
// exits still locked, which retires the thread. It is the control experiment
// for "a new platform thread per task": every task pays for a thread. It
// never queues and is never full, so Go and Run return ErrClosed after
// Shutdown and ErrRejected only when the thread watch refuses; otherwise
// nil. Go returns at once; Run waits for the task to return. It does not
// bound its threads: more tasks at once than the process's thread limit
// (debug.SetMaxThreads) crash the process, so keep the tasks in flight well
// below it. Goroutines carry the pprof labels executor=<name> and
// kind=thread-per-task; a panicking task is recovered and reported. Safe for
// concurrent use. It panics if given WithQueue or WithFull.
func ThreadPerTask(opts ...Option) Executor {
	e := &threadPerTask{}
	e.init(KindThreadPerTask, opts)
	return e
}

type threadPerTask struct {
	unbounded
}

var _ Executor = (*threadPerTask)(nil)

// Go runs t on a new OS thread.
func (e *threadPerTask) Go(ctx context.Context, t Task) error {
	admitted, err := e.admit()
	if err != nil {
		return err
	}
	go e.thread(ctx, t, admitted, nil)
	return nil
}

// Run runs t on a new OS thread and waits for it to return.
func (e *threadPerTask) Run(ctx context.Context, t Task) error {
	admitted, err := e.admit()
	if err != nil {
		return err
	}
	done := results.Get().(chan error)
	go e.thread(ctx, t, admitted, done)
	<-done
	results.Put(done)
	return nil
}

func (e *threadPerTask) thread(ctx context.Context, t Task, admitted int64, done chan error) {
	// Never unlocked: the thread is retired when this goroutine exits.
	osthreads.LockThread() // counted for the thread watch
	pprof.SetGoroutineLabels(e.labels)
	defer e.finish(done) // deferred, in case t calls runtime.Goexit
	e.run(ctx, t, admitted, nil)
}

func (e *threadPerTask) finish(done chan error) {
	// Leave the gate first, so that the task no longer counts as running
	// when Run returns; done has room, so the send cannot block.
	osthreads.Retire()
	e.gate.exit()
	if done != nil {
		done <- nil
	}
}
