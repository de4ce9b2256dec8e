package loom

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// executorCase builds one executor for the tests that every kind must pass.
type executorCase struct {
	kind string
	make func(opts ...Option) Executor
}

var everyExecutor = []executorCase{
	{"virtual", func(opts ...Option) Executor { return Virtual(opts...) }},
	{"pool", func(opts ...Option) Executor { return Pool(4, opts...) }},
	{"threads", func(opts ...Option) Executor { return Threads(4, opts...) }},
	{"thread-per-task", func(opts ...Option) Executor { return ThreadPerTask(opts...) }},
	{"limit", func(opts ...Option) Executor { return Limit(4, append([]Option{WithFull(FullWait)}, opts...)...) }},
	{"adaptive", func(opts ...Option) Executor {
		return Adaptive(append([]Option{WithFull(FullWait), WithInitialLimit(4)}, opts...)...)
	}},
}

// submitContexts returns, by name, a context.Background and a context that
// can be cancelled: the executors take different paths for the two.
func submitContexts(t *testing.T) map[string]context.Context {
	cancellable, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return map[string]context.Context{"background": context.Background(), "cancellable": cancellable}
}

// shutdown shuts e down and fails the test if that fails.
func shutdown(t *testing.T, e Executor) {
	t.Helper()
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestEveryTaskRuns(t *testing.T) {
	for _, tc := range everyExecutor {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.make(WithName("all"))
			const tasks = 200
			var ran atomic.Int64
			var wg sync.WaitGroup
			for i := range tasks {
				wg.Add(1)
				submit := e.Go
				if i%2 == 1 {
					submit = e.Run
				}
				if err := submit(context.Background(), func(context.Context) {
					ran.Add(1)
					wg.Done()
				}); err != nil {
					t.Fatalf("task %d: %v", i, err)
				}
			}
			wg.Wait()
			shutdown(t, e)
			if got := ran.Load(); got != tasks {
				t.Errorf("ran %d tasks; want %d", got, tasks)
			}
			s := e.Stats()
			if string(s.Kind) != tc.kind || s.Name != "all" {
				t.Errorf("Stats kind, name = %q, %q; want %q, %q", s.Kind, s.Name, tc.kind, "all")
			}
			if s.Submitted != tasks || s.Completed != tasks {
				t.Errorf("Stats submitted, completed = %d, %d; want %d, %d", s.Submitted, s.Completed, tasks, tasks)
			}
			if s.Running != 0 || s.Queued != 0 {
				t.Errorf("Stats running, queued = %d, %d after Shutdown; want 0, 0", s.Running, s.Queued)
			}
			if err := e.Go(context.Background(), func(context.Context) {}); !errors.Is(err, ErrClosed) {
				t.Errorf("Go after Shutdown = %v; want ErrClosed", err)
			}
			if err := e.Run(context.Background(), func(context.Context) {}); !errors.Is(err, ErrClosed) {
				t.Errorf("Run after Shutdown = %v; want ErrClosed", err)
			}
		})
	}
}

func TestPanicIsRecovered(t *testing.T) {
	for _, tc := range everyExecutor {
		t.Run(tc.kind, func(t *testing.T) {
			var mu sync.Mutex
			var reports []string
			e := tc.make(WithName("panicky"), WithPanicHandler(func(name string, v any, stack []byte) {
				mu.Lock()
				defer mu.Unlock()
				if len(stack) == 0 {
					t.Errorf("panic handler got an empty stack")
				}
				reports = append(reports, name+": "+v.(string))
			}))
			defer shutdown(t, e)
			if err := e.Run(context.Background(), func(context.Context) { panic("boom") }); err != nil {
				t.Fatalf("Run of a panicking task = %v; want nil", err)
			}
			ran := false
			if err := e.Run(context.Background(), func(context.Context) { ran = true }); err != nil || !ran {
				t.Fatalf("Run after a panic = %v, ran %v; want nil, true", err, ran)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reports) != 1 || reports[0] != "panicky: boom" {
				t.Errorf("panic reports = %q; want [\"panicky: boom\"]", reports)
			}
			if got := e.Stats().Panicked; got != 1 {
				t.Errorf("Stats.Panicked = %d; want 1", got)
			}
		})
	}
}

// TestGoexitKeepsExecutorWhole checks that a task calling runtime.Goexit, as
// t.FailNow does, is counted as completed once, releases its worker or slot,
// and lets Shutdown finish, whether or not its submit context can be
// cancelled (the executors take different paths for the two).
func TestGoexitKeepsExecutorWhole(t *testing.T) {
	for _, tc := range everyExecutor {
		for name, ctx := range submitContexts(t) {
			t.Run(tc.kind+"/"+name, func(t *testing.T) {
				e := tc.make()
				for range 3 {
					done := make(chan struct{})
					if err := e.Go(ctx, func(context.Context) {
						defer close(done)
						runtime.Goexit()
					}); err != nil {
						t.Fatal(err)
					}
					<-done
				}
				ran := false
				if err := e.Run(ctx, func(context.Context) { ran = true }); err != nil || !ran {
					t.Fatalf("Run after Goexit = %v, ran %v; want nil, true", err, ran)
				}
				shutdown(t, e)
				if s := e.Stats(); s.Completed != 4 || s.Running != 0 {
					t.Errorf("Stats completed, running = %d, %d; want 4, 0", s.Completed, s.Running)
				}
			})
		}
	}
}

func TestDefaultPanicReportLogsStack(t *testing.T) {
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	e := Pool(1, WithName("logged"), WithPanicLogger(logger))
	if err := e.Run(context.Background(), func(context.Context) { panic("kaput") }); err != nil {
		t.Fatal(err)
	}
	shutdown(t, e)
	for _, want := range []string{"level=ERROR", "executor=logged", "kind=pool", "panic=kaput", "stack=", "TestDefaultPanicReportLogsStack"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("log %q lacks %q", logged.String(), want)
		}
	}
}

func TestConstructorsPanicOnMisuse(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"Pool(0)", func() { Pool(0) }},
		{"Threads(-1)", func() { Threads(-1) }},
		{"Limit(0)", func() { Limit(0) }},
		{"WithQueue(-1)", func() { WithQueue(-1) }},
		{"WithFull(0)", func() { WithFull(0) }},
		{"Virtual(WithQueue(1))", func() { Virtual(WithQueue(1)) }},
		{"ThreadPerTask(WithFull(FullWait))", func() { ThreadPerTask(WithFull(FullWait)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				v := recover()
				if s, ok := v.(string); !ok || !strings.HasPrefix(s, "loom: ") {
					t.Errorf("%s panicked with %v; want a message starting %q", tt.name, v, "loom: ")
				}
			}()
			tt.f()
		})
	}
}

func TestStatsPercentiles(t *testing.T) {
	e := Limit(1, WithQueue(1000), WithFull(FullWait))
	for range 1000 {
		if err := e.Go(context.Background(), func(context.Context) { time.Sleep(20 * time.Microsecond) }); err != nil {
			t.Fatal(err)
		}
	}
	shutdown(t, e)
	s := e.Stats()
	// 1000 tasks give about 31 timed ones; each slept at least 20µs, and
	// with one slot the later ones waited behind the others.
	if s.RunTime.P50 < 17*time.Microsecond || s.RunTime.P99 < s.RunTime.P50 {
		t.Errorf("RunTime = %+v; want p50 ≥ 17µs (20µs less the bucket error) and p99 ≥ p50", s.RunTime)
	}
	if s.QueueWait.P99 < 17*time.Microsecond {
		t.Errorf("QueueWait = %+v; want p99 ≥ 17µs", s.QueueWait)
	}
}

// TestSampleIsSpread checks that the timed tasks are one in 32 and do not line
// up with a periodic workload: with tasks alternating between two kinds, or
// cycling through three or eight, every kind gets its share of the sample.
func TestSampleIsSpread(t *testing.T) {
	var c core
	c.sampleShift = sampleShift
	const tasks = 64000
	for _, period := range []uint64{2, 3, 8, 32} {
		perKind := make([]int, period)
		total := 0
		for n := uint64(1); n <= tasks; n++ {
			if c.stamp(n) != 0 {
				perKind[n%period]++
				total++
			}
		}
		if total < tasks/32*9/10 || total > tasks/32*11/10 {
			t.Errorf("timed %d of %d tasks; want about %d", total, tasks, tasks/32)
		}
		for kind, got := range perKind {
			if want := total / int(period); got < want*8/10 || got > want*12/10 {
				t.Errorf("period %d: kind %d got %d of the %d timed tasks; want about %d", period, kind, got, total, want)
			}
		}
	}
}

// TestOnlySampledTasksAreTimed runs a thousand quick tasks on pools made a
// second earlier, on the workers' inline path (a Background context): only
// the sampled ones are timed, so no queue wait or run time reaches back to
// the pool's creation. Timing an unsampled task (admitted 0) records the
// pool's age, a second, as its wait or run time. (core.go and core_run.go,
// the `admitted != 0` checks.)
func TestOnlySampledTasksAreTimed(t *testing.T) {
	const age = time.Second
	pools := map[string]Executor{"pool": Pool(2, WithQueue(1000)), "threads": Threads(2, WithQueue(1000))}
	time.Sleep(age)
	for name, e := range pools {
		for range 1000 {
			if err := e.Go(context.Background(), func(context.Context) {}); err != nil {
				t.Fatal(err)
			}
		}
		shutdown(t, e)
		s := e.Stats()
		if s.QueueWait.P50 >= age/2 || s.RunTime.P99 >= age/2 {
			t.Errorf("%s: QueueWait %+v, RunTime %+v; want both under %v (the pool's age is %v)", name, s.QueueWait, s.RunTime, age/2, age)
		}
	}
}

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

// blocker is a task that holds its worker or slot until released.
type blocker struct {
	started chan struct{}
	release chan struct{}
}

func newBlocker(capacity int) *blocker {
	return &blocker{started: make(chan struct{}, capacity), release: make(chan struct{})}
}

func (b *blocker) task(context.Context) {
	b.started <- struct{}{}
	<-b.release
}

// waitStarted waits until n blocker tasks have started.
func (b *blocker) waitStarted(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-b.started:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d blocking tasks started", i, n)
		}
	}
}

// TestBoundsUnderConcurrentSubmission fills every worker or slot with a
// blocked task, then lets many goroutines race to submit more: exactly the
// queue's capacity must be admitted, the rest rejected, and no more than the
// bound may ever run at once.
func TestBoundsUnderConcurrentSubmission(t *testing.T) {
	const submitters, each = 32, 20
	for _, tc := range []struct {
		kind         string
		make         func() Executor
		bound, queue int
	}{
		{"pool", func() Executor { return Pool(3, WithQueue(7), WithFull(FullReject)) }, 3, 7},
		{"pool/no-queue", func() Executor { return Pool(3, WithQueue(0), WithFull(FullReject)) }, 3, 0},
		{"threads", func() Executor { return Threads(2, WithQueue(5), WithFull(FullReject)) }, 2, 5},
		{"limit", func() Executor { return Limit(4, WithQueue(9)) }, 4, 9},
		{"limit/no-queue", func() Executor { return Limit(4) }, 4, 0},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.make()
			var running, peak atomic.Int64
			b := newBlocker(tc.bound + tc.queue)
			task := func(ctx context.Context) {
				r := running.Add(1)
				for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
				}
				b.task(ctx)
				running.Add(-1)
			}
			var fillRejected int
			for i := range tc.bound {
				// Under WithQueue(0), a pool admits a task only when a worker is
				// waiting for one, and a new worker may not be waiting yet.
				err := e.Go(context.Background(), task)
				for deadline := time.Now().Add(10 * time.Second); errors.Is(err, ErrRejected) && time.Now().Before(deadline); {
					fillRejected++
					time.Sleep(time.Millisecond)
					err = e.Go(context.Background(), task)
				}
				if err != nil {
					t.Fatalf("Go %d of the first %d: %v", i, tc.bound, err)
				}
			}
			b.waitStarted(t, tc.bound)

			var admitted, rejected atomic.Int64
			var wg sync.WaitGroup
			for range submitters {
				wg.Go(func() {
					for range each {
						switch err := e.Go(context.Background(), task); {
						case err == nil:
							admitted.Add(1)
						case errors.Is(err, ErrRejected):
							rejected.Add(1)
						default:
							t.Errorf("Go = %v; want nil or ErrRejected", err)
						}
					}
				})
			}
			wg.Wait()
			if got := admitted.Load(); got != int64(tc.queue) {
				t.Errorf("admitted %d tasks while full; want exactly the queue, %d", got, tc.queue)
			}
			if got, want := rejected.Load(), int64(submitters*each-tc.queue); got != want {
				t.Errorf("rejected %d tasks; want %d", got, want)
			}
			s := e.Stats()
			wantRejected := uint64(submitters*each - tc.queue + fillRejected)
			if s.Queued != tc.queue || s.Running != tc.bound || s.Rejected != wantRejected {
				t.Errorf("Stats queued, running, rejected = %d, %d, %d; want %d, %d, %d",
					s.Queued, s.Running, s.Rejected, tc.queue, tc.bound, wantRejected)
			}
			close(b.release)
			b.waitStarted(t, tc.queue)
			shutdown(t, e)
			if got := peak.Load(); got > int64(tc.bound) {
				t.Errorf("%d tasks ran at once; want at most %d", got, tc.bound)
			}
			if s := e.Stats(); s.PeakRunning > tc.bound || s.Completed != uint64(tc.bound+tc.queue) {
				t.Errorf("Stats peak, completed = %d, %d; want at most %d, %d", s.PeakRunning, s.Completed, tc.bound, tc.bound+tc.queue)
			}
		})
	}
}

// TestRunningNeverExceedsBound floods bounded executors that wait when full
// and checks, inside the tasks, that the bound holds.
func TestRunningNeverExceedsBound(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		e     Executor
		bound int
	}{
		{"pool", Pool(3), 3},
		{"threads", Threads(2), 2},
		{"limit/wait", Limit(3, WithQueue(2), WithFull(FullWait)), 3},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var running, peak, ran atomic.Int64
			task := func(context.Context) {
				r := running.Add(1)
				for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
				}
				time.Sleep(10 * time.Microsecond)
				running.Add(-1)
				ran.Add(1)
			}
			var wg sync.WaitGroup
			for i := range 16 {
				wg.Go(func() {
					for j := range 50 {
						submit := tc.e.Go
						if (i+j)%3 == 0 {
							submit = tc.e.Run
						}
						if err := submit(context.Background(), task); err != nil {
							t.Errorf("submit: %v", err)
						}
					}
				})
			}
			wg.Wait()
			shutdown(t, tc.e)
			if got := ran.Load(); got != 16*50 {
				t.Errorf("ran %d tasks; want %d", got, 16*50)
			}
			if got := peak.Load(); got > int64(tc.bound) {
				t.Errorf("%d tasks ran at once; want at most %d", got, tc.bound)
			}
		})
	}
}

func TestFullWaitHonoursContext(t *testing.T) {
	for _, tc := range []struct {
		kind string
		make func() Executor
	}{
		{"pool", func() Executor { return Pool(1, WithQueue(0)) }},
		{"threads", func() Executor { return Threads(1, WithQueue(0)) }},
		{"limit", func() Executor { return Limit(1, WithFull(FullWait)) }},
	} {
		for _, method := range []string{"Go", "Run"} {
			t.Run(tc.kind+"/"+method, func(t *testing.T) {
				e := tc.make()
				b := newBlocker(1)
				if err := e.Go(context.Background(), b.task); err != nil {
					t.Fatal(err)
				}
				b.waitStarted(t, 1)
				submit := e.Go
				if method == "Run" {
					submit = e.Run
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				defer cancel()
				ran := false
				err := submit(ctx, func(context.Context) { ran = true })
				if !errors.Is(err, context.DeadlineExceeded) || ran {
					t.Errorf("%s while full = %v, ran %v; want context.DeadlineExceeded, false", method, err, ran)
				}

				// A waiting caller gets in once there is room.
				result := make(chan error, 1)
				go func() { result <- submit(context.Background(), func(context.Context) {}) }()
				close(b.release)
				if err := <-result; err != nil {
					t.Errorf("%s waiting for room = %v; want nil", method, err)
				}
				shutdown(t, e)
				if s := e.Stats(); s.Rejected != 0 || s.Completed != 2 {
					t.Errorf("Stats rejected, completed = %d, %d; want 0, 2", s.Rejected, s.Completed)
				}
			})
		}
	}
}

func TestContextReachesTask(t *testing.T) {
	type key struct{}
	for _, tc := range everyExecutor {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.make()
			defer shutdown(t, e)
			for _, ctx := range []context.Context{
				context.WithValue(context.Background(), key{}, "v"),
				context.WithoutCancel(context.WithValue(context.Background(), key{}, "v")),
			} {
				var got any
				if err := e.Run(ctx, func(ctx context.Context) { got = ctx.Value(key{}) }); err != nil {
					t.Fatal(err)
				}
				if got != "v" {
					t.Errorf("task saw value %v; want %q", got, "v")
				}
			}
			// Cancelling the submit context reaches the running task.
			ctx, cancel := context.WithCancel(context.Background())
			started := make(chan struct{})
			done := make(chan error, 1)
			if err := e.Go(ctx, func(ctx context.Context) {
				close(started)
				<-ctx.Done()
				done <- ctx.Err()
			}); err != nil {
				t.Fatal(err)
			}
			<-started
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("task's ctx.Err() = %v; want context.Canceled", err)
			}
		})
	}
}
