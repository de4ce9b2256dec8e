package task_test

import (
	"context"
	"errors"
	"testing"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
)

// blocker returns a function that waits for its context and reports that it
// was cancelled.
func blocker(cancelled chan<- int, i int) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		<-ctx.Done()
		cancelled <- i
		return 0, ctx.Err()
	}
}

func TestAll(t *testing.T) {
	exec := loom.Virtual()
	shutdown(t, exec)
	ctx := context.Background()

	var fs []*task.Future[int]
	for i := range 5 {
		fs = append(fs, task.Go(ctx, exec, func(context.Context) (int, error) { return i * i, nil }))
	}
	got, err := task.All(ctx, fs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != i*i {
			t.Errorf("value %d: got %d; want %d", i, v, i*i)
		}
	}
	if got, err := task.All[int](ctx); len(got) != 0 || err != nil {
		t.Errorf("no futures: got %v, %v; want [], nil", got, err)
	}
}

func TestAllFirstErrorCancelsTheRest(t *testing.T) {
	exec := loom.Virtual()
	shutdown(t, exec)
	ctx := context.Background()
	boom := errors.New("boom")
	cancelled := make(chan int, 2)
	fs := []*task.Future[int]{
		task.Go(ctx, exec, blocker(cancelled, 0)),
		task.Go(ctx, exec, func(context.Context) (int, error) { return 0, boom }),
		task.Go(ctx, exec, blocker(cancelled, 2)),
	}
	if _, err := task.All(ctx, fs...); !errors.Is(err, boom) {
		t.Fatalf("got %v; want boom", err)
	}
	// All waited for the cancelled ones: they are done already.
	for _, i := range []int{0, 2} {
		select {
		case <-fs[i].Done():
		default:
			t.Errorf("future %d: not done when All returned", i)
		}
		if _, err := fs[i].Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("future %d: got %v; want context.Canceled", i, err)
		}
	}
}

func TestAllContextEnds(t *testing.T) {
	exec := loom.Virtual()
	shutdown(t, exec)
	cancelled := make(chan int, 1)
	f := task.Go(context.Background(), exec, blocker(cancelled, 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := task.All(ctx, f); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v; want context.Canceled", err)
	}
	// All cancelled f: it ends, whether or not its function had started.
	if _, err := f.Wait(context.Background()); !errors.Is(err, context.Canceled) {
		t.Errorf("future after All's context ended: got %v; want context.Canceled", err)
	}
}

func TestAny(t *testing.T) {
	exec := loom.Virtual()
	shutdown(t, exec)
	ctx := context.Background()
	cancelled := make(chan int, 2)
	fs := []*task.Future[int]{
		task.Go(ctx, exec, blocker(cancelled, 0)),
		task.Go(ctx, exec, func(context.Context) (int, error) { return 0, errors.New("first fails") }),
		task.Go(ctx, exec, func(context.Context) (int, error) { return 9, nil }),
		task.Go(ctx, exec, blocker(cancelled, 3)),
	}
	got, err := task.Any(ctx, fs...)
	if got != 9 || err != nil {
		t.Errorf("got %d, %v; want 9, nil", got, err)
	}
	// The rest were cancelled: both blockers end.
	for _, i := range []int{0, 3} {
		if _, err := fs[i].Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("future %d: got %v; want context.Canceled", i, err)
		}
	}
}

func TestAnyAllFail(t *testing.T) {
	exec := loom.Virtual()
	shutdown(t, exec)
	ctx := context.Background()
	a, b := errors.New("a"), errors.New("b")
	fs := []*task.Future[int]{
		task.Go(ctx, exec, func(context.Context) (int, error) { return 0, a }),
		task.Go(ctx, exec, func(context.Context) (int, error) { return 0, b }),
	}
	_, err := task.Any(ctx, fs...)
	if !errors.Is(err, a) || !errors.Is(err, b) {
		t.Errorf("got %v; want both a and b", err)
	}
	if _, err := task.Any[int](ctx); !errors.Is(err, task.ErrNoFutures) {
		t.Errorf("no futures: got %v; want ErrNoFutures", err)
	}
}
