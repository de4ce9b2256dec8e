package loom

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// shutdownWithin shuts e down, failing the test if that takes longer than a
// generous limit (a hang, not slowness) or fails.
func shutdownWithin(t *testing.T, e Executor) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestNilTaskIsReportedAsAPanic checks that a nil Task is a panicking task on
// every executor: reported, counted, and nothing else disturbed. (A pool's
// worker once took a nil task for a wake-up: the task was never counted as
// done, and a Run of nil read the answer meant for the next Run.)
func TestNilTaskIsReportedAsAPanic(t *testing.T) {
	for _, tc := range everyExecutor {
		t.Run(tc.kind, func(t *testing.T) {
			var reports atomic.Int64
			e := tc.make(WithPanicHandler(func(string, any, []byte) { reports.Add(1) }))
			ctx := context.Background()
			if err := e.Go(ctx, nil); err != nil {
				t.Fatalf("Go(nil) = %v; want nil", err)
			}
			if err := runOrGoexit(t, e, ctx, nil); err != nil {
				t.Fatalf("Run(nil) = %v; want nil", err)
			}
			ran := false
			if err := runOrGoexit(t, e, ctx, func(context.Context) { ran = true }); err != nil || !ran {
				t.Fatalf("Run after nil tasks = %v, ran %v; want nil, true", err, ran)
			}
			shutdownWithin(t, e)
			s := e.Stats()
			if s.Submitted != 3 || s.Completed != 3 || s.Panicked != 2 || s.Running != 0 || s.Queued != 0 {
				t.Errorf("Stats submitted, completed, panicked, running, queued = %d, %d, %d, %d, %d; want 3, 3, 2, 0, 0",
					s.Submitted, s.Completed, s.Panicked, s.Running, s.Queued)
			}
			if got := reports.Load(); got != 2 {
				t.Errorf("panic handler called %d times; want 2", got)
			}
		})
	}
}

// errGoexit marks a call that did not return because its goroutine ended.
var errGoexit = errors.New("goroutine ended by runtime.Goexit")

// runOrGoexit calls Run on its own goroutine and reports what became of it:
// its error, or errGoexit if the goroutine ended inside it (an executor that
// runs the task inline runs the panic handler on the caller).
func runOrGoexit(t *testing.T, e Executor, ctx context.Context, task Task) error {
	t.Helper()
	result := make(chan error, 1)
	go func() {
		returned := false
		defer func() {
			if !returned {
				result <- errGoexit
			}
		}()
		err := e.Run(ctx, task)
		returned = true
		result <- err
	}()
	select {
	case err := <-result:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Run neither returned nor ended its goroutine")
		return nil
	}
}

// TestPanicHandlerMayGoexit gives every executor a panic handler that calls
// runtime.Goexit, as t.Fatal in a test's handler does: the panicking task
// must still be counted, its worker or slot released, and the executor must
// go on and shut down.
func TestPanicHandlerMayGoexit(t *testing.T) {
	for _, tc := range everyExecutor {
		for name, ctx := range submitContexts(t) {
			t.Run(tc.kind+"/"+name, func(t *testing.T) {
				e := tc.make(WithPanicHandler(func(string, any, []byte) { runtime.Goexit() }))
				if err := runOrGoexit(t, e, ctx, func(context.Context) { panic("boom") }); err != nil && err != errGoexit {
					t.Fatalf("Run of a panicking task = %v; want nil (or the caller's goroutine ended)", err)
				}
				ran := false
				if err := e.Run(ctx, func(context.Context) { ran = true }); err != nil || !ran {
					t.Fatalf("Run after the handler's Goexit = %v, ran %v; want nil, true", err, ran)
				}
				shutdownWithin(t, e)
				if s := e.Stats(); s.Completed != 2 || s.Panicked != 1 || s.Running != 0 {
					t.Errorf("Stats completed, panicked, running = %d, %d, %d; want 2, 1, 0", s.Completed, s.Panicked, s.Running)
				}
			})
		}
	}
}

// TestPoolSurvivesPanicNilUnderLegacyGODEBUG: with GODEBUG=panicnil=1,
// recover returns nil for panic(nil), which a pool worker could take for
// runtime.Goexit: it started a replacement and also went on itself, and the
// pool counted one worker fewer, so Shutdown returned while a task still ran.
func TestPoolSurvivesPanicNilUnderLegacyGODEBUG(t *testing.T) {
	t.Setenv("GODEBUG", "panicnil=1")
	if v := func() (v any) {
		defer func() { v = recover() }()
		panic(nil)
	}(); v != nil {
		t.Skipf("GODEBUG=panicnil=1 did not take effect (recover returned %T)", v)
	}
	e := Pool(1)
	if err := e.Run(context.Background(), func(context.Context) { panic(nil) }); err != nil {
		t.Fatalf("Run of panic(nil) = %v; want nil", err)
	}
	release := make(chan struct{})
	var finished atomic.Bool
	started := make(chan struct{})
	if err := e.Go(context.Background(), func(context.Context) {
		close(started)
		<-release
		finished.Store(true)
	}); err != nil {
		t.Fatal(err)
	}
	<-started
	result := make(chan error, 1)
	go func() { result <- e.Shutdown(context.Background()) }()
	select {
	case err := <-result:
		// Shutdown must wait for the running task; returning now is the bug.
		t.Fatalf("Shutdown returned %v while a task was still running", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-result; err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if !finished.Load() {
		t.Error("Shutdown returned before the running task finished")
	}
}

// TestStatsSnapshotsAddUp samples Stats while tasks flow through a small
// pool: a snapshot must never show more tasks done or running than
// submitted, though the counters are read one after another.
func TestStatsSnapshotsAddUp(t *testing.T) {
	e := Pool(2, WithQueue(4))
	const submitters, each = 4, 3000
	var wg sync.WaitGroup
	for range submitters {
		wg.Go(func() {
			for range each {
				if err := e.Go(context.Background(), func(context.Context) {}); err != nil {
					t.Errorf("Go: %v", err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	sampled := make(chan int)
	go func() {
		n := 0
		defer func() { sampled <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := e.Stats()
			n++
			if s.Completed+s.Abandoned+uint64(s.Running) > s.Submitted {
				t.Errorf("snapshot: completed %d + abandoned %d + running %d > submitted %d",
					s.Completed, s.Abandoned, s.Running, s.Submitted)
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	if n := <-sampled; n == 0 {
		t.Error("took no snapshot")
	}
	shutdownWithin(t, e)
	if s := e.Stats(); s.Submitted != submitters*each || s.Completed != s.Submitted {
		t.Errorf("Stats submitted, completed = %d, %d; want %d, %d", s.Submitted, s.Completed, submitters*each, submitters*each)
	}
}
