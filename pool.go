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
// Go hands the task to the queue and returns. Run hands it to a worker and
// waits for it to return; once a task is admitted, it runs even if the
// submit context ends meanwhile (the task sees the context's error).
// A panicking task is recovered and reported, and its worker goes on.
// A task that calls Run on its own pool waits for a worker like anyone else:
// if every worker does so at once, none is left to run them.
// The hot path allocates nothing beyond the caller's closure when the submit
// context is context.Background: tasks travel through the queue by value, Run
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
	tasks      chan job
	alive      atomic.Int64  // workers not yet exited
	done       chan struct{} // closed when the last worker exits
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
	p.init(kind, cfg, workers, cfg.queue)
	p.tallies = make([]tally, workers)
	p.counts = p.taskCounts
	p.alive.Store(int64(workers))
	for i := range workers {
		go p.work(&p.tallies[i])
	}
	return p
}

func (p *pool) work(tl *tally) {
	if p.lockThread {
		// Never unlocked: a goroutine that exits locked takes its thread
		// with it, so each worker owns one OS thread from start to end.
		runtime.LockOSThread()
	}
	pprof.SetGoroutineLabels(p.labels)
	// busy says whether this worker counts in p.running. It changes only
	// when the worker finds the queue empty and must block, so a saturated
	// pool touches no shared counter between one task and the next.
	busy := false
	for {
		var j job
		var ok bool
		select {
		case j, ok = <-p.tasks:
		default:
			if busy {
				p.running.Add(-1)
				busy = false
			}
			j, ok = <-p.tasks
		}
		if !ok {
			break
		}
		if !busy {
			p.observe(p.running.Add(1))
			busy = true
		}
		p.runJob(j, tl)
	}
	if busy {
		p.running.Add(-1)
	}
	if p.alive.Add(-1) == 0 {
		close(p.done)
	}
}

func (p *pool) runJob(j job, tl *tally) {
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
			go p.work(tl)
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
	if _, ok := p.gate.enter(); !ok {
		return ErrClosed
	}
	defer p.gate.exit()
	j.admitted = p.stamp(p.submitted.Load())
	select {
	case p.tasks <- j:
		p.submitted.Add(1)
		return nil
	default:
	}
	if p.full == Reject {
		p.rejected.Add(1)
		return ErrRejected
	}
	select {
	case p.tasks <- j:
		p.submitted.Add(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.closing:
		return ErrClosed
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
	p.gate.close()
	close(p.closing)
	<-p.gate.idle // submitters leave promptly: closing wakes the waiting ones
	close(p.tasks)
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
	queued = int64(p.submitted.Load() - a - taken)
	return running, queued, completed
}

// Stats returns a snapshot of the pool's counters.
func (p *pool) Stats() Stats { return p.stats() }
