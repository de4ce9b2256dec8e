package loom

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// queueLen counts the semaphore's waiters.
func (s *semaphore) queueLen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for w := s.head; w != nil; w = w.next {
		n++
	}
	return n
}

// waitForQueue yields until n callers wait in s.
func waitForQueue(s *semaphore, n int) {
	for s.queueLen() != n {
		runtime.Gosched()
	}
}

// TestSemaphoreNeverOverfillsNorStalls has many goroutines take and return
// tokens; some give up when none is free, as Reject does, some wait, and some
// wait with a done channel that another goroutine may close at any moment.
// The bound must hold, and every waiter must get through (a lost wake-up
// would hang the test); at the end every token is back.
func TestSemaphoreNeverOverfillsNorStalls(t *testing.T) {
	for _, size := range []int{1, 2, 5} {
		s := newSemaphore(size)
		var held, peak atomic.Int64
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				for j := range 300 {
					if ok, _ := s.tryAcquire(); !ok {
						switch (i + j) % 3 {
						case 0:
							continue // gave up, as FullReject does
						case 1:
							if got := s.wait(nil); got != acquired {
								t.Errorf("wait(nil) = %v; want acquired", got)
								return
							}
						case 2:
							done := make(chan struct{})
							go func() {
								runtime.Gosched()
								close(done)
							}()
							switch got := s.wait(done); got {
							case stopped:
								continue
							case acquired:
							default:
								t.Errorf("wait(done) = %v; want acquired or stopped", got)
								return
							}
						}
					}
					h := held.Add(1)
					for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
					}
					runtime.Gosched()
					held.Add(-1)
					s.release()
				}
			})
		}
		wg.Wait()
		if got := peak.Load(); got > int64(size) {
			t.Errorf("size %d: %d tokens held at once", size, got)
		}
		if got := s.state.Load(); got != 0 {
			t.Errorf("size %d: state = %#x after every token came back; want 0", size, got)
		}
		s.close()
		select {
		case <-s.idle:
		default:
			t.Errorf("size %d: idle not closed after close with no token held", size)
		}
		if ok, isClosed := s.tryAcquire(); ok || !isClosed {
			t.Errorf("tryAcquire after close = %v, %v; want false, true", ok, isClosed)
		}
	}
}

// TestSemaphoreHandsOffInOrder queues waiters one after another behind a
// held token: each returned token must go to the longest waiting, and while
// any waits, a newcomer's tryAcquire must fail even just after a release.
func TestSemaphoreHandsOffInOrder(t *testing.T) {
	const waiters = 6
	s := newSemaphore(2)
	for range 2 {
		if ok, _ := s.tryAcquire(); !ok {
			t.Fatal("tryAcquire on an empty semaphore failed")
		}
	}
	order := make(chan int, waiters)
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Go(func() {
			if got := s.wait(nil); got != acquired {
				t.Errorf("waiter %d: wait = %v; want acquired", i, got)
				return
			}
			order <- i
		})
		waitForQueue(s, i+1) // waiter i is queued before waiter i+1 comes
	}
	for i := range waiters {
		s.release()
		if ok, _ := s.tryAcquire(); ok {
			t.Fatalf("release %d: tryAcquire took the token past %d waiters", i, waiters-i)
		}
		if got := <-order; got != i {
			t.Errorf("release %d woke waiter %d; want waiter %d", i, got, i)
		}
		if got := s.held(); got != 2 {
			t.Errorf("release %d: %d tokens held; want 2 (one handed on)", i, got)
		}
	}
	wg.Wait()
	s.release()
	if got := s.wait(nil); got != acquired {
		t.Errorf("wait with a token free = %v; want acquired", got)
	}
	s.release()
	s.release()
	if got := s.state.Load(); got != 0 {
		t.Errorf("state = %#x after every token came back; want 0", got)
	}
}

// TestSemaphoreCancelRacesHandOff closes a waiter's done channel while a
// token is being handed to it: before the release, after it (the waiter then
// finds both its wake-up and done ready), at the same time from two
// goroutines, or long enough before that the waiter leaves the queue. Whichever wins, the token must not be lost: a second waiter,
// queued behind the first, must get it.
func TestSemaphoreCancelRacesHandOff(t *testing.T) {
	s := newSemaphore(1)
	var got [3]int // by waitResult of the first waiter
	for i := range 800 {
		if ok, _ := s.tryAcquire(); !ok {
			t.Fatal("tryAcquire on an empty semaphore failed")
		}
		done := make(chan struct{})
		first := make(chan waitResult, 1)
		go func() { first <- s.wait(done) }()
		waitForQueue(s, 1)
		second := make(chan waitResult, 1)
		go func() { second <- s.wait(nil) }()
		waitForQueue(s, 2)

		switch i % 4 {
		case 0:
			close(done)
			s.release()
		case 3: // the first waiter leaves the queue before the release
			close(done)
			waitForQueue(s, 1)
			s.release()
		case 1:
			s.release()
			close(done)
		case 2:
			start := make(chan struct{})
			var racers sync.WaitGroup
			racers.Go(func() { <-start; close(done) })
			racers.Go(func() { <-start; s.release() })
			close(start)
			racers.Wait()
		}

		r := <-first
		got[r]++
		switch r {
		case acquired:
			s.release() // the first waiter runs and returns its token
		case stopped:
		default:
			t.Fatalf("first waiter: wait = %v; want acquired or stopped", r)
		}
		if r := <-second; r != acquired {
			t.Fatalf("second waiter: wait = %v; want acquired", r)
		}
		s.release()
		if st := s.state.Load(); st != 0 {
			t.Fatalf("state = %#x after every token came back; want 0", st)
		}
	}
	t.Logf("first waiter: %d acquired, %d stopped", got[acquired], got[stopped])
}

// TestSemaphoreCloseWakesEveryWaiter blocks waiters, with and without a done
// channel, on a full semaphore, then closes it: each must return closed at
// once, and idle must close only when the held token comes back.
func TestSemaphoreCloseWakesEveryWaiter(t *testing.T) {
	s := newSemaphore(1)
	if ok, _ := s.tryAcquire(); !ok {
		t.Fatal("tryAcquire on an empty semaphore failed")
	}
	const waiters = 8
	never := make(chan struct{})
	results := make(chan waitResult, waiters)
	for i := range waiters {
		done := never
		if i%2 == 0 {
			done = nil
		}
		go func() { results <- s.wait(done) }()
	}
	waitForQueue(s, waiters)
	s.close()
	for range waiters {
		if got := <-results; got != closed {
			t.Errorf("wait = %v; want closed", got)
		}
	}
	if got := s.wait(nil); got != closed {
		t.Errorf("wait after close = %v; want closed", got)
	}
	select {
	case <-s.idle:
		t.Fatal("idle closed while a token is held")
	default:
	}
	s.release()
	select {
	case <-s.idle:
	default:
		t.Error("idle not closed when the last token came back after close")
	}
}

// TestSemaphoreCancelRacesClose closes a waiter's done channel and the
// semaphore at the same time: the waiter returns stopped or closed, and idle
// closes when the held token comes back.
func TestSemaphoreCancelRacesClose(t *testing.T) {
	for range 200 {
		s := newSemaphore(1)
		if ok, _ := s.tryAcquire(); !ok {
			t.Fatal("tryAcquire on an empty semaphore failed")
		}
		done := make(chan struct{})
		result := make(chan waitResult, 1)
		go func() { result <- s.wait(done) }()
		waitForQueue(s, 1)
		close(done)
		s.close()
		if got := <-result; got != closed && got != stopped {
			t.Fatalf("wait = %v; want closed or stopped", got)
		}
		s.release()
		<-s.idle
	}
}

// TestSemaphoreCloseRacesRelease closes the semaphore while tokens come back
// and waiters queue: every waiter must return, and idle must close once all
// tokens are back.
func TestSemaphoreCloseRacesRelease(t *testing.T) {
	for range 200 {
		s := newSemaphore(2)
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				if ok, _ := s.tryAcquire(); ok || s.wait(nil) == acquired {
					runtime.Gosched()
					s.release()
				}
			})
		}
		runtime.Gosched()
		s.close()
		wg.Wait()
		<-s.idle // a missed close would hang here
		if got := s.held(); got != 0 {
			t.Fatalf("%d tokens held after every waiter returned; want 0", got)
		}
	}
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
		waitForQueue(l.tickets, i+1)
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

func TestSemaphoreFillsOneCacheLine(t *testing.T) {
	if got := unsafe.Sizeof(semaphore{}); got != 64 {
		t.Errorf("semaphore is %d bytes; want 64, one size class and one cache line", got)
	}
}
