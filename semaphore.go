package loom

import (
	"sync"
	"sync/atomic"
)

// semaphore counts held tokens, at most size of them. Taking and returning a
// free token is one compare-and-swap and one add; a channel is touched only
// when someone waits. Once closed, it hands out no more tokens, and idle is
// closed when the last token comes back.
//
// It does not queue its waiters in order: a caller that arrives while a
// woken waiter is on its way may take the token first.
//
// Its fields fill one 64-byte size class, so that an allocated semaphore
// sits on one cache line: a token taken on one core and returned on another
// moves one line.
type semaphore struct {
	state     atomic.Uint64 // closedBit | tokens held
	waiting   atomic.Int64  // callers inside wait
	completed atomic.Uint64 // tasks that held a token and returned, for Stats
	size      uint64
	room      chan struct{} // capacity 1: a hint that a token may be free
	idle      chan struct{}
	idleOnce  sync.Once
	_         [4]byte
}

// closedBit marks a closed semaphore or gate in its state word.
const closedBit = 1 << 63

func newSemaphore(size int) *semaphore {
	return &semaphore{size: uint64(size), room: make(chan struct{}, 1), idle: make(chan struct{})}
}

// tryAcquire takes a token if one is free and the semaphore is open.
func (s *semaphore) tryAcquire() (acquired, closed bool) {
	for {
		old := s.state.Load()
		if old&closedBit != 0 {
			return false, true
		}
		if old >= s.size {
			return false, false
		}
		if s.state.CompareAndSwap(old, old+1) {
			return true, false
		}
	}
}

// waitResult says how wait ended.
type waitResult int

const (
	acquired waitResult = iota
	closed              // the semaphore was closed
	stopped             // one of the channels given to wait was closed
)

// wait takes a token, waiting for one until the semaphore is closed, done is
// closed (a nil done never is) or stop, if not nil, is set; whoever sets stop
// must then call hint. Without a done channel, waiting is a plain channel
// receive, which costs much less than a select.
func (s *semaphore) wait(done <-chan struct{}, stop *atomic.Bool) waitResult {
	// Counting ourselves as waiting before trying again pairs with release,
	// which returns its token before looking for waiters: either we see the
	// token, or release sees us and leaves a hint in room. close and stop
	// work the same way: the flag first, then a hint.
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	for {
		ok, isClosed := s.tryAcquire()
		if ok {
			// One hint may stand for several returned tokens: pass it on.
			if s.waiting.Load() > 1 && s.state.Load() < s.size {
				s.hint()
			}
			return acquired
		}
		if isClosed {
			s.hint() // wake the next waiter, which will find it closed too
			return closed
		}
		if stop != nil && stop.Load() {
			s.hint()
			return stopped
		}
		if done == nil {
			<-s.room
			continue
		}
		select {
		case <-s.room:
		case <-done:
			return stopped
		}
	}
}

// release returns a token.
func (s *semaphore) release() {
	if s.state.Add(^uint64(0)) == closedBit {
		s.idleOnce.Do(func() { close(s.idle) })
	}
	if s.waiting.Load() > 0 {
		s.hint()
	}
}

func (s *semaphore) hint() {
	select {
	case s.room <- struct{}{}:
	default:
	}
}

// close stops handing out tokens and wakes the waiters, each of which wakes
// the next.
func (s *semaphore) close() {
	if old := s.state.Or(closedBit); old&^closedBit == 0 {
		s.idleOnce.Do(func() { close(s.idle) })
	}
	s.hint()
}

// held returns the number of tokens held.
func (s *semaphore) held() int {
	return int(s.state.Load() &^ closedBit)
}
