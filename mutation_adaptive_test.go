package loom

import (
	"context"
	"testing"
	"time"
)

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
