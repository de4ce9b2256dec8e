package semaphore

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// waitForQueue yields until n callers wait in s.
func waitForQueue(s *Semaphore, n int) {
	for s.Waiting() != n {
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
		s := New(size)
		var held, peak atomic.Int64
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				for j := range 300 {
					if ok, _ := s.TryAcquire(); !ok {
						switch (i + j) % 3 {
						case 0:
							continue // gave up, as FullReject does
						case 1:
							if got := s.Wait(nil); got != Acquired {
								t.Errorf("wait(nil) = %v; want Acquired", got)
								return
							}
						case 2:
							done := make(chan struct{})
							go func() {
								runtime.Gosched()
								close(done)
							}()
							switch got := s.Wait(done); got {
							case Stopped:
								continue
							case Acquired:
							default:
								t.Errorf("wait(done) = %v; want Acquired or Stopped", got)
								return
							}
						}
					}
					h := held.Add(1)
					for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
					}
					runtime.Gosched()
					held.Add(-1)
					s.Release()
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
		s.Close()
		select {
		case <-s.Idle():
		default:
			t.Errorf("size %d: idle not closed after close with no token held", size)
		}
		if ok, isClosed := s.TryAcquire(); ok || !isClosed {
			t.Errorf("tryAcquire after close = %v, %v; want false, true", ok, isClosed)
		}
	}
}

// TestSemaphoreHandsOffInOrder queues waiters one after another behind a
// held token: each returned token must go to the longest waiting, and while
// any waits, a newcomer's tryAcquire must fail even just after a release.
func TestSemaphoreHandsOffInOrder(t *testing.T) {
	const waiters = 6
	s := New(2)
	for range 2 {
		if ok, _ := s.TryAcquire(); !ok {
			t.Fatal("tryAcquire on an empty semaphore failed")
		}
	}
	order := make(chan int, waiters)
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Go(func() {
			if got := s.Wait(nil); got != Acquired {
				t.Errorf("waiter %d: wait = %v; want Acquired", i, got)
				return
			}
			order <- i
		})
		waitForQueue(s, i+1) // waiter i is queued before waiter i+1 comes
	}
	for i := range waiters {
		s.Release()
		if ok, _ := s.TryAcquire(); ok {
			t.Fatalf("release %d: tryAcquire took the token past %d waiters", i, waiters-i)
		}
		if got := <-order; got != i {
			t.Errorf("release %d woke waiter %d; want waiter %d", i, got, i)
		}
		if got := s.Held(); got != 2 {
			t.Errorf("release %d: %d tokens held; want 2 (one handed on)", i, got)
		}
	}
	wg.Wait()
	s.Release()
	if got := s.Wait(nil); got != Acquired {
		t.Errorf("wait with a token free = %v; want Acquired", got)
	}
	s.Release()
	s.Release()
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
	s := New(1)
	var got [3]int // by Result of the first waiter
	for i := range 800 {
		if ok, _ := s.TryAcquire(); !ok {
			t.Fatal("tryAcquire on an empty semaphore failed")
		}
		done := make(chan struct{})
		first := make(chan Result, 1)
		go func() { first <- s.Wait(done) }()
		waitForQueue(s, 1)
		second := make(chan Result, 1)
		go func() { second <- s.Wait(nil) }()
		waitForQueue(s, 2)

		switch i % 4 {
		case 0:
			close(done)
			s.Release()
		case 3: // the first waiter leaves the queue before the release
			close(done)
			waitForQueue(s, 1)
			s.Release()
		case 1:
			s.Release()
			close(done)
		case 2:
			start := make(chan struct{})
			var racers sync.WaitGroup
			racers.Go(func() { <-start; close(done) })
			racers.Go(func() { <-start; s.Release() })
			close(start)
			racers.Wait()
		}

		r := <-first
		got[r]++
		switch r {
		case Acquired:
			s.Release() // the first waiter runs and returns its token
		case Stopped:
		default:
			t.Fatalf("first waiter: wait = %v; want Acquired or Stopped", r)
		}
		if r := <-second; r != Acquired {
			t.Fatalf("second waiter: wait = %v; want Acquired", r)
		}
		s.Release()
		if st := s.state.Load(); st != 0 {
			t.Fatalf("state = %#x after every token came back; want 0", st)
		}
	}
	t.Logf("first waiter: %d acquired, %d stopped", got[Acquired], got[Stopped])
}

// TestSemaphoreStoppedWaiterPassesItsTokenOn closes a waiter's done channel
// and then hands it a token, or closes the semaphore, while the waiter may
// be anywhere between queueing and its select (which then finds both cases
// ready and picks one at random). A waiter stopped first returns Stopped and
// passes the token it was handed to the next waiter; woken by the close, it
// returns Closed (or Stopped, had it left the queue first) and returns no
// token it never held.
func TestSemaphoreStoppedWaiterPassesItsTokenOn(t *testing.T) {
	for range 1000 {
		s := New(1)
		if ok, _ := s.TryAcquire(); !ok {
			t.Fatal("tryAcquire on an empty semaphore failed")
		}
		done := make(chan struct{})
		first := make(chan Result, 1)
		go func() { first <- s.Wait(done) }()
		waitForQueue(s, 1)
		second := make(chan Result, 1)
		go func() { second <- s.Wait(nil) }()
		waitForQueue(s, 2)
		close(done)
		s.Release()
		if r := <-first; r != Stopped {
			t.Fatalf("first waiter, stopped before the token reached it: wait = %v; want Stopped", r)
		}
		if r := <-second; r != Acquired {
			t.Fatalf("second waiter: wait = %v; want Acquired, the token passed on", r)
		}
		s.Release()

		s = New(1)
		if ok, _ := s.TryAcquire(); !ok {
			t.Fatal("tryAcquire on an empty semaphore failed")
		}
		done = make(chan struct{})
		go func() { first <- s.Wait(done) }()
		waitForQueue(s, 1)
		close(done)
		s.Close()
		if r := <-first; r != Closed && r != Stopped {
			t.Fatalf("waiter stopped, then woken by the close: wait = %v; want Closed or Stopped", r)
		}
		if got := s.Held(); got != 1 {
			t.Fatalf("%d tokens held after the waiter returned; want 1, the test's own", got)
		}
		s.Release()
		<-s.Idle()
	}
}

// TestSemaphoreCloseWakesEveryWaiter blocks waiters, with and without a done
// channel, on a full semaphore, then closes it: each must return closed at
// once, and idle must close only when the held token comes back.
func TestSemaphoreCloseWakesEveryWaiter(t *testing.T) {
	s := New(1)
	if ok, _ := s.TryAcquire(); !ok {
		t.Fatal("tryAcquire on an empty semaphore failed")
	}
	const waiters = 8
	never := make(chan struct{})
	results := make(chan Result, waiters)
	for i := range waiters {
		done := never
		if i%2 == 0 {
			done = nil
		}
		go func() { results <- s.Wait(done) }()
	}
	waitForQueue(s, waiters)
	s.Close()
	for range waiters {
		if got := <-results; got != Closed {
			t.Errorf("wait = %v; want Closed", got)
		}
	}
	if got := s.Wait(nil); got != Closed {
		t.Errorf("wait after close = %v; want Closed", got)
	}
	select {
	case <-s.Idle():
		t.Fatal("idle closed while a token is held")
	default:
	}
	s.Release()
	select {
	case <-s.Idle():
	default:
		t.Error("idle not closed when the last token came back after close")
	}
}

// TestSemaphoreCancelRacesClose closes a waiter's done channel and the
// semaphore at the same time: the waiter returns stopped or closed, and idle
// closes when the held token comes back.
func TestSemaphoreCancelRacesClose(t *testing.T) {
	for range 200 {
		s := New(1)
		if ok, _ := s.TryAcquire(); !ok {
			t.Fatal("tryAcquire on an empty semaphore failed")
		}
		done := make(chan struct{})
		result := make(chan Result, 1)
		go func() { result <- s.Wait(done) }()
		waitForQueue(s, 1)
		close(done)
		s.Close()
		if got := <-result; got != Closed && got != Stopped {
			t.Fatalf("wait = %v; want Closed or Stopped", got)
		}
		s.Release()
		<-s.Idle()
	}
}

// TestSemaphoreCloseRacesRelease closes the semaphore while tokens come back
// and waiters queue: every waiter must return, and idle must close once all
// tokens are back.
func TestSemaphoreCloseRacesRelease(t *testing.T) {
	for range 200 {
		s := New(2)
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				if ok, _ := s.TryAcquire(); ok || s.Wait(nil) == Acquired {
					runtime.Gosched()
					s.Release()
				}
			})
		}
		runtime.Gosched()
		s.Close()
		wg.Wait()
		<-s.Idle() // a missed close would hang here
		if got := s.Held(); got != 0 {
			t.Fatalf("%d tokens held after every waiter returned; want 0", got)
		}
	}
}

func TestSemaphoreFillsOneCacheLine(t *testing.T) {
	if got := unsafe.Sizeof(Semaphore{}); got != 64 {
		t.Errorf("semaphore is %d bytes; want 64, one size class and one cache line", got)
	}
}
