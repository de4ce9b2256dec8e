package loom

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestLimitAdmitsWaitingCallersInOrder queues callers of a full Limit with
// WithFull(FullWait) one after another: they must run in the order they came.
func TestLimitAdmitsWaitingCallersInOrder(t *testing.T) {
	e := Limit(1, WithFull(FullWait))
	defer shutdown(t, e)
	l := e.(*limit)
	release := make(chan struct{})
	running := make(chan struct{})
	if err := e.Go(context.Background(), func(context.Context) {
		close(running)
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	<-running
	const callers = 5
	order := make(chan int, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			if err := e.Run(context.Background(), func(context.Context) { order <- i }); err != nil {
				t.Errorf("caller %d: Run = %v; want nil", i, err)
			}
		})
		for l.tickets.Waiting() != i+1 {
			runtime.Gosched()
		}
	}
	close(release)
	wg.Wait()
	close(order)
	want := 0
	for got := range order {
		if got != want {
			t.Errorf("caller %d ran in place %d", got, want)
		}
		want++
	}
}

// TestLimitChurnWithCancelledCallers floods a small Limit that queues and
// waits with callers whose contexts end at any moment: an admitted task
// either runs or, its context having ended while it was queued, expires
// (never both, never neither), the bound holds, and the counts agree once it
// is shut down.
func TestLimitChurnWithCancelledCallers(t *testing.T) {
	const bound = 3
	e := Limit(bound, WithQueue(2), WithFull(FullWait))
	var running, peak, ran, accepted atomic.Int64
	task := func(context.Context) {
		r := running.Add(1)
		for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
		}
		runtime.Gosched()
		running.Add(-1)
		ran.Add(1)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 100 {
				ctx, cancel := context.WithCancel(context.Background())
				if j%2 == 0 {
					go func() {
						runtime.Gosched()
						cancel()
					}()
				}
				submit := e.Go
				if (i+j)%3 == 0 {
					submit = e.Run
				}
				switch err := submit(ctx, task); {
				case err == nil:
					accepted.Add(1)
				case errors.Is(err, context.Canceled):
				default:
					t.Errorf("submit = %v; want nil or context.Canceled", err)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	shutdown(t, e)
	t.Logf("%d of %d submissions accepted", accepted.Load(), 16*100)
	s := e.Stats()
	if got := uint64(ran.Load()); got != s.Completed {
		t.Errorf("ran %d tasks; Stats.Completed = %d", got, s.Completed)
	}
	if s.Submitted != s.Completed+s.Expired || s.Submitted < uint64(accepted.Load()) {
		t.Errorf("Stats submitted, completed, expired = %d, %d, %d; want submitted = completed + expired, at least the %d accepted",
			s.Submitted, s.Completed, s.Expired, accepted.Load())
	}
	if s.Running != 0 || s.Queued != 0 {
		t.Errorf("Stats running, queued = %d, %d after shutdown; want 0, 0", s.Running, s.Queued)
	}
	if got := peak.Load(); got > bound || s.PeakRunning > bound {
		t.Errorf("%d tasks ran at once (Stats: %d); want at most %d", got, s.PeakRunning, bound)
	}
}
