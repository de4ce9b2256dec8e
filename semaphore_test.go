package loom

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestSemaphoreNeverOverfillsNorStalls has many goroutines take and return
// tokens, half of them waiting when none is free: the bound must hold, and
// every waiter must get through (a lost wake-up would hang the test).
func TestSemaphoreNeverOverfillsNorStalls(t *testing.T) {
	for _, size := range []int{1, 2, 5} {
		s := newSemaphore(size)
		var held, peak, done atomic.Int64
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				for j := range 300 {
					if ok, _ := s.tryAcquire(); !ok {
						if (i+j)%2 == 0 {
							continue // gave up, as Reject does
						}
						if got := s.wait(nil, nil); got != acquired {
							t.Errorf("wait = %v; want acquired", got)
							return
						}
					}
					h := held.Add(1)
					for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
					}
					held.Add(-1)
					s.release()
					done.Add(1)
				}
			})
		}
		wg.Wait()
		if got := peak.Load(); got > int64(size) {
			t.Errorf("size %d: %d tokens held at once", size, got)
		}
		if s.held() != 0 {
			t.Errorf("size %d: %d tokens still held; want 0", size, s.held())
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

// TestSemaphoreWakesEveryWaiter blocks several waiters on a full semaphore,
// then closes it (or sets their stop flag): each must return, woken by the
// one before it.
func TestSemaphoreWakesEveryWaiter(t *testing.T) {
	for _, how := range []string{"close", "stop"} {
		t.Run(how, func(t *testing.T) {
			s := newSemaphore(1)
			if ok, _ := s.tryAcquire(); !ok {
				t.Fatal("tryAcquire on an empty semaphore failed")
			}
			var stop atomic.Bool
			const waiters = 8
			results := make(chan waitResult, waiters)
			for range waiters {
				go func() { results <- s.wait(nil, &stop) }()
			}
			for s.waiting.Load() != waiters {
				runtime.Gosched()
			}
			want := closed
			if how == "close" {
				s.close()
			} else {
				want = stopped
				stop.Store(true)
				s.hint()
			}
			for range waiters {
				if got := <-results; got != want {
					t.Errorf("wait = %v; want %v", got, want)
				}
			}
		})
	}
}

func TestSemaphoreFillsOneCacheLine(t *testing.T) {
	if got := unsafe.Sizeof(semaphore{}); got != 64 {
		t.Errorf("semaphore is %d bytes; want 64, one size class and one cache line", got)
	}
}
