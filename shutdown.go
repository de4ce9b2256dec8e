package loom

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

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
