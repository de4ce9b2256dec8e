package loom

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolHandOffUnderChurn floods pools and thread pools of every queue
// size with a mix of Go and Run from many goroutines, with tasks short
// enough that workers park and wake all the time. The submit contexts take
// each path a worker has (context.Background, context.TODO, a context with a
// value, a cancellable one), and some tasks panic or call runtime.Goexit.
// Every task must run exactly once, a Run must return only after its own
// task, and Stats must add up. It exercises the races between a worker
// parking and a submitter queueing, which would leave a task stranded in the
// queue (Shutdown would then hang).
func TestPoolHandOffUnderChurn(t *testing.T) {
	const submitters, each = 8, 300
	type key struct{}
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	contexts := []context.Context{
		context.Background(), context.TODO(), context.WithValue(context.Background(), key{}, 1), cancellable,
	}
	for _, tc := range []struct {
		threads        bool
		workers, queue int
		full           FullPolicy
	}{
		{false, 1, 0, FullWait},
		{false, 4, 0, FullWait},
		{false, 4, 2, FullWait},
		{false, 4, 64, FullWait},
		{false, 3, 1, FullReject},
		{true, 2, 0, FullWait},
		{true, 3, 2, FullReject},
	} {
		kind := "pool"
		if tc.threads {
			kind = "threads"
		}
		t.Run(fmt.Sprintf("%s,workers=%d,queue=%d,full=%v", kind, tc.workers, tc.queue, tc.full), func(t *testing.T) {
			opts := []Option{WithQueue(tc.queue), WithFull(tc.full), WithPanicHandler(func(string, any, []byte) {})}
			newPool := Pool
			if tc.threads {
				newPool = Threads
			}
			e := newPool(tc.workers, opts...)
			var ran, admitted, rejected, panicked atomic.Int64
			var wg sync.WaitGroup
			for s := range submitters {
				wg.Go(func() {
					run := s%2 == 1
					for i := range each {
						ctx := contexts[(s+i)%len(contexts)]
						mode := (s*7 + i) % 29 // 0: the task panics, 1: it calls runtime.Goexit
						var finished atomic.Bool
						task := func(context.Context) {
							defer func() {
								finished.Store(true)
								ran.Add(1)
							}()
							switch mode {
							case 0:
								panicked.Add(1)
								panic("churn")
							case 1:
								runtime.Goexit()
							}
						}
						var err error
						if run {
							err = e.Run(ctx, task)
							if err == nil && !finished.Load() {
								t.Errorf("Run returned before its task finished (mode %d)", mode)
							}
						} else {
							err = e.Go(ctx, task)
						}
						switch {
						case err == nil:
							admitted.Add(1)
						case errors.Is(err, ErrRejected):
							rejected.Add(1)
						default:
							t.Errorf("submit = %v; want nil or ErrRejected", err)
						}
					}
				})
			}
			wg.Wait()
			// A stranded task would make Shutdown wait forever: give it
			// a generous deadline and fail instead.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := e.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown = %v; want nil", err)
			}
			if got, want := ran.Load(), admitted.Load(); got != want {
				t.Errorf("ran %d tasks; want the %d admitted", got, want)
			}
			if tc.full == FullWait && rejected.Load() != 0 {
				t.Errorf("rejected %d tasks under WithFull(FullWait); want 0", rejected.Load())
			}
			s := e.Stats()
			if s.Submitted != uint64(admitted.Load()) || s.Completed != s.Submitted || s.Rejected != uint64(rejected.Load()) {
				t.Errorf("Stats submitted, completed, rejected = %d, %d, %d; want %d, %d, %d",
					s.Submitted, s.Completed, s.Rejected, admitted.Load(), admitted.Load(), rejected.Load())
			}
			if s.Panicked != uint64(panicked.Load()) {
				t.Errorf("Stats.Panicked = %d; want the %d tasks that panicked", s.Panicked, panicked.Load())
			}
			if s.Running != 0 || s.Queued != 0 || s.PeakRunning > tc.workers {
				t.Errorf("Stats running, queued, peak = %d, %d, %d; want 0, 0, at most %d",
					s.Running, s.Queued, s.PeakRunning, tc.workers)
			}
		})
	}
}

// TestPoolShutdownRacesSubmitters shuts pools down while many goroutines
// keep submitting with Go and Run. Hand-offs to parked workers do not pass
// the admission gate, so this checks that each call is either admitted, and
// its task runs and is counted, or refused with ErrClosed.
func TestPoolShutdownRacesSubmitters(t *testing.T) {
	const submitters = 8
	for _, queue := range []int{0, 4} {
		t.Run(fmt.Sprintf("queue=%d", queue), func(t *testing.T) {
			e := Pool(4, WithQueue(queue))
			var ran, admitted atomic.Int64
			task := func(context.Context) { ran.Add(1) }
			var wg sync.WaitGroup
			for s := range submitters {
				wg.Go(func() {
					submit := e.Go
					if s%2 == 1 {
						submit = e.Run
					}
					for {
						err := submit(context.Background(), task)
						if errors.Is(err, ErrClosed) {
							return
						}
						if err != nil {
							t.Errorf("submit = %v; want nil or ErrClosed", err)
							return
						}
						admitted.Add(1)
					}
				})
			}
			for admitted.Load() < 500 {
				time.Sleep(time.Millisecond)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := e.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown = %v; want nil", err)
			}
			wg.Wait()
			if got, want := ran.Load(), admitted.Load(); got != want {
				t.Errorf("ran %d tasks; want the %d admitted", got, want)
			}
			s := e.Stats()
			if s.Submitted != uint64(admitted.Load()) || s.Completed != s.Submitted || s.Abandoned != 0 {
				t.Errorf("Stats submitted, completed, abandoned = %d, %d, %d; want %d, %d, 0",
					s.Submitted, s.Completed, s.Abandoned, admitted.Load(), admitted.Load())
			}
		})
	}
}

// TestPoolKeepsOrderWhileWorkerParks submits tiny tasks one after another
// to Pool(1), pausing now and then so that the worker keeps alternating
// between parked (tasks handed to it) and busy (tasks queued). A task handed
// to the worker while it takes a queued one must not jump ahead of it:
// tasks submitted one after another run in that order.
func TestPoolKeepsOrderWhileWorkerParks(t *testing.T) {
	const tasks = 20000
	e := Pool(1, WithQueue(tasks))
	order := make([]int, 0, tasks) // appended by the one worker only
	for i := range tasks {
		if err := e.Go(context.Background(), func(context.Context) { order = append(order, i) }); err != nil {
			t.Fatalf("Go %d: %v", i, err)
		}
		if i%7 == 0 {
			runtime.Gosched()
		}
	}
	shutdown(t, e)
	if len(order) != tasks {
		t.Fatalf("ran %d tasks; want %d", len(order), tasks)
	}
	for i, got := range order {
		if got != i {
			t.Fatalf("position %d ran task %d; want submission order", i, got)
		}
	}
}

// TestPoolPeakRunning checks PeakRunning against what is known to have run
// at once, after workers have been replaced (a task calling runtime.Goexit
// ends its worker's goroutine, and a replacement that counted twice would
// push the peak past the workers) and tasks have been both handed to parked
// workers and queued.
func TestPoolPeakRunning(t *testing.T) {
	e := Pool(3, WithQueue(10))
	for range 3 {
		done := make(chan struct{})
		if err := e.Go(context.Background(), func(context.Context) {
			defer close(done)
			runtime.Goexit()
		}); err != nil {
			t.Fatal(err)
		}
		<-done
	}
	if err := e.Run(context.Background(), func(context.Context) {}); err != nil {
		t.Fatal(err)
	}
	// One task at a time, but a worker between tasks counts as busy.
	if got := e.Stats().PeakRunning; got < 1 || got > 3 {
		t.Errorf("PeakRunning after tasks one at a time = %d; want 1 to 3", got)
	}
	b := newBlocker(3 + 5)
	for range 3 + 5 { // three run, five wait in the queue
		if err := e.Go(context.Background(), b.task); err != nil {
			t.Fatal(err)
		}
	}
	b.waitStarted(t, 3)
	if s := e.Stats(); s.Running != 3 || s.Queued != 5 || s.PeakRunning != 3 {
		t.Errorf("Stats running, queued, peak = %d, %d, %d; want 3, 5, 3", s.Running, s.Queued, s.PeakRunning)
	}
	close(b.release)
	shutdown(t, e)
	if s := e.Stats(); s.Completed != 3+1+8 || s.PeakRunning != 3 {
		t.Errorf("Stats completed, peak = %d, %d; want 12, 3", s.Completed, s.PeakRunning)
	}
}

// TestPoolWakesParkedWorker guards the hand-off between a submitter that
// queues a task and a worker that parks at that moment (pool.queued and
// idleStack.push): if neither saw the other, the task would sleep in the
// queue beside a parked worker, and with nothing else submitted nobody
// would wake it (a lost wake-up). Each round, a few goroutines submit with
// Go and Run to a pool whose workers are parking after the previous round,
// and nothing more is submitted until every task of the round has run. A
// round takes microseconds; one that has not ended after roundLimit has lost
// a wake-up. The rounds are bounded in number and in time (budget per
// case); the test fails only on a round that never ends.
func TestPoolWakesParkedWorker(t *testing.T) {
	const rounds, submitters, each = 100000, 3, 2
	const roundLimit, budget = 10 * time.Second, time.Second
	for _, tc := range []struct{ workers, queue int }{
		{1, 0}, {1, 1}, {1, 8}, {2, 0}, {2, 1}, {2, 8},
	} {
		t.Run(fmt.Sprintf("workers=%d,queue=%d", tc.workers, tc.queue), func(t *testing.T) {
			e := Pool(tc.workers, WithQueue(tc.queue))
			defer shutdownWithin(t, e)
			ran := make(chan struct{}, submitters*each)
			task := func(context.Context) { ran <- struct{}{} }
			timer := time.NewTimer(roundLimit)
			defer timer.Stop()
			end := time.Now().Add(budget)
			for r := 0; r < rounds && time.Now().Before(end); r++ {
				var wg sync.WaitGroup
				for s := range submitters {
					wg.Go(func() {
						submit := e.Go
						if s == submitters-1 {
							submit = e.Run
						}
						for range each {
							if err := submit(context.Background(), task); err != nil {
								t.Errorf("submit = %v; want nil", err)
								ran <- struct{}{}
							}
						}
					})
				}
				timer.Reset(roundLimit)
				for range submitters * each {
					select {
					case <-ran:
					case <-timer.C:
						p := e.(*pool)
						t.Errorf("round %d: a task has not run after %v (lost wake-up?): queued %d, parked %v",
							r, roundLimit, len(p.tasks), p.idle.any())
						// Shutdown wakes the parked workers; the submitters
						// must be done before the test ends.
						shutdownWithin(t, e)
						wg.Wait()
						return
					}
				}
				wg.Wait()
			}
		})
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

func TestPoolRunsInFIFOOrder(t *testing.T) {
	for _, tc := range []struct {
		kind string
		e    Executor
	}{
		{"pool", Pool(1, WithQueue(100))},
		{"threads", Threads(1, WithQueue(100))},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var mu sync.Mutex
			var order []int
			for i := range 100 {
				if err := tc.e.Go(context.Background(), func(context.Context) {
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
				}); err != nil {
					t.Fatalf("Go %d: %v", i, err)
				}
			}
			shutdown(t, tc.e)
			if len(order) != 100 {
				t.Fatalf("ran %d tasks; want 100", len(order))
			}
			for i, got := range order {
				if got != i {
					t.Fatalf("task %d ran in position %d; want FIFO order (order %v)", got, i, order)
				}
			}
		})
	}
}
