package loom

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
	"github.com/loomrt/loom/internal/threadbudget"
)

// occupy submits n tasks to e with Go that wait for release, and waits
// until they all run.
func occupy(t *testing.T, e Executor, n int) (release func()) {
	t.Helper()
	running := make(chan struct{})
	gate := make(chan struct{})
	for i := range n {
		if err := e.Go(context.Background(), func(context.Context) {
			running <- struct{}{}
			<-gate
		}); err != nil {
			t.Fatalf("Go %d: %v", i, err)
		}
	}
	for range n {
		<-running
	}
	return func() { close(gate) }
}

// Under WithQueue(0), one task past the limit is turned away.
func TestAdaptiveHoldsItsLimit(t *testing.T) {
	e := Adaptive(WithLimitRange(3, 3), WithQueue(0))
	defer shutdown(t, e)
	release := occupy(t, e, 3) // exactly at the limit
	if err := e.Go(context.Background(), func(context.Context) {}); !errors.Is(err, ErrRejected) {
		t.Errorf("Go one past the limit = %v; want ErrRejected", err)
	}
	s := e.Stats()
	if s.Kind != "adaptive" || s.Limit != 3 || s.Workers != 3 || s.Running != 3 || s.Rejected != 1 || s.QueueCapacity != 0 {
		t.Errorf("Stats = %+v; want kind adaptive, limit 3, workers 3, running 3, rejected 1, queue 0", s)
	}
	release()
}

// By default the queue follows the limit: half of it waits (at a limit of
// 5, 2), the next task is turned away, and the waiting ones run once the
// running ones end.
func TestAdaptiveQueueFollowsItsLimit(t *testing.T) {
	e := Adaptive(WithLimitRange(5, 5))
	defer shutdown(t, e)
	release := occupy(t, e, 5)
	ran := make(chan struct{}, 2)
	for i := range 2 {
		if err := e.Go(context.Background(), func(context.Context) { ran <- struct{}{} }); err != nil {
			t.Fatalf("Go %d past the limit = %v; want it queued", i+1, err)
		}
	}
	if err := e.Go(context.Background(), func(context.Context) {}); !errors.Is(err, ErrRejected) {
		t.Errorf("Go with the queue of 2 full = %v; want ErrRejected", err)
	}
	s := e.Stats()
	if s.Limit != 5 || s.Running != 5 || s.Queued != 2 || s.QueueCapacity != 2 || s.Rejected != 1 {
		t.Errorf("Stats = %+v; want limit 5, running 5, queued 2, queue capacity 2, rejected 1", s)
	}
	release()
	for range 2 {
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Fatal("a queued task did not run within 10s of the running ones ending")
		}
	}
}

// Every executor with a queue drops a queued task whose context ended
// before its turn: never run, counted in Stats.Expired, and Run returns the
// context's error.
func TestQueuedTasksExpire(t *testing.T) {
	executors := map[string]func() Executor{
		"pool":     func() Executor { return Pool(1, WithQueue(1)) },
		"threads":  func() Executor { return Threads(1, WithQueue(1)) },
		"limit":    func() Executor { return Limit(1, WithQueue(1)) },
		"adaptive": func() Executor { return Adaptive(WithLimitRange(1, 1), WithQueue(1)) },
	}
	for kind, build := range executors {
		for _, submit := range []string{"Go", "Run"} {
			for _, end := range []string{"cancel", "deadline"} {
				t.Run(kind+"/"+submit+"/"+end, func(t *testing.T) {
					e := build()
					release := occupy(t, e, 1)
					var ctx context.Context
					var cancel context.CancelFunc
					want := error(context.Canceled)
					if end == "cancel" {
						ctx, cancel = context.WithCancel(context.Background())
					} else {
						ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
						want = context.DeadlineExceeded
					}
					defer cancel()
					ran := false
					task := func(context.Context) { ran = true }
					result := make(chan error, 1)
					if submit == "Go" {
						result <- e.Go(ctx, task)
						want = nil
					} else {
						go func() { result <- e.Run(ctx, task) }()
					}
					waitFor(t, func() bool { return e.Stats().Queued == 1 })
					if end == "cancel" {
						cancel()
					} else {
						time.Sleep(2 * time.Millisecond)
					}
					release()
					err := <-result
					shutdown(t, e)
					if !errors.Is(err, want) || ran {
						t.Errorf("%s = %v, task ran %v; want %v, never run", submit, err, ran, want)
					}
					s := e.Stats()
					if s.Expired != 1 || s.Completed != 1 || s.Submitted != s.Completed+s.Expired || s.Queued != 0 {
						t.Errorf("Stats = %+v; want 1 expired, 1 completed, submitted = completed + expired, none queued", s)
					}
				})
			}
		}
	}
}

func TestAdaptiveStartsWithinItsRange(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want int
	}{
		{"default", nil, adaptiveMax},
		{"initial", []Option{WithInitialLimit(7)}, 7},
		{"initial below range", []Option{WithInitialLimit(2), WithLimitRange(5, 9)}, 5},
		{"initial above range", []Option{WithInitialLimit(50), WithLimitRange(5, 9)}, 9},
		{"range at one", []Option{WithLimitRange(1, 1)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Adaptive(tt.opts...)
			defer shutdown(t, e)
			if got := e.Stats().Limit; got != tt.want {
				t.Errorf("limit %d; want %d", got, tt.want)
			}
		})
	}
}

func TestAdaptiveOptionsPanic(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"WithLimitRange(0, 5)", func() { WithLimitRange(0, 5) }},
		{"WithLimitRange(5, 4)", func() { WithLimitRange(5, 4) }},
		{"WithInitialLimit(0)", func() { WithInitialLimit(0) }},
		{"Limit with WithLimitRange", func() { Limit(4, WithLimitRange(1, 2)) }},
		{"Virtual with InitialLimit", func() { Virtual(WithInitialLimit(2)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", tt.name)
				}
			}()
			tt.f()
		})
	}
}

// waitFor polls cond until it holds; the test's own timeout bounds it.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		time.Sleep(100 * time.Microsecond)
	}
}

func TestAdaptiveFromSpec(t *testing.T) {
	e, err := Parse("adaptive,min=3,max=5,initial=4,queue=2,name=db")
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, e)
	s := e.Stats()
	if s.Kind != KindAdaptive || s.Name != "db" || s.Limit != 4 || s.Workers != 5 || s.QueueCapacity != 2 {
		t.Errorf("Stats = %+v; want adaptive db, limit 4, workers (max) 5, queue 2", s)
	}
}

// TestEntryQueueKeepsOrderThroughEmpty pushes and pops adaptive's queue of
// waiting tasks across the moments it empties and holds several: each task
// comes out once, in the order it went in, and len follows.
func TestEntryQueueKeepsOrderThroughEmpty(t *testing.T) {
	var q entryQueue
	e := make([]*entry, 5)
	for i := range e {
		e[i] = &entry{admitted: int64(i)}
	}
	pop := func(want int) {
		t.Helper()
		if q.len == 0 {
			t.Fatalf("pop: queue empty; want entry %d", want)
		}
		if got := q.pop(); got != e[want] {
			t.Fatalf("pop = entry %d; want entry %d", got.admitted, want)
		}
	}
	q.push(e[0])
	pop(0) // empties the queue
	q.push(e[1])
	q.push(e[2])
	pop(1) // leaves one behind
	q.push(e[3])
	pop(2)
	pop(3)
	q.push(e[4])
	if q.len != 1 {
		t.Errorf("len = %d after refilling with one; want 1", q.len)
	}
	pop(4)
	if q.len != 0 || q.head != nil || q.tail != nil {
		t.Errorf("emptied queue: len %d, head %v, tail %v; want 0, nil, nil", q.len, q.head, q.tail)
	}
}

// TestAdaptiveFeedsEachTaskToItsLimit checks what adaptive tells its
// algorithm when a task ends: a task whose context ended while it ran is
// cancelled and sets no latency; one that returned with its context live
// succeeded, and its latency lies within the Run call that ran it. The
// executor is idle for a while first, so that a latency measured from the
// executor's start instead of the task's shows.
func TestAdaptiveFeedsEachTaskToItsLimit(t *testing.T) {
	e := Adaptive(WithLimitRange(4, 4))
	defer shutdown(t, e)
	a := e.(*adaptive)
	window := func() time.Duration {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.alg.Base()
	}

	ctx, cancel := context.WithCancel(context.Background())
	if err := e.Run(ctx, func(context.Context) { cancel() }); err != nil {
		t.Fatalf("Run of the cancelled task: %v", err)
	}
	if got := window(); got != 0 {
		t.Errorf("after a cancelled task the least latency is %s; want none (0)", got)
	}

	time.Sleep(300 * time.Millisecond)
	begin := time.Now()
	if err := e.Run(context.Background(), func(context.Context) {}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	took := time.Since(begin)
	if got := window(); got <= 0 || got > took {
		t.Errorf("after a task that succeeded the least latency is %s; want above 0 and at most the %s Run took", got, took)
	}
}

// TestAdaptiveWakesAWaiterWhenTheQueueHasRoom fills an adaptive executor
// (one running, one queued) under FullWait, and makes a third Go wait. When
// the running task ends, the queued one takes its slot, which leaves the
// queue room but the limit full: the waiter must be woken then, not when
// the second task ends.
func TestAdaptiveWakesAWaiterWhenTheQueueHasRoom(t *testing.T) {
	e := Adaptive(WithLimitRange(1, 1), WithQueue(1), WithFull(FullWait))
	defer shutdown(t, e)
	releaseFirst := occupy(t, e, 1)
	second := make(chan struct{})
	secondRuns := make(chan struct{})
	if err := e.Go(context.Background(), func(context.Context) {
		close(secondRuns)
		<-second
	}); err != nil {
		t.Fatalf("Go of the queued task: %v", err)
	}
	admitted := make(chan error, 1)
	go func() { admitted <- e.Go(context.Background(), func(context.Context) {}) }()
	a := e.(*adaptive)
	waiting := func() bool { // the third Go waits for room
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.room != nil
	}
	for !waiting() {
		time.Sleep(time.Millisecond)
	}
	releaseFirst()
	<-secondRuns
	select {
	case err := <-admitted:
		if err != nil {
			t.Errorf("Go of the waiter = %v; want nil", err)
		}
		close(second)
	case <-time.After(10 * time.Second):
		t.Errorf("the waiter was not admitted within 10s of the queue having room")
		close(second)
		<-admitted
	}
}

// TestAdaptiveCountsADroppedTaskQueuedUntilItsOnDropReturns drops a queued
// task whose context was cancelled (the slot it waited for frees, and the
// dispatch finds it expired) and holds its OnDrop function: until that
// returns, the task still counts as queued, with none left in the queue
// itself (adaptive.go, taskCounts: queue.len + unrun.len).
func TestAdaptiveCountsADroppedTaskQueuedUntilItsOnDropReturns(t *testing.T) {
	e := Adaptive(WithLimitRange(1, 1), WithQueue(1))
	defer shutdown(t, e)
	release := occupy(t, e, 1)
	inDrop, leave := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(OnDrop(context.Background(), func(error) {
		close(inDrop)
		<-leave
	}))
	if err := e.Go(ctx, func(context.Context) { t.Error("the cancelled task ran") }); err != nil {
		t.Fatalf("Go of the task to drop: %v", err)
	}
	cancel()
	release() // the dispatch drops the queued task, then calls its OnDrop
	select {
	case <-inDrop:
	case <-time.After(10 * time.Second):
		t.Fatal("OnDrop not called within 10s of the slot freeing")
	}
	if s := e.Stats(); s.Queued != 1 || s.Running != 0 {
		t.Errorf("while OnDrop runs: Stats queued %d, running %d; want 1, 0", s.Queued, s.Running)
	}
	close(leave)
	waitFor(t, func() bool { return e.Stats().Queued == 0 })
}

// TestAdaptiveTakesTheThreadBudgetAfterItsWait is
// TestLimitTakesTheThreadBudgetAfterItsWait for Adaptive: a Go that waits
// for room takes a unit of the thread budget again when it wakes.
func TestAdaptiveTakesTheThreadBudgetAfterItsWait(t *testing.T) {
	e := Adaptive(WithLimitRange(1, 1), WithQueue(1), WithFull(FullWait))
	a := e.(*adaptive)
	budget := threadbudget.New()
	a.budget = budget
	releaseFirst := occupy(t, e, 1)
	second := make(chan struct{})
	if err := e.Go(context.Background(), func(context.Context) { <-second }); err != nil {
		t.Fatalf("Go of the queued task: %v", err)
	}
	result := make(chan error, 1)
	go func() {
		result <- e.Go(context.Background(), func(context.Context) { t.Error("the waiter's task ran on a spent budget") })
	}()
	waiting := func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.room != nil
	}
	for !waiting() {
		time.Sleep(time.Millisecond)
	}
	// A mark of 1 leaves no room whatever a reading finds, this one or the
	// Refill a waiter takes when it wakes more than MinRefill later (a
	// reading counts at least one P).
	budget.Set(1, func() osthreads.Counts { return osthreads.Counts{Total: 1, InUse: 1, Procs: 1} })
	releaseFirst()
	if err := <-result; !errors.Is(err, ErrRejected) {
		t.Errorf("Go that waited for room while the budget ran out = %v; want ErrRejected", err)
	}
	close(second)
	shutdown(t, e)
}
