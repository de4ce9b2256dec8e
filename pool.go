package loom

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"

	"github.com/loomrt/loom/internal/osthreads"
)

// Pool returns an executor with workers long-lived goroutines and a FIFO
// queue: the classic fixed thread pool. The workers start at once, with the
// pprof labels executor=<name> and kind=pool.
//
// At most workers tasks run at once; Pool(1) runs tasks one at a time, in
// the order they were admitted. Defaults: WithQueue(workers) and WithFull(FullWait).
// Go admits the task, to a parked worker or to the queue, and returns; Run
// admits it and blocks until it returns. When every worker is busy and the
// queue is full, both block until there is room or ctx ends (then they
// return ctx.Err()); under WithFull(FullReject) they return ErrRejected at once.
// Under WithQueue(0) a task is admitted only while a worker is parked waiting for
// one. After Shutdown has begun they return ErrClosed; when the thread watch
// refuses the task, ErrRejected (see ThreadWatch). A task whose ctx has ended
// (or passed its deadline) when a worker takes it is dropped unrun and
// counted in Stats.Expired; Run then returns ctx's error. A started task runs
// even if ctx ends meanwhile (the task sees ctx's error); a panic in it is
// recovered and reported (see WithPanicHandler). A task that calls Run on its own
// pool waits for a worker like any caller. Per task, nothing is allocated
// unless ctx is cancellable (then two allocations). Pool is safe for
// concurrent use; it panics if workers is not positive.
func Pool(workers int, opts ...Option) Executor {
	return newPool(KindPool, workers, false, opts)
}

// Threads returns a Pool whose workers are each locked to their own OS
// thread for their whole life (runtime.LockOSThread): real platform threads,
// for thread-affine or cgo-heavy work, and to reproduce a JVM platform-thread
// pool honestly (the threads' stacks and scheduling are the OS's). The
// threads exit with their workers at Shutdown.
//
// Defaults, queueing and the concurrency contract are those of Pool; the
// pprof label kind is "threads". It panics if workers is not positive, or if
// workers OS threads and the runtime's own would exceed the process's thread
// limit (see ErrThreadLimit; Spec.New returns that as an error instead).
func Threads(workers int, opts ...Option) Executor {
	if workers > 0 {
		if err := checkThreads(workers); err != nil {
			panic(fmt.Sprintf("loom: Threads(%d): %v", workers, err))
		}
	}
	return newPool(KindThreads, workers, true, opts)
}

// checkThreads returns an error if n workers, each holding an OS thread,
// would leave the runtime less than its headroom below the process's thread
// limit: past it, the process dies with "fatal error: thread exhaustion".
func checkThreads(n int) error {
	limit, live, headroom := osthreads.MaxThreads(), osthreads.Live(), osthreads.Headroom()
	if n+live+headroom <= limit {
		return nil
	}
	return fmt.Errorf("%w: %d workers, %d threads running and the runtime's headroom of %d (GOMAXPROCS+%d) exceed the process's thread limit of %d (debug.SetMaxThreads); at most %d workers fit",
		ErrThreadLimit, n, live, headroom, osthreads.HeadroomFixed, limit, max(limit-live-headroom, 0))
}

// ErrThreadLimit is wrapped by the error Spec.New, Parse and FromEnv return
// (and the panic of Threads carries) when a threads executor would need more
// OS threads than the process may have.
var ErrThreadLimit = errors.New("not enough OS threads")

type pool struct {
	core
	lockThread bool
	// tasks is the shared FIFO queue. A worker that finds it empty parks on
	// a channel of its own, listed in idle, and a submitter that finds it
	// empty hands its task straight to a parked worker (docs/design/pool-executor.md
	// says why not one channel for every parked worker).
	tasks    chan job
	idleHint chan struct{} // see waiters; nil unless WithQueue(0)
	alive    atomic.Int64  // workers not yet exited
	done     chan struct{} // closed when the last worker exits
	// The fields above are read on every task; idle and waiters are
	// written whenever a worker parks, so they get cache lines of their own.
	_    [64]byte
	idle idleStack
	// waiters counts the submitters waiting for room under WithFull(FullWait); a
	// worker that parks then signals idleHint, so that one of them can hand
	// it a task directly (under WithQueue(0) nothing else would wake them).
	waiters atomic.Int64
	_       [64]byte
}

// A worker is one of a pool's goroutines: where it counts its tasks, how it
// receives a task while parked in the idle stack, and how it answers a Run
// that handed it one.
type worker struct {
	tl *tally
	// Whoever pops the worker off the idle stack owns slot until it
	// signals in (capacity 1, so the signal never blocks): it leaves a task
	// there, or nothing to wake the worker. A task waits in slot rather than
	// travelling through the channel because copying it into and out of a
	// channel costs a hand-off more than storing it (see park).
	in   chan struct{}
	slot job
	// done carries the result of a Run task handed to this worker to the
	// Run waiting for it. It is unbuffered, so the worker parks again only
	// once that Run has its result: a Run that hands the worker its next
	// task cannot read a result meant for an earlier one.
	done chan error
	// busy says whether the worker counts as running in the idle stack's
	// tally, which gives PeakRunning. The worker's goroutine owns it, except
	// that take sets it for a parked worker, under the stack's lock and
	// before the send that wakes the worker.
	busy bool
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

func newPool(kind Kind, workers int, lock bool, opts []Option) *pool {
	if workers <= 0 {
		panic(fmt.Sprintf("loom: %s executor needs a positive number of workers, got %d", kind, workers))
	}
	cfg := newConfig(kind, opts)
	if !cfg.queueSet {
		cfg.queue = workers
	}
	if cfg.full == 0 {
		cfg.full = FullWait
	}
	p := &pool{lockThread: lock, tasks: make(chan job, cfg.queue), done: make(chan struct{})}
	p.idle.peak, p.idle.submitted = &p.peak, &p.submitted
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
		go p.work(&worker{tl: &p.tallies[i], in: make(chan struct{}, 1), done: make(chan error)})
	}
	return p
}

func (p *pool) work(w *worker) {
	if p.lockThread {
		// Never unlocked: a goroutine that exits locked takes its thread
		// with it, so each worker owns one OS thread from start to end.
		osthreads.LockThread() // the thread watch counts it as in use
	}
	pprof.SetGoroutineLabels(p.labels)
	stopped := false
	defer func() {
		if stopped {
			return
		}
		p.threadGone()
		// A task (or the panic handler) called runtime.Goexit, which ends
		// this goroutine whatever we do. The task is counted (core.count
		// does that in a deferred call); answer its Run, and let a
		// replacement take over w, still busy, so the pool keeps its size.
		j := w.slot
		w.slot = job{}
		answer(&j, nil)
		go p.work(w)
	}()
	p.serve(w)
	stopped = true
	p.threadGone()
	if p.alive.Add(-1) == 0 {
		close(p.done)
	}
}

// threadGone stops counting a Threads worker's thread as in use, just before
// the worker's goroutine exits, locked, and takes the thread with it: before
// Shutdown can return, so that the count is exact once it has.
func (p *pool) threadGone() {
	if p.lockThread {
		osthreads.Retire()
	}
}

// serve runs tasks until the pool is shut down and its queue is empty. The
// task running is always the one in w's slot: a task taken from the queue
// goes there too, so none is copied on its way to running. core.run keeps
// the books of every task and recovers its panic, as on every executor.
func (p *pool) serve(w *worker) {
	j := &w.slot
	closed := false
	for {
		if closed {
			// Shut down: run what is left in the queue.
			var ok bool
			if *j, ok = <-p.tasks; !ok {
				return
			}
		} else {
			ok := true
			// len is only a hint, read without synchronising: park looks
			// at the queue again, properly, before the worker sleeps.
			// Skipping an empty queue here saves a channel operation on
			// every task of a pool that is not saturated.
			if len(p.tasks) != 0 {
				select {
				case *j, ok = <-p.tasks:
				default:
				}
			}
			if ok && j.task == nil {
				ok = p.park(w)
			}
			if !ok {
				closed = true
				continue
			}
			if j.task == nil {
				continue // a wake-up: look at the queue again
			}
		}
		if !w.busy {
			// Taken from the queue after a wake-up, or at shutdown: the
			// worker's idle turns are counted under the stack's lock, so its
			// busy turns are too. A worker that keeps finding tasks queued
			// stays busy, and a worker handed a task was counted by take.
			p.idle.working(w)
		}
		w.tl.taken.Add(1)
		if j.ctx.Done() != nil {
			if err := expiry(j.ctx); err != nil {
				// Its context ended while it waited: dropped unrun.
				// Un-taken first, as for abandoned tasks below.
				w.tl.taken.Add(^uint64(0))
				p.drop(w, err, &p.expired)
				continue
			}
		}
		if p.abandoning.Load() {
			// Un-take before counting as abandoned: see pool.taskCounts.
			w.tl.taken.Add(^uint64(0))
			p.drop(w, ErrAbandoned, &p.abandoned)
		} else {
			p.run(j.ctx, j.task, j.admitted, &w.tl.completed)
			answer(j, nil)
		}
		*j = job{}
	}
}

// drop tells the submitter of the un-taken task in w's slot that it will
// never run, counts it in count and answers its Run. The task counts as
// queued until it is counted, so Shutdown waits for the OnDrop function.
// The slot is emptied first: if that function calls runtime.Goexit, work's
// recovery finds no task to answer.
func (p *pool) drop(w *worker, err error, count *atomic.Uint64) {
	j := w.slot
	w.slot = job{}
	p.dropped(j.ctx, err)
	count.Add(1)
	answer(&j, err)
}

// answer gives err to the Run waiting for j, if any.
func answer(j *job, err error) {
	if j.result != nil {
		j.result <- err
	}
}

// park lists w as idle and waits for a task, unless a task is queued: then
// it takes that task at once. The task, if any, is left in w's slot; a
// wake-up leaves it empty. It returns false once the pool is shut down.
func (p *pool) park(w *worker) bool {
	listed, ok := p.idle.push(w, p.tasks)
	if !listed {
		return ok
	}
	if p.idleHint != nil && p.waiters.Load() > 0 {
		hint(p.idleHint)
	}
	_, ok = <-w.in
	return ok
}

// give hands j, or a wake-up if j is empty, to w, which the caller has
// popped off the idle stack.
func (w *worker) give(j job) {
	w.slot = j
	w.in <- struct{}{}
}

// Go queues t for a worker; see Pool for when it waits or rejects.
func (p *pool) Go(ctx context.Context, t Task) error {
	if p.refuses() {
		return ErrRejected
	}
	if t == nil {
		t = nilTask
	}
	return p.submit(ctx, job{ctx: ctx, task: t})
}

// nilTask stands for a nil Task, which a worker would take for a wake-up:
// it panics as calling nil would, so that a nil Task is reported like any
// panicking task, as the other executors report it.
func nilTask(context.Context) {
	panic("loom: nil Task")
}

// Run hands t to a worker and waits until it returns.
func (p *pool) Run(ctx context.Context, t Task) error {
	if p.refuses() {
		return ErrRejected
	}
	if t == nil {
		t = nilTask
	}
	j := job{ctx: ctx, task: t}
	if w := p.idleWorker(&j); w != nil {
		// The worker answers on its own channel: no completion channel
		// to fetch and return.
		j.result = w.done
		w.give(j)
		return <-w.done
	}
	result := results.Get().(chan error)
	j.result = result
	err := p.queue(ctx, j)
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
	return p.queue(ctx, j)
}

// queue admits j to the queue, or waits or rejects as the Full policy says.
func (p *pool) queue(ctx context.Context, j job) error {
	if _, ok := p.gate.enter(); !ok {
		return ErrClosed
	}
	defer p.gate.exit()
	j.admitted = p.stamp(p.submitted.Load())
	select {
	case p.tasks <- j:
		p.queued()
		return nil
	default:
	}
	if p.full == FullReject {
		p.rejected.Add(1)
		return ErrRejected
	}
	return p.wait(ctx, j)
}

// wait waits for room for j in the queue, or for a parked worker when there
// is no queue. It is queue's slow path, kept apart so that queue's few
// returns let the compiler open-code its deferred gate exit. The caller is
// inside the gate.
func (p *pool) wait(ctx context.Context, j job) error {
	// Without a queue, a waiting submitter and a parking worker are a
	// Dekker pair, as queued and idleStack.push are: we write waiters and
	// then read the stack's parked flag (in handOff); park writes parked and
	// then reads waiters. Both are sequentially consistent atomics, so at
	// least one of us sees the other: we find the worker, or it hints.
	if p.idleHint != nil {
		p.waiters.Add(1)
		defer p.waiters.Add(-1)
	}
	for {
		// Without a queue, look again for a parked worker (after counting
		// ourselves as waiting, and on each hint).
		if p.idleHint != nil && p.handOff(j) {
			// One hint may stand for several parked workers: pass it on.
			if p.waiters.Load() > 1 && p.idle.any() {
				hint(p.idleHint)
			}
			return nil
		}
		select {
		case p.tasks <- j:
			p.queued()
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
	w := p.idleWorker(&j)
	if w == nil {
		return false
	}
	w.give(j)
	return true
}

// idleWorker pops a parked worker for j if the queue is empty, and stamps j
// as admitted; the caller must then send j to the worker. It returns nil if
// j must queue.
func (p *pool) idleWorker(j *job) *worker {
	if len(p.tasks) != 0 || !p.idle.any() {
		return nil
	}
	w, n := p.idle.take()
	if w == nil {
		return nil
	}
	j.admitted = p.stamp(n)
	return w
}

// queued follows the queueing of a task: it counts the task as submitted
// and then wakes a parked worker, if any, to take it.
//
// This is one side of a Dekker pair with idleStack.push, which lists a
// parking worker (writing the stack's parked flag when the stack was empty)
// and then reads submitted before it looks at the queue. Both sides write
// and then read sequentially consistent atomics, and the Go memory model
// orders all of those in one total order, so at least one side sees the
// other's write. If the worker's read of submitted comes after our Add, our
// send happened before its look at the queue, which then finds the task
// (or another worker has taken it). Otherwise our read of parked comes after
// the worker was listed, and we pop and wake a worker: this one, or another
// that looks at the queue in turn. Either way no task sleeps in the queue
// beside a parked worker.
func (p *pool) queued() {
	p.submitted.Add(1)
	if p.idle.any() {
		if w := p.idle.pop(); w != nil {
			w.give(job{})
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
		p.dropped(j.ctx, ErrAbandoned)
		p.abandoned.Add(1)
		answer(&j, ErrAbandoned)
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
	queued = int64(p.submitted.Load() + p.idle.handedCount() - a - p.expired.Load() - taken)
	return running, queued, completed
}

// Stats returns a snapshot of the pool's counters.
func (p *pool) Stats() Stats {
	s := p.snapshot()
	s.Submitted += p.idle.handedCount()
	s.settle()
	return s
}
