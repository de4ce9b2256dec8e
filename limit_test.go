package loom

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
	"github.com/loomrt/loom/internal/threadbudget"
)

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

// TestLimitQueueBoundsWaitersUnderWait checks that under WithFull(FullWait) the queue
// still bounds the admitted tasks that wait: a caller beyond it waits for
// room and is not counted as queued.
func TestLimitQueueBoundsWaitersUnderWait(t *testing.T) {
	e := Limit(1, WithQueue(1), WithFull(FullWait))
	b := newBlocker(3)
	for range 2 { // one runs, one is queued
		if err := e.Go(context.Background(), b.task); err != nil {
			t.Fatal(err)
		}
	}
	b.waitStarted(t, 1)
	result := make(chan error, 1)
	go func() { result <- e.Go(context.Background(), b.task) }()
	time.Sleep(10 * time.Millisecond)
	select {
	case err := <-result:
		t.Fatalf("Go beyond the queue returned %v; want it to wait for room", err)
	default:
	}
	if s := e.Stats(); s.Running != 1 || s.Queued != 1 || s.Submitted != 2 {
		t.Errorf("Stats running, queued, submitted = %d, %d, %d; want 1, 1, 2", s.Running, s.Queued, s.Submitted)
	}
	close(b.release)
	if err := <-result; err != nil {
		t.Errorf("Go waiting for room = %v; want nil once there is room", err)
	}
	shutdown(t, e)
	if s := e.Stats(); s.Completed != 3 || s.PeakRunning != 1 {
		t.Errorf("Stats completed, peak = %d, %d; want 3, 1", s.Completed, s.PeakRunning)
	}
}

func TestLimitRejectsRunAtOnce(t *testing.T) {
	e := Limit(2)
	defer shutdown(t, e)
	b := newBlocker(2)
	for range 2 {
		if err := e.Go(context.Background(), b.task); err != nil {
			t.Fatal(err)
		}
	}
	b.waitStarted(t, 2)
	if err := e.Run(context.Background(), func(context.Context) {}); !errors.Is(err, ErrRejected) {
		t.Errorf("Run on a full limit = %v; want ErrRejected", err)
	}
	close(b.release)
}

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

// TestLimitTakesTheThreadBudgetAfterItsWait has a Go wait for a ticket and
// the thread budget then run out, as a reading does when the threads near
// the mark: the waiter, once it has its ticket, takes a unit of the budget
// again and is refused. Had it kept the unit it took before parking, its
// task would block a thread that no reading counted.
func TestLimitTakesTheThreadBudgetAfterItsWait(t *testing.T) {
	e := Limit(1, WithFull(FullWait))
	budget := threadbudget.New()
	e.(*limit).budget = budget
	b := newBlocker(1)
	if err := e.Go(context.Background(), b.task); err != nil {
		t.Fatal(err)
	}
	b.waitStarted(t, 1)
	result := make(chan error, 1)
	go func() {
		result <- e.Go(context.Background(), func(context.Context) { t.Error("the waiter's task ran on a spent budget") })
	}()
	for e.(*limit).tickets.Waiting() != 1 {
		time.Sleep(time.Millisecond)
	}
	// A mark of 1 leaves no room whatever a reading finds, this one or the
	// Refill a waiter takes when it wakes more than MinRefill later (a
	// reading counts at least one P).
	budget.Set(1, func() osthreads.Counts { return osthreads.Counts{Total: 1, InUse: 1, Procs: 1} })
	close(b.release)
	if err := <-result; !errors.Is(err, ErrRejected) {
		t.Errorf("Go that waited for a ticket while the budget ran out = %v; want ErrRejected", err)
	}
	shutdown(t, e)
	if s := e.Stats(); s.Completed != 1 || s.Rejected != 1 {
		t.Errorf("Stats completed, rejected = %d, %d; want 1, 1", s.Completed, s.Rejected)
	}
}

// TestLimitMaxQueueWait fills a Limit's two slots with blocked tasks and,
// with a mean run time of 10 ms, queues newcomers against a bound of 25 ms:
// the k-th in the queue expects k × 10 ms ÷ 2, so the fifth (25 ms, at the
// bound) is admitted and the sixth (30 ms) refused, though the queue holds
// ten. Without a run time measured yet, only the queue's length bounds.
func TestLimitMaxQueueWait(t *testing.T) {
	for _, tc := range []struct {
		name     string
		meanRun  time.Duration
		admitted int // queued past the two running
	}{
		{"a mean run time of 10ms", 10 * time.Millisecond, 5},
		{"no run time measured", 0, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Limit(2, WithQueue(10), WithMaxQueueWait(25*time.Millisecond))
			l := e.(*limit)
			b := newBlocker(2 + 10)
			for range 2 {
				if err := e.Go(context.Background(), b.task); err != nil {
					t.Fatal(err)
				}
			}
			b.waitStarted(t, 2)
			l.meanRun.Store(int64(tc.meanRun))
			queued := 0
			for range 10 {
				if e.Go(context.Background(), b.task) != nil {
					break
				}
				queued++
			}
			if queued != tc.admitted {
				t.Errorf("queued %d; want %d", queued, tc.admitted)
			}
			if err := e.Run(context.Background(), func(context.Context) {}); !errors.Is(err, ErrRejected) {
				t.Errorf("Run past the bound = %v; want ErrRejected", err)
			}
			if s := e.Stats(); s.Queued != tc.admitted || int(s.Rejected) != 1+min(1, 10-tc.admitted) {
				t.Errorf("Stats queued, rejected = %d, %d; want %d, %d", s.Queued, s.Rejected, tc.admitted, 1+min(1, 10-tc.admitted))
			}
			close(b.release)
			shutdown(t, e)
		})
	}
}

// TestLimitMaxQueueWaitMeasuresEveryTask runs one task on a Limit with
// WithMaxQueueWait: its run time must reach the mean at once, though the
// sampling of Stats would time only one task in 32.
func TestLimitMaxQueueWaitMeasuresEveryTask(t *testing.T) {
	e := Limit(1, WithQueue(1), WithMaxQueueWait(time.Second))
	if err := e.Run(context.Background(), func(context.Context) {}); err != nil {
		t.Fatal(err)
	}
	shutdown(t, e)
	if got := e.(*limit).meanRun.Load(); got <= 0 {
		t.Errorf("mean run time after one task = %d; want it measured", got)
	}
}

// The mean run time starts at the first task's and moves an eighth of the
// way to each next one.
func TestAverageRun(t *testing.T) {
	var c core
	for _, tt := range []struct{ run, want int64 }{{800, 800}, {1600, 900}, {900, 900}, {100, 800}} {
		c.averageRun(tt.run)
		if got := c.meanRun.Load(); got != tt.want {
			t.Errorf("after a run of %d: mean %d; want %d", tt.run, got, tt.want)
		}
	}
}

func TestWithMaxQueueWaitMisuse(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func()
		want string
	}{
		{"zero", func() { WithMaxQueueWait(0) }, "the wait must be positive"},
		{"no queue", func() { Limit(1, WithMaxQueueWait(time.Millisecond)) }, "needs a queue"},
		{"full=wait", func() { Limit(1, WithQueue(1), WithFull(FullWait), WithMaxQueueWait(time.Millisecond)) }, "WithFull(FullReject)"},
		{"pool", func() { Pool(1, WithMaxQueueWait(time.Millisecond)) }, "applies to Limit only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), tc.want) {
					t.Errorf("panic %v; want one containing %q", v, tc.want)
				}
			}()
			tc.make()
		})
	}
}

// TestLimitMaxQueueWaitUnderConcurrentSubmission lets many goroutines race to
// queue behind four blocked tasks, with a time bound that allows five: the
// check and the admission are not one step, so a few more may pass, but the
// queue's length (nine) stays the hard bound, and at least the five the time
// bound allows get in.
func TestLimitMaxQueueWaitUnderConcurrentSubmission(t *testing.T) {
	const submitters, each = 32, 20
	e := Limit(4, WithQueue(9), WithMaxQueueWait(5*time.Millisecond))
	l := e.(*limit)
	b := newBlocker(4 + 9)
	for range 4 {
		if err := e.Go(context.Background(), b.task); err != nil {
			t.Fatal(err)
		}
	}
	b.waitStarted(t, 4)
	l.meanRun.Store(int64(4 * time.Millisecond)) // the k-th queued expects k ms
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range submitters {
		wg.Go(func() {
			for range each {
				if e.Go(context.Background(), b.task) == nil {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := admitted.Load(); got < 5 || got > 9 {
		t.Errorf("admitted %d past the running four; want 5 to 9", got)
	}
	if s := e.Stats(); s.Running != 4 || s.Queued != int(admitted.Load()) {
		t.Errorf("Stats running, queued = %d, %d; want 4, %d", s.Running, s.Queued, admitted.Load())
	}
	close(b.release)
	shutdown(t, e)
}

// TestLimitMaxQueueWaitDoesNotOverflow queues two tasks before the mean run
// time jumps to a century: the third in the queue would expect three
// centuries, a product past an int64 of nanoseconds, and must be refused,
// not admitted on a wrapped, negative wait.
func TestLimitMaxQueueWaitDoesNotOverflow(t *testing.T) {
	e := Limit(1, WithQueue(3), WithMaxQueueWait(time.Hour))
	b := newBlocker(1 + 3)
	if err := e.Go(context.Background(), b.task); err != nil {
		t.Fatal(err)
	}
	b.waitStarted(t, 1)
	for range 2 {
		if err := e.Go(context.Background(), b.task); err != nil {
			t.Fatal(err)
		}
	}
	e.(*limit).meanRun.Store(int64(100 * 365 * 24 * time.Hour))
	if err := e.Go(context.Background(), b.task); !errors.Is(err, ErrRejected) {
		t.Errorf("Go expecting three centuries' wait = %v; want ErrRejected", err)
	}
	close(b.release)
	shutdown(t, e)
}
