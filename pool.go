package loom

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
)

// Pool returns an executor with a fixed number of long-lived worker
// goroutines and a queue: the classic thread pool (Undertow's worker pool,
// Tomcat's maxThreads, Akka's fork-join dispatcher).
//
// At most workers tasks run at once; tasks wait in FIFO order, so Pool(1)
// runs tasks one at a time in the order they were admitted.
// Defaults: Queue(workers) and Full(Wait): when every worker is busy and the
// queue is full, Go and Run wait for room until their context ends
// (backpressure), which is how a JVM server with a fixed pool queues
// requests. With Full(Reject) they return ErrRejected at once instead.
// With Queue(0) a task is admitted only if a worker is waiting for work at
// that instant; a worker that is just finishing a task, or has just been
// started, is not yet waiting.
//
// Go hands the task to an idle worker, or to the queue if none is idle or
// tasks are already queued, and returns. Run does the same and waits for the
// task to return; once a task is admitted, it runs even if the
// submit context ends meanwhile (the task sees the context's error).
// A panicking task is recovered and reported, and its worker goes on.
// A task that calls Run on its own pool waits for a worker like anyone else:
// if every worker does so at once, none is left to run them.
// The hot path allocates nothing beyond the caller's closure when the submit
// context is context.Background: tasks travel by value, Run
// reuses its completion channels, and each worker counts its tasks on a cache
// line of its own. A cancellable submit context costs a derived context per
// task (two allocations), so that Shutdown can cancel it.
//
// The workers are started at once and carry the pprof labels
// executor=<name> and kind=pool. Pool is safe for concurrent use.
// It panics if workers is not positive.
func Pool(workers int, opts ...Option) Executor {
	return newPool("pool", workers, false, opts)
}

// Threads returns a Pool whose workers are each locked to their own OS
// thread for their whole life (runtime.LockOSThread): real platform threads,
// for thread-affine or cgo-heavy work, and to reproduce a JVM platform-thread
// pool honestly (the threads' stacks and scheduling are the OS's). The
// threads exit with their workers at Shutdown.
//
// Defaults, queueing and the concurrency contract are those of Pool; the
// pprof label kind is "threads". It panics if workers is not positive.
func Threads(workers int, opts ...Option) Executor {
	return newPool("threads", workers, true, opts)
}

type pool struct {
	core
	lockThread bool
	// tasks is the shared FIFO queue. A worker that finds it empty parks on
	// its own channel, listed in idle, and a submitter that finds the queue
	// empty hands its task straight to such a worker: with every parked
	// worker waiting on one channel, submitters and workers fought over that
	// channel's lock on every task (a third of BenchmarkRunParallel's time
	// went to spinning on it).
	tasks    chan job
	idleHint chan struct{} // see waiters; nil unless Queue(0)
	alive    atomic.Int64  // workers not yet exited
	done     chan struct{} // closed when the last worker exits
	// The fields above are read on every task; idle and waiters are
	// written whenever a worker parks, so they get cache lines of their own.
	_    [64]byte
	idle idleStack
	// waiters counts the submitters waiting for room under Full(Wait); a
	// worker that parks then signals idleHint, so that one of them can hand
	// it a task directly (with Queue(0) nothing else would wake them).
	waiters atomic.Int64
	_       [64]byte
}

// A worker is one of a pool's goroutines: where it counts its tasks, and the
// channel on which it receives a task while parked in the idle stack.
type worker struct {
	tl   *tally
	in   chan job // capacity 1: whoever pops the worker sends once, without blocking
	next job      // a task to run before looking for another; owned by the worker
}

var _ Executor = (*pool)(nil)

// job is one queued task. It travels by value, so queueing allocates nothing.
type job struct {
	ctx      context.Context
	task     Task
	admitted int64      // sampled admission time, or 0
	result   chan error // Run's completion; nil for Go
}

// results recycles Run's completion channels, each with room for one value.
var results = sync.Pool{New: func() any { return make(chan error, 1) }}

func newPool(kind string, workers int, lock bool, opts []Option) *pool {
	if workers <= 0 {
		panic(fmt.Sprintf("loom: %s executor needs a positive number of workers, got %d", kind, workers))
	}
	cfg := newConfig(kind, true, opts)
	if !cfg.queueSet {
		cfg.queue = workers
	}
	if cfg.full == 0 {
		cfg.full = Wait
	}
	p := &pool{lockThread: lock, tasks: make(chan job, cfg.queue), done: make(chan struct{})}
	if cfg.queue == 0 {
		// With a queue, a waiting submitter waits for room in it, and every
		// worker looks at the queue before it parks: no hint is needed, and
		// a nil idleHint keeps it out of the waiting select.
		p.idleHint = make(chan struct{}, 1)
	}
	p.init(kind, cfg, workers, cfg.queue)
	p.tallies = make([]tally, workers)
	p.counts = p.taskCounts
	p.alive.Store(int64(workers))
	for i := range workers {
		go p.work(&worker{tl: &p.tallies[i], in: make(chan job, 1)})
	}
	return p
}

func (p *pool) work(w *worker) {
	if p.lockThread {
		// Never unlocked: a goroutine that exits locked takes its thread
		// with it, so each worker owns one OS thread from start to end.
		runtime.LockOSThread()
	}
	pprof.SetGoroutineLabels(p.labels)
	// busy says whether this worker counts in p.running. It changes only
	// when the worker finds the queue empty and must park, so a saturated
	// pool touches no shared counter between one task and the next.
	busy := false
	for {
		var j job
		ok := true
		if w.next.task != nil {
			j, w.next = w.next, job{}
		} else {
			select {
			case j, ok = <-p.tasks:
			default:
				if busy {
					p.running.Add(-1)
					busy = false
				}
				j, ok = p.park(w)
			}
		}
		if !ok {
			break
		}
		if j.task == nil {
			continue // a wake-up: look at the queue again
		}
		if !busy {
			p.observe(p.running.Add(1))
			busy = true
		}
		p.runJob(j, w)
	}
	// Shut down: the queue is closed; run what is left in it.
	for j := range p.tasks {
		if !busy {
			p.observe(p.running.Add(1))
			busy = true
		}
		p.runJob(j, w)
	}
	if busy {
		p.running.Add(-1)
	}
	if p.alive.Add(-1) == 0 {
		close(p.done)
	}
}

// park lists w as idle and waits for a task. It returns ok false once the
// pool is shut down, and a job without a task for a wake-up. It may also
// leave a second task in w.next.
func (p *pool) park(w *worker) (j job, ok bool) {
	if !p.idle.push(w) {
		return job{}, false
	}
	if p.idleHint != nil && p.waiters.Load() > 0 {
		hint(p.idleHint)
	}
	// A submitter that found no idle worker may have queued a task after
	// this worker last looked; it looks for idle workers only after
	// queueing, so one of the two sees the other.
	select {
	case j, ok = <-p.tasks:
		if p.idle.remove(w) {
			return j, ok
		}
		// Popped meanwhile: the popper's task is on its way, and must run
		// even if the queue was found closed. It waits in w.next, where a
		// replacement worker finds it if j calls runtime.Goexit.
		w.next, _ = <-w.in
		return j, true
	default:
	}
	j, ok = <-w.in
	return j, ok
}

func (p *pool) runJob(j job, w *worker) {
	tl := w.tl
	tl.taken.Add(1)
	if p.abandoning.Load() {
		// Un-take before counting as abandoned: see pool.taskCounts.
		tl.taken.Add(^uint64(0))
		p.abandoned.Add(1)
		if j.result != nil {
			j.result <- ErrAbandoned
		}
		return
	}
	goexit := true
	defer func() {
		if goexit {
			// The task called runtime.Goexit, which ends this goroutine
			// whatever we do: report completion and start a replacement,
			// so the pool keeps its size.
			p.completeJob(j)
			p.running.Add(-1) // this worker was busy
			go p.work(w)
		}
	}()
	p.run(j.ctx, j.task, j.admitted, &tl.completed)
	goexit = false
	p.completeJob(j)
}

func (p *pool) completeJob(j job) {
	if j.result != nil {
		j.result <- nil
	}
}

// Go queues t for a worker; see Pool for when it waits or rejects.
func (p *pool) Go(ctx context.Context, t Task) error {
	return p.submit(ctx, job{ctx: ctx, task: t})
}

// Run hands t to a worker and waits until it returns.
func (p *pool) Run(ctx context.Context, t Task) error {
	result := results.Get().(chan error)
	err := p.submit(ctx, job{ctx: ctx, task: t, result: result})
	if err == nil {
		err = <-result
	}
	results.Put(result)
	return err
}

func (p *pool) submit(ctx context.Context, j job) error {
	if p.handOff(j) {
		return nil
	}
	if _, ok := p.gate.enter(); !ok {
		return ErrClosed
	}
	defer p.gate.exit()
	j.admitted = p.stamp(p.submitted.Load())
	if p.enqueue(j) {
		p.submitted.Add(1)
		return nil
	}
	if p.full == Reject {
		p.rejected.Add(1)
		return ErrRejected
	}
	return p.wait(ctx, j)
}

// wait waits for room for j in the queue, or for a parked worker when there
// is no queue. It is submit's slow path, kept apart so that submit's few
// returns let the compiler open-code its deferred gate exit: a defer it
// cannot open-code costs Go a trip through the runtime's panic machinery
// per task. The caller is inside the gate.
func (p *pool) wait(ctx context.Context, j job) error {
	// Counting ourselves as waiting before looking again pairs with park,
	// which lists its worker before reading waiters.
	if p.idleHint != nil {
		p.waiters.Add(1)
		defer p.waiters.Add(-1)
	}
	for {
		// Without a queue, look again for a parked worker (after counting
		// ourselves as waiting, and on each hint).
		if p.idleHint != nil && p.handOff(j) {
			// One hint may stand for several parked workers: pass it on.
			if p.waiters.Load() > 1 && p.idle.size.Load() > 0 {
				hint(p.idleHint)
			}
			return nil
		}
		select {
		case p.tasks <- j:
			p.wakeIdle()
			p.submitted.Add(1)
			return nil
		case <-p.idleHint:
		case <-ctx.Done():
			return ctx.Err()
		case <-p.closing:
			return ErrClosed
		}
	}
}

// handOff hands j to a parked worker if the queue is empty (a queued task
// goes first), and reports whether it did. It needs no pass through the
// gate, which costs Run two contended atomic writes: the idle stack admits
// and counts the task under its own lock, and Shutdown closes that stack
// before anything else, so a task handed over is one admitted before
// Shutdown began. The worker it pops is out of the stack, so Shutdown does not
// close its channel: the send cannot panic, and the worker runs the task (or
// counts it as abandoned) before it exits.
func (p *pool) handOff(j job) bool {
	if len(p.tasks) != 0 || p.idle.size.Load() == 0 {
		return false
	}
	w, n := p.idle.take()
	if w == nil {
		return false
	}
	j.admitted = p.stamp(n)
	w.in <- j
	return true
}

// enqueue queues j if there is room, without waiting, and wakes a parked
// worker for it. It reports whether j was queued, which the caller counts as
// submitted (hand-offs to a parked worker are handOff's, counted by the idle
// stack). The caller is inside the gate.
func (p *pool) enqueue(j job) bool {
	select {
	case p.tasks <- j:
		p.wakeIdle()
		return true
	default:
		return false
	}
}

// wakeIdle follows the queueing of a task: a worker may have parked after
// the submitter looked for one, and must not sleep while the task waits.
func (p *pool) wakeIdle() {
	if p.idle.size.Load() > 0 {
		if w := p.idle.pop(); w != nil {
			w.in <- job{}
		}
	}
}

func hint(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Shutdown stops admitting tasks, lets the workers run the queue dry and
// waits for them to exit. If ctx ends first, it cancels the running tasks'
// contexts, counts the queued tasks as abandoned (a waiting Run returns
// ErrAbandoned) and returns an error wrapping ErrAbandoned and ctx.Err();
// workers whose task ignores the cancellation exit when it returns.
// Shutdown may be called more than once and concurrently; a later call with
// a longer context waits for the workers again.
func (p *pool) Shutdown(ctx context.Context) error {
	return p.shutdown(ctx, p.begin, p.done, p.drain)
}

func (p *pool) begin() {
	// Closing the idle stack first ends the hand-offs, which do not pass
	// through the gate; the workers it returns stay parked until the queue
	// is closed.
	parked := p.idle.close()
	p.gate.close()
	close(p.closing)
	<-p.gate.idle // submitters leave promptly: closing wakes the waiting ones
	close(p.tasks)
	// No submitter is left to pop a parked worker: wake them all to run
	// what is queued and exit. Workers that park later find the stack closed.
	for _, w := range parked {
		close(w.in)
	}
}

func (p *pool) drain() {
	for j := range p.tasks {
		p.abandoned.Add(1)
		if j.result != nil {
			j.result <- ErrAbandoned
		}
	}
}

// taskCounts reads the workers' tallies: what no worker has taken is queued.
// The abandoned count is read first and the submitted count last, so that a
// task moving while they are read makes queued too high, never too low.
func (p *pool) taskCounts() (running, queued int64, completed uint64) {
	a := p.abandoned.Load()
	var taken uint64
	for i := range p.tallies {
		done := p.tallies[i].completed.Load()
		taken += p.tallies[i].taken.Load()
		completed += done
	}
	running = int64(taken - completed)
	queued = int64(p.submitted.Load() + p.idle.handedCount() - a - taken)
	return running, queued, completed
}

// Stats returns a snapshot of the pool's counters.
func (p *pool) Stats() Stats {
	s := p.stats()
	s.Submitted += p.idle.handedCount()
	return s
}

// idleStack lists the parked workers of a pool, the most recently parked on
// top: its cache is the warmest. Once closed it takes no more workers.
type idleStack struct {
	mu      sync.Mutex
	workers []*worker
	closed  bool
	handed  uint64       // tasks handed straight to a worker popped by take
	size    atomic.Int64 // len(workers), for a look without the lock
}

// push lists w, unless the stack is closed.
func (s *idleStack) push(w *worker) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.workers = append(s.workers, w)
	s.size.Store(int64(len(s.workers)))
	return true
}

// pop takes the worker on top, or returns nil if none is parked.
func (s *idleStack) pop() *worker {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.workers)
	if n == 0 {
		return nil
	}
	w := s.workers[n-1]
	s.workers[n-1] = nil
	s.workers = s.workers[:n-1]
	s.size.Store(int64(n - 1))
	return w
}

// take pops the worker on top for a task handed to it, and counts that task
// as submitted: it returns the worker, or nil if none is parked, and the
// task's number among those handed over.
func (s *idleStack) take() (*worker, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.workers)
	if n == 0 {
		return nil, 0
	}
	w := s.workers[n-1]
	s.workers[n-1] = nil
	s.workers = s.workers[:n-1]
	s.size.Store(int64(n - 1))
	handed := s.handed
	s.handed++
	return w, handed
}

// handedCount returns how many tasks take has counted.
func (s *idleStack) handedCount() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handed
}

// remove takes w off the stack; it reports false if w was popped first.
func (s *idleStack) remove(w *worker) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.workers) - 1; i >= 0; i-- {
		if s.workers[i] == w {
			last := len(s.workers) - 1
			copy(s.workers[i:], s.workers[i+1:])
			s.workers[last] = nil
			s.workers = s.workers[:last]
			s.size.Store(int64(last))
			return true
		}
	}
	return false
}

// close stops the stack and returns the workers parked on it.
func (s *idleStack) close() []*worker {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	ws := s.workers
	s.workers = nil
	s.size.Store(0)
	return ws
}
