// Package semaphore is the counting semaphore behind loom's Limit executor:
// at most size tokens held, and the callers that wait for one queued in
// arrival order.
//
// Taking and returning a token while nobody waits is one compare-and-swap
// on the state word. Once a caller waits, the waitersBit in state makes the
// semaphore look full, so that a newcomer queues too instead of taking a
// token past the queue, and a returned token goes straight to the waiter at
// the head: it stays counted as held, and the waiter wakes up owning it.
// Each waiter has its own channel, so returning n tokens wakes n waiters at
// once. Arrival order costs some utilisation on a saturated CPU and stops
// starvation.
//
// Its fields fill one 64-byte size class, so that an allocated semaphore
// sits on one cache line: a token taken on one core and returned on another
// moves one line. The Completed counter sits on that line for the same
// reason: the executor counts a finished task where it returns its token.
package semaphore

import (
	"sync"
	"sync/atomic"
)

// A Semaphore counts held tokens, at most its size, and queues the callers
// that wait for one in arrival order. Once closed, it hands out no more
// tokens, its waiters return Closed, and Idle is closed when the last token
// comes back. It is safe for concurrent use; make one with New.
type Semaphore struct {
	state     atomic.Uint64 // closedBit | waitersBit | tokens held
	Completed atomic.Uint64 // kept by the caller: tasks that held a token and returned
	size      uint64
	idle      chan struct{}
	mu        sync.Mutex // guards the queue, and sets or clears waitersBit
	head      *waiter    // the next waiter to get a token
	tail      *waiter
	idleShut  atomic.Bool // idle has been closed
	_         [4]byte
}

const (
	// closedBit marks a closed semaphore in its state word.
	closedBit = 1 << 63
	// waitersBit marks a semaphore whose queue is not empty. It is set and
	// cleared under mu. While it is set, state is at least size, so that
	// TryAcquire fails without looking at it, and every token is held: a
	// caller queues only when none is free, and release then hands its
	// token on instead of returning it.
	waitersBit = 1 << 62
	heldMask   = waitersBit - 1
)

// New returns an open semaphore of size tokens, none held.
func New(size int) *Semaphore {
	return &Semaphore{size: uint64(size), idle: make(chan struct{})}
}

// A waiter is a caller queued in a semaphore. Waiters are recycled, each
// with its channel, so that waiting allocates nothing.
type waiter struct {
	prev, next *waiter
	queued     bool          // in the queue; guarded by the semaphore's mu
	result     Result        // set before the wake-up is sent
	wake       chan struct{} // capacity 1: receives one wake-up per wait
}

var waiters = sync.Pool{New: func() any { return &waiter{wake: make(chan struct{}, 1)} }}

// TryAcquire takes a token if one is free, nobody is queued for one and the
// semaphore is open.
func (s *Semaphore) TryAcquire() (acquired, closed bool) {
	for {
		old := s.state.Load()
		if old >= s.size { // full, or flagged closed or waited on
			return false, old&closedBit != 0
		}
		if s.state.CompareAndSwap(old, old+1) {
			return true, false
		}
	}
}

// Result says how Wait ended.
type Result int

const (
	Acquired Result = iota // the caller holds a token
	Closed                 // the semaphore was closed
	Stopped                // the done channel given to wait was closed
)

// Wait takes a token, queueing for one behind the callers already waiting,
// until the semaphore is closed or done is closed (a nil done never is).
// Without a done channel, waiting is a plain channel receive, which costs
// much less than a select.
func (s *Semaphore) Wait(done <-chan struct{}) Result {
	s.mu.Lock()
	for {
		old := s.state.Load()
		if old&closedBit != 0 {
			s.mu.Unlock()
			return Closed
		}
		if old < s.size {
			if s.state.CompareAndSwap(old, old+1) {
				s.mu.Unlock()
				return Acquired
			}
			continue
		}
		// Setting the flag by compare-and-swap, not by Or, makes sure no
		// token came back since old was read: a token returned after this
		// sees the flag and comes to the queue.
		if old&waitersBit != 0 || s.state.CompareAndSwap(old, old|waitersBit) {
			break
		}
	}
	w := waiters.Get().(*waiter)
	w.prev, w.next, w.queued = s.tail, nil, true
	if s.tail == nil {
		s.head = w
	} else {
		s.tail.next = w
	}
	s.tail = w
	s.mu.Unlock()

	if done == nil {
		<-w.wake
		return s.recycle(w)
	}
	select {
	case <-w.wake:
		r := s.recycle(w)
		if r != Acquired {
			return r
		}
		// done may have been closed before the token was handed over, and
		// select chose between two ready cases at random: a caller that
		// has stopped waiting passes the token on, whichever case won.
		select {
		case <-done:
			s.Release()
			return Stopped
		default:
			return Acquired
		}
	case <-done:
	}
	s.mu.Lock()
	if w.queued {
		s.unqueue(w)
		s.mu.Unlock()
		waiters.Put(w)
		return Stopped
	}
	s.mu.Unlock()
	// A token or the closing was handed to w as done was closed: the
	// wake-up is on its way. A token is passed on, not lost.
	<-w.wake
	r := s.recycle(w)
	if r == Acquired {
		s.Release()
		return Stopped
	}
	return r
}

// recycle returns what w was woken for, and puts w back in the pool.
func (s *Semaphore) recycle(w *waiter) Result {
	r := w.result
	waiters.Put(w)
	return r
}

// unqueue takes w out of the queue, and clears waitersBit if it was the last
// one. The caller holds mu.
func (s *Semaphore) unqueue(w *waiter) {
	if w.prev == nil {
		s.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		s.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	if s.head == nil {
		if s.state.And(^uint64(waitersBit)) == closedBit|waitersBit {
			s.shutIdle()
		}
	}
}

// Release returns a token, or hands it to the first waiter.
func (s *Semaphore) Release() {
	for {
		old := s.state.Load()
		if old&waitersBit != 0 {
			s.handOff()
			return
		}
		if s.state.CompareAndSwap(old, old-1) {
			if old-1 == closedBit {
				s.shutIdle()
			}
			return
		}
	}
}

// handOff gives the token being returned to the first waiter, which wakes up
// owning it: the token stays counted as held. If the queue emptied meanwhile,
// or close is on its way to wake it, the token is returned instead, under mu,
// so that no caller queues behind a token it then misses.
func (s *Semaphore) handOff() {
	s.mu.Lock()
	w := s.head
	if w == nil || s.state.Load()&closedBit != 0 {
		n := s.state.Add(^uint64(0))
		s.mu.Unlock()
		if n == closedBit {
			s.shutIdle()
		}
		return
	}
	s.unqueue(w)
	w.result = Acquired
	s.mu.Unlock()
	w.wake <- struct{}{}
}

// Close stops handing out tokens and wakes every waiter, which returns
// closed.
func (s *Semaphore) Close() {
	if old := s.state.Or(closedBit); old&^closedBit == 0 {
		s.shutIdle()
		return
	}
	s.mu.Lock()
	for s.head != nil {
		w := s.head
		s.unqueue(w)
		w.result = Closed
		w.wake <- struct{}{}
	}
	s.mu.Unlock()
}

func (s *Semaphore) shutIdle() {
	if s.idleShut.CompareAndSwap(false, true) {
		close(s.idle)
	}
}

// Idle returns a channel that is closed once the semaphore is closed and
// every token has come back.
func (s *Semaphore) Idle() <-chan struct{} { return s.idle }

// Waiting returns how many callers wait for a token.
func (s *Semaphore) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for w := s.head; w != nil; w = w.next {
		n++
	}
	return n
}

// Held returns the number of tokens held.
func (s *Semaphore) Held() int {
	return int(s.state.Load() & heldMask)
}
