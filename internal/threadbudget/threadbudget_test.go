package threadbudget

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// takes takes from b until it refuses, at most limit times, and returns how
// many it took.
func takes(b *Budget, limit int) int {
	n := 0
	for n < limit && b.Take() {
		n++
	}
	return n
}

func TestNewBudgetIsUnbounded(t *testing.T) {
	b := New()
	if got := takes(b, 10000); got != 10000 {
		t.Errorf("an unbounded budget admitted %d of 10000", got)
	}
	if b.Refill() {
		t.Error("Refill of an unbounded budget read the counts; want nothing to refill")
	}
}

// TestSetAdmitsTheHeadroom sets the budget from readings and takes until it
// refuses: exactly mark − in use − runnable tasks, none when the counts are
// at or past the mark.
func TestSetAdmitsTheHeadroom(t *testing.T) {
	for _, tc := range []struct{ mark, inUse, runnable, want int }{
		{10, 3, 2, 5},
		{10, 3, 0, 7},
		{10, 0, 0, 10},
		{10, 10, 0, 0},
		{10, 4, 6, 0},
		{10, 12, 3, 0},
	} {
		b := New()
		b.Set(tc.mark, tc.inUse, tc.runnable)
		if got := b.Left(); got != int64(tc.want) {
			t.Errorf("Set(%d, %d, %d): Left() = %d; want %d", tc.mark, tc.inUse, tc.runnable, got, tc.want)
		}
		if got := takes(b, 100); got != tc.want {
			t.Errorf("Set(%d, %d, %d): %d admitted; want %d", tc.mark, tc.inUse, tc.runnable, got, tc.want)
		}
	}
}

// TestTakeNeverOverspends has many goroutines take at once from a budget of
// 1,000: exactly 1,000 are admitted.
func TestTakeNeverOverspends(t *testing.T) {
	b := New()
	b.Set(1000, 0, 0)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				if b.Take() {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := admitted.Load(); got != 1000 {
		t.Errorf("%d admitted by 8 × 500 takes; want the budget's 1000", got)
	}
}

// TestHoldRefusesUntilRelease holds a budget: nothing is admitted, whatever
// a reading or Unbound says, until Release and a new reading.
func TestHoldRefusesUntilRelease(t *testing.T) {
	b := New()
	b.Set(100, 0, 0)
	b.Hold()
	if b.Take() {
		t.Error("Take on a held budget admitted a task")
	}
	b.Set(100, 0, 0)
	if b.Take() {
		t.Error("Take after a reading on a held budget admitted a task")
	}
	b.Unbound()
	if b.Take() {
		t.Error("Take after Unbound on a held budget admitted a task")
	}
	if b.Refill() {
		t.Error("Refill of a held budget read the counts")
	}
	b.Release()
	b.Set(100, 0, 0)
	if got := takes(b, 1000); got != 100 {
		t.Errorf("after Release and a reading: %d admitted; want 100", got)
	}
	b.Unbound()
	if got := b.Left(); got != math.MaxInt64 {
		t.Errorf("after Unbound: Left() = %d; want unbounded", got)
	}
}

// TestRefillReadsAtMostOnceInAWhile spends a budget whose mark is far above
// the process's threads: Refill reads the counts and admits again, but a
// second Refill less than MinRefill later does not read.
func TestRefillReadsAtMostOnceInAWhile(t *testing.T) {
	b := New()
	b.Set(1<<20, 0, 0)
	b.left.Store(0)
	if b.Take() {
		t.Fatal("Take on a spent budget admitted a task")
	}
	if !b.Refill() {
		t.Fatal("Refill of a spent budget did not read the counts")
	}
	left := b.Left()
	if left <= 1<<19 || left >= 1<<20 {
		t.Errorf("after Refill with a mark of %d: Left() = %d; want the mark less this process's few threads", 1<<20, left)
	}
	b.left.Store(0)
	set := time.Now()
	b.mu.Lock()
	b.last = set
	b.mu.Unlock()
	refilled := b.Refill()
	switch took := time.Since(set); {
	case refilled && took < MinRefill:
		t.Errorf("a Refill %v after the last read the counts again; want none within %v", took, MinRefill)
	case refilled:
		t.Logf("the machine took %v to call Refill: nothing to check", took)
	case b.Take():
		t.Error("Take after a Refill that did not read admitted a task")
	}
	time.Sleep(2 * MinRefill)
	if !b.Refill() || !b.Take() {
		t.Errorf("Refill %v after the last did not admit again", 2*MinRefill)
	}
}
