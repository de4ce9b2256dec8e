package osthreads

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestMaxThreadsLeavesTheLimit reads the limit from many goroutines at once:
// each read sets the limit and puts it back, and two unserialised reads can
// put back each other's temporary value, which would leave it raised.
func TestMaxThreadsLeavesTheLimit(t *testing.T) {
	const limit = 5000
	old := debug.SetMaxThreads(limit)
	defer debug.SetMaxThreads(old)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 2000 {
				if got := MaxThreads(); got != limit {
					t.Errorf("MaxThreads() = %d; want %d", got, limit)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := debug.SetMaxThreads(limit); got != limit {
		t.Errorf("after the reads the limit is %d; want %d, as set", got, limit)
	}
}

// TestSamplerCountsLockedThreads locks goroutines to their threads and parks
// them, where no runtime metric sees their threads: Locked and the threads
// in use count each, and Retire takes it back.
func TestSamplerCountsLockedThreads(t *testing.T) {
	s := NewSampler()
	c := s.Read()
	total, inUse := c.Total, c.InUse
	if c.Runnable < 0 || total <= 0 || inUse <= 0 || inUse > total {
		t.Fatalf("Read() = %d total, %d in use; want 0 < in use ≤ total", total, inUse)
	}
	if got := Live(); got <= 0 {
		t.Errorf("Live() = %d; want above 0", got)
	}
	const n = 4
	before := Locked()
	var ready, exited sync.WaitGroup
	release := make(chan struct{})
	ready.Add(n)
	for range n {
		exited.Go(func() {
			LockThread()
			defer Retire()
			ready.Done()
			<-release
		})
	}
	ready.Wait()
	if got := Locked() - before; got != n {
		t.Errorf("with %d goroutines locked: Locked() grew by %d; want %d", n, got, n)
	}
	if c := s.Read(); c.InUse < n+runtime.GOMAXPROCS(0) && c.InUse != c.Total {
		t.Errorf("with %d goroutines locked: %d threads in use of %d; want at least %d (GOMAXPROCS and the locked ones), or all", n, c.InUse, c.Total, n+runtime.GOMAXPROCS(0))
	}
	close(release)
	exited.Wait()
	if got := Locked(); got != before {
		t.Errorf("after Retire: Locked() = %d; want %d", got, before)
	}
}

func TestHeadroomGrowsWithGOMAXPROCS(t *testing.T) {
	old := runtime.GOMAXPROCS(3)
	defer runtime.GOMAXPROCS(old)
	if got, want := Headroom(), 3+HeadroomFixed; got != want {
		t.Errorf("Headroom() at GOMAXPROCS 3 = %d; want %d", got, want)
	}
}
