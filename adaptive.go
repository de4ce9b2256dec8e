package loom

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/loomrt/loom/internal/vegas"
)

// Defaults of Adaptive. The limit starts at its maximum (see package vegas).
const (
	adaptiveMin        = 1
	adaptiveMax        = 10000
	adaptiveBaseWindow = 10 * time.Second
)

// Adaptive returns an executor like Limit whose limit follows measured
// latency: each task runs on its own goroutine, at most the current limit at
// once, and the limit moves with TCP Vegas (docs/design/vegas.md); a cut
// after which the tasks do not keep a third of the throughput before it is
// undone, and latency may not cut again for a while. It starts
// at the top of WithLimitRange (default 1 to 10,000; see WithInitialLimit),
// so a load served without queueing is never turned away. Without WithQueue
// up to half the current limit (at least 1) may wait; WithQueue(0) turns away
// every task that cannot start at once. WithFull, expiry of queued tasks and
// the rest of the contract are Limit's, with WithFull(FullReject) by default.
// A task's latency runs from its start, not its admission. Stats.Limit is the
// current limit, Stats.TargetLatency the latency at which it stops growing,
// and Stats.QueueCapacity the queue's current bound. Safe for concurrent use.
func Adaptive(opts ...Option) Executor {
	cfg := newConfig(KindAdaptive, opts)
	if cfg.full == 0 {
		cfg.full = FullReject
	}
	least, most, initial := cfg.limits()
	a := &adaptive{
		alg:  vegas.New(initial, least, most, adaptiveBaseWindow),
		idle: make(chan struct{}),
	}
	a.limit = a.alg.Current()
	a.queueFollowsLimit = !cfg.queueSet
	a.init(KindAdaptive, cfg, most, cfg.queue)
	a.counts = a.taskCounts
	return a
}

type adaptive struct {
	core

	mu    sync.Mutex
	alg   vegas.Limit
	limit int // alg.current()
	// queueFollowsLimit: the queue holds up to half the limit (queueRoom),
	// not core.queueCapacity.
	queueFollowsLimit bool
	running           int
	queue             entryQueue
	room              chan struct{} // closed when room frees up, for callers under WithFull(FullWait); nil if none wait
	shut              bool          // Shutdown has begun
	idleShut          bool
	idle              chan struct{} // closed once shut and nothing runs or waits
	// unrun holds the tasks dropped unrun whose OnDrop function unlock
	// has yet to call; they count as queued until it has.
	unrun entryQueue
}

var _ Executor = (*adaptive)(nil)

// An entry is a task admitted to the queue.
type entry struct {
	ctx      context.Context
	task     Task
	admitted int64         // core.stamp
	started  time.Duration // when its turn came, for Run's
	turn     chan result   // Run's: told when the task's turn comes; nil for Go
	err      error         // why it expired
	next     *entry
}

// result is what a queued Run is told when it leaves the queue.
type result int

const (
	started result = iota // the caller holds a slot: run the task
	expired               // its context ended before its turn
	dropped               // Shutdown gave up on it
)

type entryQueue struct {
	head, tail *entry
	len        int
}

func (q *entryQueue) push(e *entry) {
	if q.tail == nil {
		q.head = e
	} else {
		q.tail.next = e
	}
	q.tail = e
	q.len++
}

func (q *entryQueue) pop() *entry {
	e := q.head
	q.head = e.next
	if q.head == nil {
		q.tail = nil
	}
	e.next = nil
	q.len--
	return e
}

// Go admits t and runs it on a new goroutine, now or when its turn comes.
func (a *adaptive) Go(ctx context.Context, t Task) error {
	return a.submit(ctx, t, false)
}

// Run admits t and runs it on the caller's goroutine once it has a slot.
func (a *adaptive) Run(ctx context.Context, t Task) error {
	return a.submit(ctx, t, true)
}

func (a *adaptive) submit(ctx context.Context, t Task, inline bool) error {
	a.mu.Lock()
	for {
		// The thread budget's unit is taken under the lock, after each wait
		// (for the lock, for room), as the budget's contract asks: a
		// reading taken while this caller waited could not see its task
		// coming.
		if a.refuses() {
			a.mu.Unlock()
			return ErrRejected
		}
		switch {
		case a.shut:
			a.mu.Unlock()
			return ErrClosed
		case a.running < a.limit:
			start := a.begin1()
			a.mu.Unlock()
			n := a.submitted.Add(1)
			if inline {
				a.execute(ctx, t, a.stamp(n), start)
			} else {
				go a.goroutine(ctx, t, a.stamp(n), start)
			}
			return nil
		case a.queue.len < a.queueRoom():
			n := a.submitted.Add(1)
			e := &entry{ctx: ctx, task: t, admitted: a.stamp(n)}
			if !inline {
				a.queue.push(e)
				a.mu.Unlock()
				return nil
			}
			e.turn = make(chan result, 1)
			a.queue.push(e)
			a.mu.Unlock()
			return a.await(e)
		case a.full == FullReject:
			a.mu.Unlock()
			a.rejected.Add(1)
			return ErrRejected
		}
		if a.room == nil {
			a.room = make(chan struct{})
		}
		room := a.room
		a.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
		a.mu.Lock()
	}
}

// await waits for a queued Run's turn and runs its task.
func (a *adaptive) await(e *entry) error {
	switch <-e.turn {
	case expired:
		return e.err
	case dropped:
		return ErrAbandoned
	}
	a.execute(e.ctx, e.task, e.admitted, e.started)
	return nil
}

func (a *adaptive) goroutine(ctx context.Context, t Task, admitted int64, start time.Duration) {
	pprof.SetGoroutineLabels(a.labels)
	a.execute(ctx, t, admitted, start)
}

// execute runs a task that holds a slot since start, and gives the slot
// back.
func (a *adaptive) execute(ctx context.Context, t Task, admitted int64, start time.Duration) {
	defer a.finish(ctx, start) // deferred, in case t calls runtime.Goexit
	a.run(ctx, t, admitted, nil)
}

// begin1 takes a slot for a task that starts now, and returns the time.
// The caller holds mu.
func (a *adaptive) begin1() time.Duration {
	a.running++
	a.observe(int64(a.running))
	now := a.now()
	if a.alg.Start(now, a.running) {
		a.limit = a.alg.Current()
	}
	return now
}

// queueRoom returns how many tasks may wait: vegas.FollowingQueue(limit) when
// the queue follows the limit, else the one WithQueue set. The caller holds mu.
func (a *adaptive) queueRoom() int {
	if a.queueFollowsLimit {
		return vegas.FollowingQueue(a.limit)
	}
	return a.queueCapacity
}

func (a *adaptive) now() time.Duration { return time.Since(a.epoch) }

// finish gives a slot back, feeds the task's latency to the limit and hands
// the freed slots to the queue.
func (a *adaptive) finish(ctx context.Context, start time.Duration) {
	now := a.now()
	o := vegas.Succeeded
	if ctx.Err() != nil {
		o = vegas.Cancelled
	}
	a.mu.Lock()
	if !a.abandoning.Load() {
		a.alg.Observe(start, now-start, now, a.running, o)
		a.limit = a.alg.Current()
	}
	a.running--
	a.dispatch()
	a.unlock()
}

// dispatch starts queued tasks while there are free slots, drops those whose
// context has ended, and wakes the callers waiting for room. The caller
// holds mu.
func (a *adaptive) dispatch() {
	for a.running < a.limit && a.queue.len > 0 {
		e := a.queue.pop()
		if a.abandoning.Load() {
			a.abandoned.Add(1)
			a.drop(e, ErrAbandoned, dropped)
			continue
		}
		if err := expiry(e.ctx); err != nil {
			a.expired.Add(1)
			a.drop(e, err, expired)
			continue
		}
		start := a.begin1()
		if e.turn != nil {
			e.started = start
			e.turn <- started
		} else {
			go a.goroutine(e.ctx, e.task, e.admitted, start)
		}
	}
	if a.room != nil && (a.running < a.limit || a.queue.len < a.queueRoom()) {
		close(a.room)
		a.room = nil
	}
	if a.shut && a.running == 0 && a.queue.len == 0 && a.unrun.len == 0 && !a.idleShut {
		a.idleShut = true
		close(a.idle)
	}
}

// expiry returns why a task submitted with ctx must not start: ctx's error,
// or context.DeadlineExceeded once its deadline has passed, even if the
// timer that ends ctx has not fired yet (it can lag on a busy machine).
func expiry(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// Shutdown stops admitting tasks and waits for the admitted ones, queued
// ones included, to return. If ctx ends first, it cancels the running tasks'
// contexts, abandons the queued ones (a waiting Run returns ErrAbandoned) and
// returns an error wrapping ErrAbandoned and ctx.Err(). Shutdown may be
// called more than once and concurrently.
func (a *adaptive) Shutdown(ctx context.Context) error {
	return a.shutdown(ctx, a.begin, a.idle, a.abandonQueue)
}

func (a *adaptive) begin() {
	a.mu.Lock()
	a.shut = true
	close(a.closing)
	if a.room != nil {
		close(a.room)
		a.room = nil
	}
	a.dispatch()
	a.unlock()
}

// abandonQueue abandons every queued task.
func (a *adaptive) abandonQueue() {
	a.mu.Lock()
	for a.queue.len > 0 {
		e := a.queue.pop()
		a.abandoned.Add(1)
		a.drop(e, ErrAbandoned, dropped)
	}
	a.dispatch()
	a.unlock()
}

// drop answers the Run of e, a task that will never run, and leaves e for
// unlock to call its OnDrop function. The caller holds mu.
func (a *adaptive) drop(e *entry, err error, r result) {
	e.err = err
	if e.turn != nil {
		e.turn <- r
	}
	a.unrun.push(e)
}

// unlock releases mu, then calls the OnDrop functions of the tasks dropped
// meanwhile, outside the lock so that they may call the executor; until they
// have returned those tasks count as queued, and Shutdown waits for them.
func (a *adaptive) unlock() {
	for a.unrun.head != nil {
		list := a.unrun.head
		a.unrun.head, a.unrun.tail = nil, nil
		a.mu.Unlock()
		n := 0
		for e := list; e != nil; e = e.next {
			a.dropped(e.ctx, e.err)
			n++
		}
		a.mu.Lock()
		a.unrun.len -= n
		a.dispatch() // closes idle if these were the last tasks
	}
	a.mu.Unlock()
}

func (a *adaptive) taskCounts() (running, queued int64, completed uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return int64(a.running), int64(a.queue.len + a.unrun.len), a.completed.Load()
}

// Stats returns a snapshot of the executor's counters, with the current
// limit, the queue's current bound and the latency the limit targets.
func (a *adaptive) Stats() Stats {
	s := a.stats()
	a.mu.Lock()
	s.Limit = a.limit
	s.QueueCapacity = a.queueRoom()
	s.TargetLatency = a.alg.Target()
	a.mu.Unlock()
	return s
}

// String describes the limit, for logs.
func (a *adaptive) String() string {
	s := a.Stats()
	return fmt.Sprintf("adaptive %q: limit %d, target latency %v", s.Name, s.Limit, s.TargetLatency)
}
