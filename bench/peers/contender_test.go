package peers

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestContenders checks that every library is set up as its benchmarks
// claim: goTask runs each task once, run returns only after its task has
// returned, and a bounded kind never runs more than benchWorkers tasks at
// once.
func TestContenders(t *testing.T) {
	const tasks = 2000
	for _, c := range contenders {
		t.Run("kind="+c.kind+"/impl="+c.impl, func(t *testing.T) {
			e, err := c.make()
			if err != nil {
				t.Fatal(err)
			}

			var ran, running, peak atomic.Int64
			var wg sync.WaitGroup
			goTask, _ := e.bind(func() {
				now := running.Add(1)
				for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
				}
				ran.Add(1)
				running.Add(-1)
				wg.Done()
			})
			wg.Add(tasks)
			for range tasks {
				if err := goTask(); err != nil {
					t.Fatalf("go: %v", err)
				}
			}
			wg.Wait()
			if got := ran.Load(); got != tasks {
				t.Errorf("ran %d tasks; want %d", got, tasks)
			}
			if got := peak.Load(); c.kind != "virtual" && got > benchWorkers {
				t.Errorf("peak running = %d; want at most %d", got, benchWorkers)
			}

			finished := false
			if _, run := e.bind(func() { finished = true }); run != nil {
				if err := run(); err != nil {
					t.Fatalf("run: %v", err)
				}
				// Reading finished without a lock is the check: the race
				// detector flags it unless run waited for the task.
				if !finished {
					t.Error("run returned before its task did")
				}
			}

			if err := e.close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}
