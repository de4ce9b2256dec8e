package loom

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// queueingExecutors are the kinds that admit a task and may drop it unrun;
// each runs one task at a time and queues up to four.
var queueingExecutors = []struct {
	kind string
	make func(opts ...Option) Executor
}{
	{"pool", func(opts ...Option) Executor { return Pool(1, append([]Option{WithQueue(4)}, opts...)...) }},
	{"threads", func(opts ...Option) Executor { return Threads(1, append([]Option{WithQueue(4)}, opts...)...) }},
	{"limit", func(opts ...Option) Executor { return Limit(1, append([]Option{WithQueue(4)}, opts...)...) }},
	{"adaptive", func(opts ...Option) Executor {
		return Adaptive(append([]Option{WithLimitRange(1, 1), WithQueue(4)}, opts...)...)
	}},
}

// dropLog records the calls of OnDrop functions, by task.
type dropLog struct {
	e    Executor
	mu   sync.Mutex
	errs map[string][]error
}

// ctx returns parent carrying an OnDrop function that records the calls for
// the task named name. The function reads e's Stats, which would deadlock if
// the executor called it holding its lock.
func (d *dropLog) ctx(parent context.Context, name string) context.Context {
	return OnDrop(parent, func(err error) {
		d.e.Stats()
		d.mu.Lock()
		defer d.mu.Unlock()
		d.errs[name] = append(d.errs[name], err)
	})
}

// check fails the test unless the task named name was dropped exactly once
// with an error that is want.
func (d *dropLog) check(t *testing.T, name string, want error) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if got := d.errs[name]; len(got) != 1 || !errors.Is(got[0], want) {
		t.Errorf("OnDrop calls for %s = %v; want one, with %v", name, got, want)
	}
}

// neverRan is a task that fails the test if it runs.
func neverRan(t *testing.T, name string) Task {
	return func(context.Context) { t.Errorf("task %s ran; want it dropped", name) }
}

// Shutdown giving up on queued tasks calls each one's OnDrop function once,
// with ErrAbandoned, before it returns: tasks submitted with Go and with Run.
func TestOnDropAbandoned(t *testing.T) {
	for _, tc := range queueingExecutors {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.make()
			d := &dropLog{e: e, errs: map[string][]error{}}
			release := occupy(t, e, 1)
			for _, name := range []string{"go1", "go2"} {
				if err := e.Go(d.ctx(context.Background(), name), neverRan(t, name)); err != nil {
					t.Fatalf("Go %s: %v", name, err)
				}
			}
			runErr := make(chan error, 1)
			go func() { runErr <- e.Run(d.ctx(context.Background(), "run"), neverRan(t, "run")) }()
			waitFor(t, func() bool { return e.Stats().Queued == 3 })

			given, cancel := context.WithCancel(context.Background())
			cancel()
			if err := e.Shutdown(given); !errors.Is(err, ErrAbandoned) {
				t.Fatalf("Shutdown = %v; want ErrAbandoned", err)
			}
			for _, name := range []string{"go1", "go2", "run"} {
				d.check(t, name, ErrAbandoned)
			}
			if err := <-runErr; !errors.Is(err, ErrAbandoned) {
				t.Errorf("Run = %v; want ErrAbandoned, unchanged by OnDrop", err)
			}
			release()
			shutdown(t, e)
			if s := e.Stats(); s.Abandoned != 3 || s.Completed != 1 {
				t.Errorf("Stats abandoned %d, completed %d; want 3, 1", s.Abandoned, s.Completed)
			}
		})
	}
}

// A queued task whose context ends before its turn has its OnDrop function
// called once with the context's error: cancelled while queued, or past its
// deadline when submitted.
func TestOnDropExpired(t *testing.T) {
	for _, tc := range queueingExecutors {
		for _, submit := range []string{"Go", "Run"} {
			t.Run(tc.kind+"/"+submit, func(t *testing.T) {
				e := tc.make()
				d := &dropLog{e: e, errs: map[string][]error{}}
				release := occupy(t, e, 1)
				cancelled, cancel := context.WithCancel(context.Background())
				late, cancelLate := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
				defer cancelLate()
				submitFn := e.Go
				if submit == "Run" {
					submitFn = e.Run
				}
				var wg sync.WaitGroup
				for name, ctx := range map[string]context.Context{"cancelled": cancelled, "late": late} {
					wg.Go(func() {
						if err := submitFn(d.ctx(ctx, name), neverRan(t, name)); submit == "Go" && err != nil {
							t.Errorf("Go %s: %v", name, err)
						}
					})
				}
				waitFor(t, func() bool { return e.Stats().Queued == 2 })
				cancel()
				release()
				wg.Wait()
				shutdown(t, e)
				d.check(t, "cancelled", context.Canceled)
				d.check(t, "late", context.DeadlineExceeded)
				if s := e.Stats(); s.Expired != 2 || s.Abandoned != 0 {
					t.Errorf("Stats expired %d, abandoned %d; want 2, 0", s.Expired, s.Abandoned)
				}
			})
		}
	}
}

// coreOf returns the core of an executor built by queueingExecutors.
func coreOf(e Executor) *core {
	switch e := e.(type) {
	case *pool:
		return &e.core
	case *limit:
		return &e.core
	case *adaptive:
		return &e.core
	}
	panic("coreOf: not a queueing executor")
}

// A task that reaches its turn after Shutdown has given up, but before
// Shutdown has drained the queue, is dropped by the path that gives it its
// turn (a worker, the slot's hand-off, the dispatch), not by the drain: its
// OnDrop function is called there. The give-up is simulated by setting the
// flag Shutdown sets first.
func TestOnDropAbandonedAtItsTurn(t *testing.T) {
	for _, tc := range queueingExecutors {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.make()
			d := &dropLog{e: e, errs: map[string][]error{}}
			release := occupy(t, e, 1)
			if err := e.Go(d.ctx(context.Background(), "queued"), neverRan(t, "queued")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return e.Stats().Queued == 1 })
			coreOf(e).abandoning.Store(true)
			release()
			waitFor(t, func() bool { return e.Stats().Abandoned == 1 })
			shutdown(t, e)
			d.check(t, "queued", ErrAbandoned)
		})
	}
}

// OnDrop functions are never called for tasks that run, nor for tasks an
// executor refuses, and on the executors that never queue, not even for the
// tasks Shutdown cancels.
func TestOnDropNotCalled(t *testing.T) {
	for _, tc := range everyExecutor {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.make()
			d := &dropLog{e: e, errs: map[string][]error{}}
			if err := e.Run(d.ctx(context.Background(), "ran"), func(context.Context) {}); err != nil {
				t.Fatalf("Run: %v", err)
			}
			// A cancellable context that ends while its task runs.
			ctx, cancel := context.WithCancel(context.Background())
			started := make(chan struct{})
			if err := e.Go(d.ctx(ctx, "cancelled"), func(ctx context.Context) {
				close(started)
				<-ctx.Done()
			}); err != nil {
				t.Fatalf("Go: %v", err)
			}
			<-started
			cancel()
			given, stop := context.WithCancel(context.Background())
			stop()
			_ = e.Shutdown(given) // nothing queued: no drop, whatever it returns
			shutdown(t, e)
			if err := e.Go(d.ctx(context.Background(), "refused"), func(context.Context) {}); !errors.Is(err, ErrClosed) {
				t.Errorf("Go after Shutdown = %v; want ErrClosed", err)
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			if len(d.errs) != 0 {
				t.Errorf("OnDrop calls = %v; want none", d.errs)
			}
		})
	}
}

// A panic in an OnDrop function is reported to the executor's panic handler (WithPanicHandler), and the
// executor goes on: the worker that dropped the task runs the next one.
func TestOnDropPanicIsReported(t *testing.T) {
	for _, tc := range queueingExecutors {
		t.Run(tc.kind, func(t *testing.T) {
			reported := make(chan any, 1)
			e := tc.make(WithPanicHandler(func(_ string, v any, _ []byte) { reported <- v }))
			release := occupy(t, e, 1)
			ctx, cancel := context.WithCancel(OnDrop(context.Background(), func(error) { panic("hook") }))
			if err := e.Go(ctx, neverRan(t, "panicking")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return e.Stats().Queued == 1 })
			cancel()
			release()
			if err := e.Run(context.Background(), func(context.Context) {}); err != nil {
				t.Errorf("Run after the panic = %v; want nil", err)
			}
			shutdown(t, e) // the dropped task's OnDrop has returned
			select {
			case v := <-reported:
				if v != "hook" {
					t.Errorf("reported %v; want hook", v)
				}
			default:
				t.Errorf("no panic reported; want hook")
			}
			if s := e.Stats(); s.Panicked != 0 || s.Expired != 1 {
				t.Errorf("Stats panicked %d, expired %d; want 0 (no task panicked), 1", s.Panicked, s.Expired)
			}
		})
	}
}

// OnDrop(ctx, nil) stops a task's context passing its submitter's function
// on to the tasks it submits.
func TestOnDropNilStopsInheritance(t *testing.T) {
	e := Pool(1, WithQueue(1))
	d := &dropLog{e: e, errs: map[string][]error{}}
	release := occupy(t, e, 1)
	outer := d.ctx(context.Background(), "outer")
	inner, cancel := context.WithCancel(OnDrop(outer, nil))
	if err := e.Go(inner, neverRan(t, "inner")); err != nil {
		t.Fatal(err)
	}
	cancel()
	release()
	shutdown(t, e)
	if s := e.Stats(); s.Expired != 1 {
		t.Fatalf("Stats expired %d; want 1", s.Expired)
	}
	if len(d.errs) != 0 {
		t.Errorf("OnDrop calls = %v; want none", d.errs)
	}
}
