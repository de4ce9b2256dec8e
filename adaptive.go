package loom

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"
)

// Adaptive returns an executor like Limit whose limit follows measured
// latency instead of being chosen by hand: it runs each task on its own
// goroutine, at most the current limit at once, and moves the limit with the
// TCP Vegas algorithm (Brakmo and Peterson, IEEE JSAC 1995) as Netflix's
// concurrency-limits VegasLimit applies it to servers. From the lowest recent
// latency and the tasks in flight it estimates how many tasks wait
// downstream (a database's pool, a service); when more than a few do, twice
// in a row, it cuts the limit to the estimated capacity plus a few, and it
// grows the limit while the tasks fill it and few wait.
//
// The limit starts at the top of WithLimitRange (default 1 to 10,000; see
// WithInitialLimit), so a load the resource serves without queueing is never
// turned away: below capacity Adaptive behaves as Virtual but for a mutex
// and a clock read at each start and end. Latency rises under a millisecond,
// or a tenth of the lowest latency, are not taken for queueing. A task whose context had ended when it
// returned never counts in the estimate, and counts as a drop when it ran
// for more than twice the lowest latency; drops in two rounds in a row
// lower the limit, so callers that give up at once cannot make the resource
// look idle and a plateau of timeouts lowers the limit instead of growing
// it. A limit that a whole measuring window (1 s, doubling to 10 s) leaves
// half empty, with nothing waiting, returns to the maximum. Stats.Limit is
// the current limit and Stats.TargetLatency the latency at which it stops
// growing.
//
// WithQueue, WithFull and the rest of the contract are Limit's, with WithFull(FullReject)
// by default. Without WithQueue the queue follows the limit: up to half
// the current limit (at least 1) may wait, so that a passing dip of the limit
// below the load makes a few tasks wait a round trip instead of turning them
// away; WithQueue(0) turns away every task that cannot start at once. A queued
// task whose context has ended when its turn comes is dropped, never run,
// and counted in Stats.Expired; Run then returns the context's error. A
// task's latency, which moves the limit, runs from its start, not from its
// admission: the time it waited here is the executor's queue, not the
// resource's. Stats.QueueCapacity is the queue's current bound. Adaptive is
// safe for concurrent use.
func Adaptive(opts ...Option) Executor {
	cfg := newConfig(KindAdaptive, opts)
	if cfg.full == 0 {
		cfg.full = FullReject
	}
	least, most, initial := cfg.limits()
	a := &adaptive{
		alg:  newVegas(initial, least, most, adaptiveBaseWindow),
		idle: make(chan struct{}),
	}
	a.limit = a.alg.current()
	a.queueFollowsLimit = !cfg.queueSet
	a.init(KindAdaptive, cfg, most, cfg.queue)
	a.counts = a.taskCounts
	return a
}

type adaptive struct {
	core

	mu    sync.Mutex
	alg   vegas
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
	if a.refuses() {
		return ErrRejected
	}
	a.mu.Lock()
	for {
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
	if a.alg.start(now, a.running) {
		a.limit = a.alg.current()
	}
	return now
}

// queueRoom returns how many tasks may wait: followingQueue(limit) when
// the queue follows the limit, else the one WithQueue set. The caller holds mu.
func (a *adaptive) queueRoom() int {
	if a.queueFollowsLimit {
		return followingQueue(a.limit)
	}
	return a.queueCapacity
}

// followingQueue is the queue that follows a limit: half of it, at least 1.
// Half covers a cut of a third below a closed loop's connections, as a slow
// spell of the machine makes (100 → 88–92 in loom bench cask-sleep), while
// under a lasting overload, where the queue stays full, a task waits at
// most half a round trip more than it runs.
func followingQueue(limit int) int { return max(1, limit/2) }

func (a *adaptive) now() time.Duration { return time.Since(a.epoch) }

// finish gives a slot back, feeds the task's latency to the limit and hands
// the freed slots to the queue.
func (a *adaptive) finish(ctx context.Context, start time.Duration) {
	now := a.now()
	o := succeeded
	if ctx.Err() != nil {
		o = cancelled
	}
	a.mu.Lock()
	if !a.abandoning.Load() {
		a.alg.observe(start, now-start, now, a.running, o)
		a.limit = a.alg.current()
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
	s.TargetLatency = a.alg.target()
	a.mu.Unlock()
	return s
}

// String describes the limit, for logs.
func (a *adaptive) String() string {
	s := a.Stats()
	return fmt.Sprintf("adaptive %q: limit %d, target latency %v", s.Name, s.Limit, s.TargetLatency)
}
