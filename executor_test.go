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
