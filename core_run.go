package loom

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"sync"
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

// dropped calls the OnDrop function ctx carries, if any, for a task that was
// admitted and will never run, and reports its panic.
func (c *core) dropped(ctx context.Context, err error) {
	if ctx == nil {
		return // a misuse the executor otherwise survives; nothing to call
	}
	f, _ := ctx.Value(dropKey{}).(func(error))
	if f == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			c.onPanic(c.name, v, debug.Stack())
		}
	}()
	f(err)
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

// cancelShards spreads the registrations of tasks whose submit context is
// cancellable over several lists, so they do not all take one mutex.
const cancelShards = 8

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

func unlist(list *cancelList, entry *cancelEntry, cancel context.CancelCauseFunc) {
	list.remove(entry)
	entry.cancel = nil
	cancelEntries.Put(entry)
	cancel(nil)
}
