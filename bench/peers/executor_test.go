package peers

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/alitto/pond/v2"
	"github.com/loomrt/loom"
	"github.com/panjf2000/ants/v2"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// benchWorkers mirrors loom's bench_test.go: every bounded executor gets 64
// workers, or a limit of 64.
const benchWorkers = 64

// An executor is one library under test, driven the way its users drive it.
//
// bind is called once per submitting goroutine, outside the timed loop, with
// the task to run; it returns the calls the loop makes per task: goTask
// submits the task and returns, run submits it and waits for it to finish
// (nil when the library has no way to run one task and wait for it). Binding
// first keeps each library's own task type: nothing is converted or
// allocated per task in the harness. The loom adapters pay one extra
// function call per task, to turn a func() into a loom.Task.
type executor interface {
	bind(task func()) (goTask, run func() error)
	close() error
}

// A contender is a library competing as one kind of loom executor.
type contender struct {
	kind string // the loom executor it competes with: pool, limit or virtual
	impl string // loom, or the library's short name
	make func() (executor, error)
}

// contenders lists every library in the order the benchmarks run them; loom
// comes first in each kind, so benchstat compares the others with it.
var contenders = []contender{
	{"pool", "loom", func() (executor, error) { return loomExecutor{loom.Pool(benchWorkers)}, nil }},
	{"pool", "ants", newAnts},
	{"pool", "pond", newPond},
	{"pool", "chan", newChanPool},
	{"limit", "loom", func() (executor, error) {
		return loomExecutor{loom.Limit(benchWorkers, loom.WithFull(loom.FullWait))}, nil
	}},
	{"limit", "errgroup", newErrgroup},
	{"limit", "semaphore", newSemaphore},
	{"virtual", "loom", func() (executor, error) { return loomExecutor{loom.Virtual()}, nil }},
	{"virtual", "go", func() (executor, error) { return bareGo{}, nil }},
}

// loomExecutor drives a loom executor with context.Background, as loom's own
// benchmarks do.
type loomExecutor struct{ e loom.Executor }

func (l loomExecutor) bind(task func()) (goTask, run func() error) {
	ctx := context.Background()
	t := loom.Task(func(context.Context) { task() })
	return func() error { return l.e.Go(ctx, t) },
		func() error { return l.e.Run(ctx, t) }
}

func (l loomExecutor) close() error { return l.e.Shutdown(context.Background()) }

// handOff returns a run call for a pool that only has "submit": it submits a
// job that runs task and then signals the waiting caller. The job and its
// channel are made once per binding, so running allocates nothing here.
func handOff(submit func(func()) error, task func()) func() error {
	done := make(chan struct{}, 1)
	job := func() {
		task()
		done <- struct{}{}
	}
	return func() error {
		if err := submit(job); err != nil {
			return err
		}
		<-done
		return nil
	}
}

// antsPool is an ants.Pool with benchWorkers workers and ants' defaults:
// Submit blocks while every worker is busy, as loom's Pool does with
// WithFull(FullWait) once its queue is full.
type antsPool struct{ p *ants.Pool }

func newAnts() (executor, error) {
	p, err := ants.NewPool(benchWorkers)
	if err != nil {
		return nil, fmt.Errorf("ants: %w", err)
	}
	return antsPool{p}, nil
}

func (a antsPool) bind(task func()) (goTask, run func() error) {
	return func() error { return a.p.Submit(task) }, handOff(a.p.Submit, task)
}

func (a antsPool) close() error { return a.p.ReleaseTimeout(10 * time.Second) }

// pondPool is a pond pool with benchWorkers workers and, like loom's Pool,
// a queue of benchWorkers tasks that blocks the submitter when full (pond's
// own default queue is unbounded). Go is pond's cheapest submit: it makes no
// future.
type pondPool struct{ p pond.Pool }

func newPond() (executor, error) {
	return pondPool{pond.NewPool(benchWorkers, pond.WithQueueSize(benchWorkers))}, nil
}

func (p pondPool) bind(task func()) (goTask, run func() error) {
	return func() error { return p.p.Go(task) }, handOff(p.p.Go, task)
}

func (p pondPool) close() error {
	p.p.StopAndWait()
	return nil
}

// chanPool is the worker pool a Go programmer writes by hand: benchWorkers
// goroutines ranging over a channel with room for benchWorkers jobs. It is
// the floor a pool library can hope to reach, since it does nothing else:
// no panic recovery, no statistics, no shutdown policy.
type chanPool struct {
	jobs    chan func()
	workers *sync.WaitGroup
}

func newChanPool() (executor, error) {
	c := chanPool{jobs: make(chan func(), benchWorkers), workers: new(sync.WaitGroup)}
	for range benchWorkers {
		c.workers.Go(func() {
			for job := range c.jobs {
				job()
			}
		})
	}
	return c, nil
}

func (c chanPool) submit(job func()) error {
	c.jobs <- job
	return nil
}

func (c chanPool) bind(task func()) (goTask, run func() error) {
	return func() error { return c.submit(task) }, handOff(c.submit, task)
}

func (c chanPool) close() error {
	close(c.jobs)
	c.workers.Wait()
	return nil
}

// errgroupLimit is an errgroup.Group with SetLimit(benchWorkers): Go starts a
// goroutine per task and blocks while benchWorkers are running. errgroup
// cannot run one task and wait for it alone (Wait waits for the whole
// group), so it has no run.
type errgroupLimit struct{ g *errgroup.Group }

func newErrgroup() (executor, error) {
	g := new(errgroup.Group)
	g.SetLimit(benchWorkers)
	return errgroupLimit{g}, nil
}

func (e errgroupLimit) bind(task func()) (goTask, run func() error) {
	t := func() error {
		task()
		return nil
	}
	return func() error {
		e.g.Go(t)
		return nil
	}, nil
}

func (e errgroupLimit) close() error { return e.g.Wait() }

// semaphoreLimit is a weighted semaphore of benchWorkers and a go statement:
// the hand-written limit. Run acquires, runs the task on the caller and
// releases, as loom's Limit.Run does.
type semaphoreLimit struct{ sem *semaphore.Weighted }

func newSemaphore() (executor, error) {
	return semaphoreLimit{semaphore.NewWeighted(benchWorkers)}, nil
}

func (s semaphoreLimit) bind(task func()) (goTask, run func() error) {
	ctx := context.Background()
	return func() error {
			if err := s.sem.Acquire(ctx, 1); err != nil {
				return err
			}
			go func() {
				defer s.sem.Release(1)
				task()
			}()
			return nil
		}, func() error {
			if err := s.sem.Acquire(ctx, 1); err != nil {
				return err
			}
			defer s.sem.Release(1)
			task()
			return nil
		}
}

// close waits for the running tasks by taking every slot.
func (s semaphoreLimit) close() error {
	if err := s.sem.Acquire(context.Background(), benchWorkers); err != nil {
		return err
	}
	s.sem.Release(benchWorkers)
	return nil
}

// bareGo is what loom's Virtual replaces: a go statement per task, and a
// plain call to run one.
type bareGo struct{}

func (bareGo) bind(task func()) (goTask, run func() error) {
	return func() error {
			go task()
			return nil
		}, func() error {
			task()
			return nil
		}
}

func (bareGo) close() error { return nil }
