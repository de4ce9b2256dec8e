package loom

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
)

// Tests written for the mutants that survived a gremlins pass (see
// docs/testing.md): each one fails when the line it names is changed.

// TestBlockingBoundMadeOnFirstUse checks the lazy default of Blocking's
// bound: with none set, the first use makes one (half the thread limit) and
// later uses get the same one. (blocking.go, currentBlocking's fast path.)
func TestBlockingBoundMadeOnFirstUse(t *testing.T) {
	old := blockingNow.Load()
	t.Cleanup(func() { blockingNow.Store(old) })
	blockingNow.Store(nil)
	b := currentBlocking()
	if b == nil {
		t.Fatal("currentBlocking() with no bound set: got nil; want the default bound")
	}
	if b.limit != defaultBlockingLimit() {
		t.Errorf("default bound: got %d; want %d", b.limit, defaultBlockingLimit())
	}
	if again := currentBlocking(); again != b {
		t.Errorf("second currentBlocking(): got another bound (%p); want the first (%p)", again, b)
	}
}

// TestLimitAbandonWakesQueuedRun has Shutdown give up on a Limit whose one
// running task ignores its cancelled context: the Run queued behind it must
// return ErrAbandoned at once, without waiting for the running task to end
// and without running its task. Closing the running slots on abandon is
// what wakes it (limit.go, onAbandon).
func TestLimitAbandonWakesQueuedRun(t *testing.T) {
	e := Limit(1, WithQueue(1))
	release := make(chan struct{})
	started := make(chan struct{})
	if err := e.Go(context.Background(), func(context.Context) { close(started); <-release }); err != nil {
		t.Fatal(err)
	}
	<-started
	runErr := make(chan error, 1)
	go func() {
		runErr <- e.Run(context.Background(), func(context.Context) { t.Error("the queued task ran after Shutdown gave up") })
	}()
	for e.Stats().Submitted != 2 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := shutdownBounded(t, e, ctx); !errors.Is(err, ErrAbandoned) {
		t.Errorf("Shutdown with an ended context: got %v; want ErrAbandoned", err)
	}
	returned := false
	select {
	case err := <-runErr:
		returned = true
		if !errors.Is(err, ErrAbandoned) {
			t.Errorf("queued Run: got %v; want ErrAbandoned", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("queued Run still waits for a slot held by a task that ignores cancellation")
	}
	close(release)
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := shutdownBounded(t, e, ctx); err != nil {
		t.Errorf("second Shutdown, the running task released: got %v; want nil", err)
	}
	if !returned {
		select {
		case <-runErr:
		case <-time.After(10 * time.Second):
			t.Fatal("queued Run never returned, even after the running task did")
		}
	}
}

// shutdownBounded calls e.Shutdown(ctx) and fails the test if it has not
// returned within ten seconds.
func shutdownBounded(t *testing.T, e Executor, ctx context.Context) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- e.Shutdown(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return within 10s")
		return nil
	}
}

// TestOnlySampledTasksAreTimed runs a thousand quick tasks on pools made a
// second earlier, on the workers' inline path (a Background context): only
// the sampled ones are timed, so no queue wait or run time reaches back to
// the pool's creation. Timing an unsampled task (admitted 0) records the
// pool's age, a second, as its wait or run time. (pool.go, the worker's
// `admitted != 0` checks.)
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

// TestExcerptAtItsLength checks excerpt at its edge: a text of exactly max
// bytes is quoted whole, one byte more is cut to max and says its length.
// (spec.go, excerpt's len(s) <= max.)
func TestExcerptAtItsLength(t *testing.T) {
	const max = 8
	tests := []struct {
		s, want string
	}{
		{"abcdefgh", `"abcdefgh"`},
		{"abcdefghi", `"abcdefgh"… (9 bytes)`},
	}
	for _, tt := range tests {
		if got := excerpt(tt.s, max); got != tt.want {
			t.Errorf("excerpt(%q, %d): got %s; want %s", tt.s, max, got, tt.want)
		}
	}
}

// TestThreadLimitErrorSaysHowManyFit checks the number the thread-limit
// error offers: at most the limit less the headroom and the threads already
// running (at least one), and not negative. (threadcheck.go, the "at most
// %d workers fit" figure.)
func TestThreadLimitErrorSaysHowManyFit(t *testing.T) {
	limit, headroom := osthreads.MaxThreads(), osthreads.Headroom()
	err := checkThreads(limit)
	if !errors.Is(err, ErrThreadLimit) {
		t.Fatalf("checkThreads(%d): got %v; want ErrThreadLimit", limit, err)
	}
	var most int
	if _, scanErr := fmt.Sscanf(err.Error()[strings.LastIndex(err.Error(), "at most "):], "at most %d workers fit", &most); scanErr != nil {
		t.Fatalf("error %q: no \"at most N workers fit\": %v", err, scanErr)
	}
	if most < 0 || most >= limit-headroom {
		t.Errorf("error %q: %d workers fit; want 0 ≤ n < %d (limit %d less headroom %d and the running threads)", err, most, limit-headroom, limit, headroom)
	}
}

// TestThreadPerTaskReleasesItsThreadCount checks that a thread-per-task
// task's locked thread is uncounted when it ends: lockedThreads is back where
// it was after the executor shuts down. (threadpertask.go, finish.)
func TestThreadPerTaskReleasesItsThreadCount(t *testing.T) {
	before := int64(osthreads.Locked())
	e := ThreadPerTask()
	for range 10 {
		if err := e.Run(context.Background(), func(context.Context) {}); err != nil {
			t.Fatal(err)
		}
	}
	shutdown(t, e)
	if got := int64(osthreads.Locked()); got != before {
		t.Errorf("lockedThreads after 10 tasks: got %d; want %d, as before", got, before)
	}
}
