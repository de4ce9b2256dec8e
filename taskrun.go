package loom

import (
	"context"
	"math/rand/v2"
	"runtime/debug"
	"sync/atomic"
	"time"
)

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
		c.count(c.detach(parent), t, admitted, done)
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

// recovered reports a task's panic: counted, and handed to the panic handler
// with the stack of the goroutine that recovered it.
func (c *core) recovered(v any) {
	c.panicked.Add(1)
	c.onPanic(c.name, v, debug.Stack())
}

// detach returns the task context for a submit context that cannot be
// cancelled. Made for every task, it is an allocation; an OnDrop context
// keeps the one made last, and gives it to the tasks submitted with it to
// the same executor. It never changes once made, so sharing it is safe.
func (c *core) detach(parent context.Context) context.Context {
	d, ok := parent.(*dropContext)
	if !ok {
		return detached{Context: parent, stop: c.stop}
	}
	if task := d.task.Load(); task != nil && task.stop == c.stop {
		return task
	}
	task := &detached{Context: parent, stop: c.stop}
	d.task.Store(task)
	return task
}

// detached gives a task the values of a submit context that cannot be
// cancelled, and the cancellation of the executor.
type detached struct {
	context.Context
	stop context.Context
}

func (d detached) Done() <-chan struct{} { return d.stop.Done() }
func (d detached) Err() error            { return d.stop.Err() }
