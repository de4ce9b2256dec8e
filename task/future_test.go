package task_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
)

func executors() map[string]func() loom.Executor {
	return map[string]func() loom.Executor{
		"virtual": func() loom.Executor { return loom.Virtual() },
		"pool":    func() loom.Executor { return loom.Pool(2, loom.WithQueue(16)) },
		"limit":   func() loom.Executor { return loom.Limit(4, loom.WithQueue(16)) },
	}
}

func shutdown(t *testing.T, exec loom.Executor) {
	t.Helper()
	t.Cleanup(func() {
		if err := exec.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
}

func TestGoResults(t *testing.T) {
	boom := errors.New("boom")
	for name, newExec := range executors() {
		t.Run(name, func(t *testing.T) {
			exec := newExec()
			shutdown(t, exec)
			ctx := context.Background()

			ok := task.Go(ctx, exec, func(context.Context) (int, error) { return 42, nil })
			if got, err := ok.Wait(ctx); got != 42 || err != nil {
				t.Errorf("value: got %d, %v; want 42, nil", got, err)
			}
			<-ok.Done() // closed once done

			failed := task.Go(ctx, exec, func(context.Context) (int, error) { return 7, boom })
			if got, err := failed.Wait(ctx); got != 7 || !errors.Is(err, boom) {
				t.Errorf("error: got %d, %v; want 7, boom", got, err)
			}

			panicked := task.Go(ctx, exec, func(context.Context) (string, error) { panic("kaboom") })
			_, err := panicked.Wait(ctx)
			if !errors.Is(err, task.ErrPanicked) {
				t.Fatalf("panic: got %v; want ErrPanicked", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "kaboom") || !strings.Contains(msg, "future_test.go") {
				t.Errorf("panic error lacks the value or the stack: %q", msg)
			}
		})
	}
}

func TestGoValuesReachTheFunction(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "v")
	f := task.Go(ctx, loom.Virtual(), func(ctx context.Context) (any, error) { return ctx.Value(key{}), nil })
	if got, _ := f.Wait(context.Background()); got != "v" {
		t.Errorf("got %v; want v", got)
	}
}

func TestGoNilFunc(t *testing.T) {
	f := task.Go[int](context.Background(), loom.Virtual(), nil)
	if _, err := f.Wait(context.Background()); !errors.Is(err, task.ErrNilFunc) {
		t.Errorf("got %v; want ErrNilFunc", err)
	}
}

// occupy holds one of exec's workers with a future that returns 1 once
// release is closed; it returns when that future's function has started.
func occupy(ctx context.Context, exec loom.Executor) (busy *task.Future[int], release chan struct{}) {
	release = make(chan struct{})
	started := make(chan struct{})
	busy = task.Go(ctx, exec, func(context.Context) (int, error) {
		close(started)
		<-release
		return 1, nil
	})
	<-started
	return busy, release
}

func TestGoRejectedAndClosed(t *testing.T) {
	ctx := context.Background()
	exec := loom.Limit(1) // one at a time, none waiting
	busy, release := occupy(ctx, exec)
	rejected := task.Go(ctx, exec, func(context.Context) (int, error) { return 2, nil })
	select {
	case <-rejected.Done():
	default:
		t.Fatal("a rejected future is not done at once")
	}
	if _, err := rejected.Wait(ctx); !errors.Is(err, loom.ErrRejected) {
		t.Errorf("rejected: got %v; want ErrRejected", err)
	}
	close(release)
	if got, err := busy.Wait(ctx); got != 1 || err != nil {
		t.Errorf("busy: got %d, %v; want 1, nil", got, err)
	}
	if err := exec.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	closed := task.Go(ctx, exec, func(context.Context) (int, error) { return 3, nil })
	if _, err := closed.Wait(ctx); !errors.Is(err, loom.ErrClosed) {
		t.Errorf("closed: got %v; want ErrClosed", err)
	}
}

func TestCancel(t *testing.T) {
	exec := loom.Virtual()
	shutdown(t, exec)
	ctx := context.Background()
	started := make(chan struct{})
	f := task.Go(ctx, exec, func(ctx context.Context) (int, error) {
		close(started)
		<-ctx.Done()
		return 5, ctx.Err()
	})
	<-started
	f.Cancel()
	if got, err := f.Wait(ctx); got != 5 || !errors.Is(err, context.Canceled) {
		t.Errorf("got %d, %v; want 5, context.Canceled", got, err)
	}
}

func TestCancelBeforeStart(t *testing.T) {
	exec := loom.Pool(1, loom.WithQueue(1))
	shutdown(t, exec)
	ctx := context.Background()
	busy, release := occupy(ctx, exec)
	ran := false
	queued := task.Go(ctx, exec, func(context.Context) (int, error) { ran = true; return 1, nil })
	queued.Cancel()
	close(release)
	if _, err := queued.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v; want context.Canceled", err)
	}
	if ran {
		t.Error("a future cancelled before it started ran its function")
	}
	busy.Wait(ctx)
}

func TestWaitContextEnds(t *testing.T) {
	exec := loom.Virtual()
	shutdown(t, exec)
	release := make(chan struct{})
	f := task.Go(context.Background(), exec, func(context.Context) (int, error) { <-release; return 1, nil })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v; want context.Canceled", err)
	}
	close(release)
	if got, err := f.Wait(context.Background()); got != 1 || err != nil {
		t.Errorf("after release: got %d, %v; want 1, nil: an ended Wait must not cancel the function", got, err)
	}
}

func TestDefaultExecutor(t *testing.T) {
	exec, err := task.DefaultExecutor()
	if err != nil {
		t.Fatal(err)
	}
	if got := exec.Stats().Name; got != "tasks" {
		t.Errorf("name: got %q; want tasks", got)
	}
	f := task.Go(context.Background(), nil, func(context.Context) (string, error) { return "ok", nil })
	if got, err := f.Wait(context.Background()); got != "ok" || err != nil {
		t.Errorf("got %q, %v; want ok, nil", got, err)
	}
}

// A future whose function the executor abandons at Shutdown, unrun, fails
// with loom.ErrAbandoned instead of never completing.
func TestAbandonedAtShutdown(t *testing.T) {
	exec := loom.Pool(1, loom.WithQueue(1))
	ctx := context.Background()
	busy, release := occupy(ctx, exec)
	queued := task.Go(ctx, exec, func(context.Context) (int, error) { return 1, nil })
	given, cancel := context.WithCancel(ctx)
	cancel()
	if err := exec.Shutdown(given); !errors.Is(err, loom.ErrAbandoned) {
		t.Fatalf("Shutdown = %v; want ErrAbandoned", err)
	}
	select {
	case <-queued.Done():
	default:
		t.Fatal("the abandoned future is not done when Shutdown returns")
	}
	if got, err := queued.Wait(ctx); got != 0 || !errors.Is(err, loom.ErrAbandoned) {
		t.Errorf("got %d, %v; want 0, loom.ErrAbandoned", got, err)
	}
	close(release)
	busy.Wait(ctx)
	if err := exec.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}
