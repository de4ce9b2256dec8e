package threadbudget

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
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

// reading returns a read func that reports the given counts.
func reading(inUse, runnable, procs int) func() osthreads.Counts {
	return func() osthreads.Counts {
		return osthreads.Counts{Total: inUse, InUse: inUse, Runnable: runnable, Procs: procs}
	}
}

// TestSetAdmitsTheHeadroom sets the budget from readings and takes until it
// refuses: exactly mark − in use − 2 × runnable − GOMAXPROCS tasks, none
// when the counts are at or past the mark.
func TestSetAdmitsTheHeadroom(t *testing.T) {
	for _, tc := range []struct{ mark, inUse, runnable, procs, want int }{
		{20, 3, 2, 0, 13},
		{20, 3, 0, 0, 17},
		{20, 0, 0, 0, 20},
		{20, 3, 2, 2, 11},
		{20, 0, 0, 4, 16},
		{20, 20, 0, 0, 0},
		{20, 4, 8, 0, 0},
		{20, 4, 6, 4, 0},
		{20, 22, 3, 2, 0},
	} {
		b := New()
		b.Set(tc.mark, reading(tc.inUse, tc.runnable, tc.procs))
		if got := b.Left(); got != int64(tc.want) {
			t.Errorf("Set(%d) reading %d in use, %d runnable, GOMAXPROCS %d: Left() = %d; want %d", tc.mark, tc.inUse, tc.runnable, tc.procs, got, tc.want)
		}
		if got := takes(b, 100); got != tc.want {
			t.Errorf("Set(%d) reading %d in use, %d runnable, GOMAXPROCS %d: %d admitted; want %d", tc.mark, tc.inUse, tc.runnable, tc.procs, got, tc.want)
		}
	}
}

// TestSetChargesTasksAdmittedWhileReading admits tasks while the counts are
// read, before their goroutines exist for the reading to see: the budget the
// reading sets is the allowance less those tasks, so the threads they may
// block stay under the mark.
func TestSetChargesTasksAdmittedWhileReading(t *testing.T) {
	for _, during := range []int{1, 7, 30} {
		b := New()
		b.Set(100, reading(0, 0, 0))
		b.Set(50, func() osthreads.Counts {
			if got := takes(b, during); got != during {
				t.Errorf("%d admitted while reading; want %d", got, during)
			}
			return reading(10, 0, 0)()
		})
		if got, want := b.Left(), int64(50-10-during); got != want {
			t.Errorf("%d tasks admitted while reading: Left() = %d; want %d", during, got, want)
		}
	}
	// Unbounded before the reading: the tasks admitted while reading are
	// charged just the same.
	b := New()
	b.Set(50, func() osthreads.Counts {
		takes(b, 5)
		return reading(10, 0, 0)()
	})
	if got := b.Left(); got != 35 {
		t.Errorf("5 tasks admitted while the first reading ran: Left() = %d; want 35", got)
	}
}

// TestRefillChargesTasksAdmittedWhileReading is the same for a reading taken
// by an admission that found the budget spent, and checks that refused takes
// before the reading are not charged.
func TestRefillChargesTasksAdmittedWhileReading(t *testing.T) {
	b := New()
	b.Set(1<<20, reading(0, 0, 0))
	b.left.Store(0)
	for range 3 {
		if b.Take() {
			t.Fatal("Take on a spent budget admitted a task")
		}
	}
	b.mu.Lock()
	b.last = time.Time{}
	b.sampler = osthreads.NewSampler()
	b.mu.Unlock()
	if !b.Refill() {
		t.Fatal("Refill of a spent budget did not read the counts")
	}
	c := osthreads.NewSampler().Read()
	want := int64(1<<20 - c.InUse - 2*c.Runnable - c.Procs)
	// The counts move a little between Refill's reading and this one.
	if got := b.Left(); got < want-64 || got > want+64 {
		t.Errorf("after 3 refused takes and a Refill: Left() = %d; want about %d (refused takes are not charged)", got, want)
	}
}

// TestTakeNeverOverspends has many goroutines take at once from a budget of
// 1,000: exactly 1,000 are admitted.
func TestTakeNeverOverspends(t *testing.T) {
	b := New()
	b.Set(1000, reading(0, 0, 0))
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
	b.Set(100, reading(0, 0, 0))
	b.Hold()
	if b.Take() {
		t.Error("Take on a held budget admitted a task")
	}
	b.Set(100, reading(0, 0, 0))
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
	b.Set(100, reading(0, 0, 0))
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
	b.Set(1<<20, reading(0, 0, 0))
	b.left.Store(0)
	b.mu.Lock()
	b.last = time.Time{} // Set's own reading was just now
	b.mu.Unlock()
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
