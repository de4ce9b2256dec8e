package loom

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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

func TestShutdownWakesWaitingCallers(t *testing.T) {
	for _, tc := range []struct {
		kind string
		e    Executor
	}{
		{"pool", Pool(1, WithQueue(0))},
		{"threads", Threads(1, WithQueue(0))},
		{"limit", Limit(1, WithFull(FullWait))},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			e := tc.e
			b := newBlocker(1)
			err := e.Go(context.Background(), b.task)
			for errors.Is(err, ErrRejected) { // a new pool worker may not be waiting yet
				time.Sleep(time.Millisecond)
				err = e.Go(context.Background(), b.task)
			}
			if err != nil {
				t.Fatal(err)
			}
			b.waitStarted(t, 1)
			result := make(chan error, 1)
			go func() { result <- e.Go(context.Background(), func(context.Context) {}) }()
			// Let the caller start waiting for room, then shut down.
			done := make(chan error, 1)
			go func() {
				time.Sleep(10 * time.Millisecond)
				done <- e.Shutdown(context.Background())
			}()
			if err := <-result; !errors.Is(err, ErrClosed) {
				t.Errorf("Go waiting during Shutdown = %v; want ErrClosed", err)
			}
			close(b.release)
			if err := <-done; err != nil {
				t.Errorf("Shutdown = %v; want nil", err)
			}
		})
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
