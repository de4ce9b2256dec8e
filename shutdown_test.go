package loom

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestShutdownDrains checks that Shutdown without a deadline runs every
// admitted task, queued ones included, and refuses new ones meanwhile.
func TestShutdownDrains(t *testing.T) {
	for _, tc := range []struct {
		kind string
		make func() Executor
	}{
		{"virtual", func() Executor { return Virtual() }},
		{"pool", func() Executor { return Pool(2, WithQueue(20)) }},
		{"threads", func() Executor { return Threads(2, WithQueue(20)) }},
		{"thread-per-task", func() Executor { return ThreadPerTask() }},
		{"limit", func() Executor { return Limit(2, WithQueue(20)) }},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.make()
			release := make(chan struct{})
			var ran atomic.Int64
			const tasks = 20
			for i := range tasks {
				if err := e.Go(context.Background(), func(context.Context) {
					<-release
					ran.Add(1)
				}); err != nil {
					t.Fatalf("Go %d: %v", i, err)
				}
			}
			done := make(chan error, 1)
			go func() { done <- e.Shutdown(context.Background()) }()
			// Shutdown has begun once Go is refused; the probes that get in
			// before that run too.
			probes := 0
			for !errors.Is(e.Go(context.Background(), func(context.Context) {}), ErrClosed) {
				probes++
				time.Sleep(time.Millisecond)
			}
			select {
			case err := <-done:
				t.Fatalf("Shutdown returned %v before its tasks ended", err)
			default:
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("Shutdown = %v; want nil", err)
			}
			if got := ran.Load(); got != tasks {
				t.Errorf("ran %d tasks; want %d", got, tasks)
			}
			if s := e.Stats(); s.Abandoned != 0 || s.Completed != uint64(tasks+probes) {
				t.Errorf("Stats abandoned, completed = %d, %d; want 0, %d", s.Abandoned, s.Completed, tasks+probes)
			}
		})
	}
}

// TestShutdownDeadline checks that when Shutdown's context ends first, the
// running tasks' contexts are cancelled, the queued tasks are counted as
// abandoned, a queued Run returns ErrAbandoned, and nothing is lost: every
// admitted task either ran or was counted. The submit context takes each of
// the three forms the executors treat differently.
func TestShutdownDeadline(t *testing.T) {
	type submitKey struct{}
	for _, tc := range []struct {
		kind    string
		make    func() Executor
		running int // tasks that start at once
	}{
		{"virtual", func() Executor { return Virtual() }, 6},
		{"pool", func() Executor { return Pool(2, WithQueue(6)) }, 2},
		{"threads", func() Executor { return Threads(2, WithQueue(6)) }, 2},
		{"thread-per-task", func() Executor { return ThreadPerTask() }, 6},
		{"limit", func() Executor { return Limit(2, WithQueue(6)) }, 2},
	} {
		for _, submit := range []struct {
			name string
			ctx  func(t *testing.T) context.Context
		}{
			{"background", func(*testing.T) context.Context { return context.Background() }},
			{"cancellable", func(t *testing.T) context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel)
				return ctx
			}},
			{"values-only", func(*testing.T) context.Context {
				return context.WithValue(context.Background(), submitKey{}, "v")
			}},
		} {
			t.Run(tc.kind+"/"+submit.name, func(t *testing.T) {
				testShutdownDeadline(t, tc.make(), tc.running, tc.kind != "limit", submit.ctx(t))
			})
		}
	}
}

// testShutdownDeadline runs the test on e, where running tasks start at once;
// fifo says whether the tasks start in the order they were submitted.
func testShutdownDeadline(t *testing.T, e Executor, running int, fifo bool, submitCtx context.Context) {
	var ran, cancelled atomic.Int64
	started := make(chan struct{}, 6)
	// Each task waits for its context to end, as a well-behaved task does.
	task := func(ctx context.Context) {
		ran.Add(1)
		started <- struct{}{}
		<-ctx.Done()
		if errors.Is(context.Cause(ctx), ErrAbandoned) || ctx.Err() != nil {
			cancelled.Add(1)
		}
	}
	for i := range 5 {
		if err := e.Go(submitCtx, task); err != nil {
			t.Fatalf("Go %d: %v", i, err)
		}
	}
	// One more, submitted with Run from another goroutine.
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = e.Run(submitCtx, task) })
	for range running {
		<-started
	}
	for e.Stats().Submitted != 6 {
		time.Sleep(time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := e.Shutdown(ctx)
	if !errors.Is(err, ErrAbandoned) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v; want ErrAbandoned and context.DeadlineExceeded", err)
	}
	queued := 6 - running
	if want := fmt.Sprintf("%d queued tasks abandoned, %d running tasks cancelled", queued, running); !strings.Contains(err.Error(), want) {
		t.Errorf("Shutdown error %q does not say %q", err, want)
	}
	// A second call with room to wait sees every goroutine gone.
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown = %v; want nil", err)
	}
	wg.Wait()

	s := e.Stats()
	if s.Abandoned != uint64(queued) || ran.Load() != int64(running) {
		t.Errorf("abandoned %d, ran %d; want %d, %d", s.Abandoned, ran.Load(), queued, running)
	}
	if got := cancelled.Load(); got != int64(running) {
		t.Errorf("%d running tasks saw their context cancelled; want %d", got, running)
	}
	if s.Submitted != s.Completed+s.Abandoned {
		t.Errorf("Stats submitted %d != completed %d + abandoned %d: a task was lost", s.Submitted, s.Completed, s.Abandoned)
	}
	// The Run either ran (and returned nil) or was abandoned.
	if runErr != nil && !errors.Is(runErr, ErrAbandoned) {
		t.Errorf("Run = %v; want nil or ErrAbandoned", runErr)
	}
	if fifo && queued > 0 && runErr == nil {
		// The Run was submitted last, so it was queued.
		t.Errorf("queued Run = nil; want ErrAbandoned")
	}
}

func TestShutdownIsIdempotentAndConcurrent(t *testing.T) {
	for _, tc := range everyExecutor {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.make()
			for range 10 {
				if err := e.Go(context.Background(), func(context.Context) { time.Sleep(time.Millisecond) }); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Go(func() { errs[i] = e.Shutdown(context.Background()) })
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("Shutdown %d = %v; want nil", i, err)
				}
			}
			if err := e.Shutdown(context.Background()); err != nil {
				t.Errorf("Shutdown after Shutdown = %v; want nil", err)
			}
			if got := e.Stats().Completed; got != 10 {
				t.Errorf("completed %d; want 10", got)
			}
		})
	}
}

// TestShutdownUnderLoad races Shutdown against many submitters: every
// submission either fails with ErrClosed (or ErrRejected) or runs.
func TestShutdownUnderLoad(t *testing.T) {
	for _, tc := range everyExecutor {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.make()
			var accepted, ran atomic.Int64
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					for j := 0; ; j++ {
						submit := e.Go
						if (i+j)%4 == 0 {
							submit = e.Run
						}
						err := submit(context.Background(), func(context.Context) { ran.Add(1) })
						switch {
						case err == nil:
							accepted.Add(1)
						case errors.Is(err, ErrClosed):
							return
						default:
							t.Errorf("submit = %v; want nil or ErrClosed", err)
							return
						}
					}
				})
			}
			time.Sleep(20 * time.Millisecond)
			if err := e.Shutdown(context.Background()); err != nil {
				t.Errorf("Shutdown = %v", err)
			}
			wg.Wait()
			if accepted.Load() != ran.Load() {
				t.Errorf("accepted %d tasks, ran %d; want equal", accepted.Load(), ran.Load())
			}
			if s := e.Stats(); s.Submitted != uint64(accepted.Load()) || s.Completed != s.Submitted {
				t.Errorf("Stats submitted, completed = %d, %d; want %d, %d", s.Submitted, s.Completed, accepted.Load(), accepted.Load())
			}
		})
	}
}

// TestShutdownExpiredContextOnIdleExecutor checks that an executor with
// nothing to do shuts down cleanly even when Shutdown's context has already
// ended: there is nothing to abandon.
func TestShutdownExpiredContextOnIdleExecutor(t *testing.T) {
	for _, tc := range everyExecutor {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.make()
			if err := e.Run(context.Background(), func(context.Context) {}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := e.Shutdown(ctx); err != nil {
				t.Errorf("Shutdown(ended context) of an idle executor = %v; want nil", err)
			}
		})
	}
}

// TestCancelListAfterAbandon checks the race cancelList closes: a task listed
// after Shutdown has cancelled the list is cancelled at once, and one listed
// before is cancelled by cancelAll.
func TestCancelListAfterAbandon(t *testing.T) {
	var l cancelList
	l.init()
	var abandoning atomic.Bool
	before, cancelBefore := context.WithCancelCause(context.Background())
	early := &cancelEntry{cancel: cancelBefore}
	l.add(early, &abandoning)

	abandoning.Store(true)
	l.cancelAll()
	if got := context.Cause(before); !errors.Is(got, ErrAbandoned) {
		t.Errorf("cause of a listed task = %v; want ErrAbandoned", got)
	}
	l.remove(early)

	after, cancelAfter := context.WithCancelCause(context.Background())
	l.add(&cancelEntry{cancel: cancelAfter}, &abandoning)
	if got := context.Cause(after); !errors.Is(got, ErrAbandoned) {
		t.Errorf("cause of a task listed after abandonment = %v; want ErrAbandoned", got)
	}
	if l.root.next != &l.root {
		t.Errorf("list not empty after removing its only entry")
	}
}

func TestShutdownWakesWaitingCallers(t *testing.T) {
	for _, tc := range []struct {
		kind string
		e    Executor
	}{
		{"pool", Pool(1, WithQueue(0))},
		{"threads", Threads(1, WithQueue(0))},
		{"limit", Limit(1, WithFull(FullWait))},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.e
			b := newBlocker(1)
			err := e.Go(context.Background(), b.task)
			for errors.Is(err, ErrRejected) { // a new pool worker may not be waiting yet
				time.Sleep(time.Millisecond)
				err = e.Go(context.Background(), b.task)
			}
			if err != nil {
				t.Fatal(err)
			}
			b.waitStarted(t, 1)
			result := make(chan error, 1)
			go func() { result <- e.Go(context.Background(), func(context.Context) {}) }()
			// Let the caller start waiting for room, then shut down.
			done := make(chan error, 1)
			go func() {
				time.Sleep(10 * time.Millisecond)
				done <- e.Shutdown(context.Background())
			}()
			if err := <-result; !errors.Is(err, ErrClosed) {
				t.Errorf("Go waiting during Shutdown = %v; want ErrClosed", err)
			}
			close(b.release)
			if err := <-done; err != nil {
				t.Errorf("Shutdown = %v; want nil", err)
			}
		})
	}
}
