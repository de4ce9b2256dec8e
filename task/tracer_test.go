package task_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
)

type spanKey struct{}

// spanTracer marks the context it starts with a number and records each
// End with that number and the error.
type spanTracer struct {
	mu    sync.Mutex
	n     int
	execs []loom.Executor
	ends  map[int]error
}

func (s *spanTracer) Start(ctx context.Context, exec loom.Executor) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.execs = append(s.execs, exec)
	return context.WithValue(ctx, spanKey{}, s.n)
}

func (s *spanTracer) End(ctx context.Context, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ends == nil {
		s.ends = map[int]error{}
	}
	n, _ := ctx.Value(spanKey{}).(int)
	if _, twice := s.ends[n]; twice {
		s.ends[-n] = errors.New("ended twice")
	}
	s.ends[n] = err
}

// TestTracerAroundGo: each Go starts a span before submitting, fn gets its
// context, and the span ends once with the future's error, whether fn ran,
// failed or was refused.
func TestTracerAroundGo(t *testing.T) {
	tr := &spanTracer{}
	task.SetTracer(tr)
	defer task.SetTracer(nil)

	exec := loom.Virtual()
	closed := loom.Virtual()
	if err := closed.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer exec.Shutdown(context.Background())
	boom := errors.New("boom")
	ctx := context.Background()

	seen := func(ctx context.Context) (int, error) {
		n, _ := ctx.Value(spanKey{}).(int)
		return n, nil
	}
	if got, err := task.Go(ctx, exec, seen).Wait(ctx); err != nil || got != 1 {
		t.Errorf("ran: got span %d, %v; want 1, nil", got, err)
	}
	_, err := task.Go(ctx, exec, func(context.Context) (int, error) { return 0, boom }).Wait(ctx)
	if !errors.Is(err, boom) {
		t.Errorf("failed: got %v; want boom", err)
	}
	_, err = task.Go(ctx, closed, seen).Wait(ctx)
	if !errors.Is(err, loom.ErrClosed) {
		t.Errorf("refused: got %v; want ErrClosed", err)
	}

	tr.mu.Lock()
	defer tr.mu.Unlock()
	want := map[int]error{1: nil, 2: boom, 3: err}
	if len(tr.ends) != len(want) {
		t.Fatalf("got ends %v; want %v", tr.ends, want)
	}
	for n, e := range want {
		if got, ok := tr.ends[n]; !ok || got != e {
			t.Errorf("span %d: got end %v (%v); want %v", n, got, ok, e)
		}
	}
	if !slices.Equal(tr.execs, []loom.Executor{exec, exec, closed}) {
		t.Errorf("Start saw executors %v; want exec, exec, closed", tr.execs)
	}

	task.SetTracer(nil)
	if got, _ := task.Go(ctx, exec, seen).Wait(ctx); got != 0 || tr.n != 3 {
		t.Errorf("no tracer: got span %d, %d starts; want 0, 3", got, tr.n)
	}
}

// TestHooksTrace: a scheduled run's function gets the context Trace
// returned, and end gets the run's error, after AfterRun.
func TestHooksTrace(t *testing.T) {
	c := newFakeClock(epoch)
	var mu sync.Mutex
	var events []string
	var ended []error
	note := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	s := newScheduler(t, c, task.WithHooks(task.Hooks{
		Trace: func(ctx context.Context, job string, at time.Time) (context.Context, func(error)) {
			note("trace " + job + " " + at.Format(time.TimeOnly))
			return context.WithValue(ctx, spanKey{}, job), func(err error) {
				note("end")
				mu.Lock()
				ended = append(ended, err)
				mu.Unlock()
			}
		},
		BeforeRun: func(string, time.Time) { note("before") },
		AfterRun:  func(string, time.Time, time.Duration, error) { note("after") },
	}))
	boom := errors.New("boom")
	err := s.Add("nightly", task.Every(time.Second), func(ctx context.Context) error {
		note("run " + ctx.Value(spanKey{}).(string))
		return boom
	})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	step(t, c, s, 1, time.Second, 1)
	mu.Lock()
	defer mu.Unlock()
	want := []string{"trace nightly 00:00:01", "before", "run nightly", "after", "end"}
	if !slices.Equal(events, want) {
		t.Errorf("got events %q; want %q", events, want)
	}
	if len(ended) != 1 || ended[0] != boom {
		t.Errorf("end got %v; want [boom]", ended)
	}
}
