package tasktest

import (
	"testing"
	"time"

	"github.com/loomrt/loom/task"
)

// Settle waits until n job loops of s wait on c's timers and no run is under
// way: after moving c, the Scheduler has done all it will until c moves
// again. It polls, and fails t only after 10 s, which only a hang reaches.
func Settle(t testing.TB, c *Clock, s *task.Scheduler, n int) {
	t.Helper()
	WaitFor(t, "the scheduler to settle", func() bool {
		if c.Pending() != n {
			return false
		}
		for _, j := range s.Jobs() {
			if j.Running > 0 {
				return false
			}
		}
		return true
	})
}

// WaitFor polls cond every millisecond until it holds; it fails t, naming
// what, after 10 s.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
