package loom

import (
	"sync"
	"sync/atomic"
)

// idleStack lists the parked workers of a pool, the most recently parked on
// top: its cache is the warmest. Once closed it takes no more workers.
type idleStack struct {
	mu      sync.Mutex
	workers []*worker
	closed  bool
	handed  uint64 // tasks handed straight to a worker popped by take
	// parked is 1 while workers is not empty, for a look without the lock.
	// It is written only when that changes: an atomic write costs as much
	// as the rest of a push, and a pool that is not saturated keeps some
	// workers parked all the time.
	parked atomic.Int32
	// busy counts the workers with a task (see worker.busy), and peak is
	// where its highest value goes (the pool's PeakRunning). Counting here,
	// under the lock taken anyway when a worker parks or is handed a task,
	// costs a pool that is not saturated no atomic operation per task.
	busy int64
	peak *atomic.Int64
	// submitted is the pool's count of tasks sent to its queue, raised by
	// each submitter after its send (see pool.queued).
	submitted *atomic.Uint64
}

// push lists w as parked, unless the stack is closed (ok false) or a task
// is waiting in queue: then it takes that task into w's slot and leaves w
// unlisted (listed false).
//
// Listing w and then reading submitted, before looking at the queue, is the
// worker's side of the Dekker pair described at pool.queued. When the stack
// was empty, listing w writes parked; when it was not, parked was set by a
// push that happened before ours (through the lock), and stays set until a
// pop empties the stack, which pops w too. A submitted of 0 means that no
// task was ever sent to the queue, and that any sent from now on comes after
// this read in the total order, so its submitter sees w: the receive is
// skipped, which saves a pool that never queues a channel operation per
// park.
//
// The queue is looked at under the lock, so that nobody pops w in between:
// a worker popped after taking a task itself would hold two, the second
// waiting behind the first where Shutdown cannot count it and Pool(1)'s
// order does not hold. The queue closes only after the stack, so under the
// lock, with the stack open, a receive never finds it closed.
func (s *idleStack) push(w *worker, queue <-chan job) (listed, ok bool) {
	s.mu.Lock()
	if w.busy {
		w.busy = false
		s.busy--
	}
	if s.closed {
		s.mu.Unlock()
		return false, false
	}
	s.workers = append(s.workers, w)
	if len(s.workers) == 1 {
		s.parked.Store(1)
	}
	if s.submitted.Load() != 0 {
		select {
		case w.slot = <-queue:
			s.popLocked() // w, on top
			s.workingLocked(w)
			s.mu.Unlock()
			return false, true
		default:
		}
	}
	s.mu.Unlock()
	return true, true
}

// any reports whether a worker is parked, without the lock.
func (s *idleStack) any() bool { return s.parked.Load() != 0 }

// pop takes the worker on top, or returns nil if none is parked.
func (s *idleStack) pop() *worker {
	s.mu.Lock()
	w := s.popLocked()
	s.mu.Unlock()
	return w
}

// take pops the worker on top for a task handed to it, and counts that task
// as submitted: it returns the worker, or nil if none is parked, and the
// task's number among those handed over.
func (s *idleStack) take() (*worker, uint64) {
	s.mu.Lock()
	w := s.popLocked()
	handed := s.handed
	if w != nil {
		s.handed++
		// w is parked and reads its flag only after the send that
		// follows, so it is ours to set.
		s.workingLocked(w)
	}
	s.mu.Unlock()
	return w, handed
}

// working counts w as busy: it took a task without the stack's help.
func (s *idleStack) working(w *worker) {
	s.mu.Lock()
	s.workingLocked(w)
	s.mu.Unlock()
}

func (s *idleStack) workingLocked(w *worker) {
	w.busy = true
	s.busy++
	if s.busy > s.peak.Load() {
		s.peak.Store(s.busy)
	}
}

func (s *idleStack) popLocked() *worker {
	n := len(s.workers)
	if n == 0 {
		return nil
	}
	w := s.workers[n-1]
	s.workers[n-1] = nil
	s.workers = s.workers[:n-1]
	if n == 1 {
		s.parked.Store(0)
	}
	return w
}

// handedCount returns how many tasks take has counted.
func (s *idleStack) handedCount() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handed
}

// close stops the stack and returns the workers parked on it.
func (s *idleStack) close() []*worker {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	ws := s.workers
	s.workers = nil
	s.parked.Store(0)
	return ws
}
