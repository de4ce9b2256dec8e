package loom

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/loomrt/loom/internal/osthreads"
	"github.com/loomrt/loom/internal/semaphore"
)

// Blocking runs fn on the caller's goroutine, and returns nil once fn has
// returned, if fewer calls than the process-wide blocking bound are running
// fn through Blocking; otherwise it waits its turn, first come first served.
// Use it around what holds an OS thread while it waits: a cgo call, a raw
// system call, a driver that blocks in C. Each such call pins a thread, and
// past the runtime's thread limit (debug.SetMaxThreads, 10,000 by default)
// the process dies with "fatal error: thread exhaustion", which no recover
// catches.
//
// Without calling fn, Blocking returns ctx's error if ctx ends before fn's
// turn comes (or had ended already), and ErrRejected if the bound is full and
// SetBlockingLimit chose FullReject. The default bound is half the thread limit
// read when Blocking is first called; SetBlockingLimit changes it. A panic in
// fn frees its place and goes on up the caller's stack. Blocking is safe for
// concurrent use.
func Blocking(ctx context.Context, fn func()) error {
	return currentBlocking().do(ctx, fn)
}

// SetBlockingLimit sets the bound of Blocking: at most n calls run fn at
// once; 0 means the default, half the current thread limit. full says what a
// call does when n are running: FullWait (the default) for its turn or its
// context's end, or FullReject at once with ErrRejected. Calls already running or
// waiting stay under the bound they began with, so set it at start-up. It
// panics if n is negative or full is neither FullWait nor FullReject.
func SetBlockingLimit(n int, full FullPolicy) {
	if n < 0 {
		panic(fmt.Sprintf("loom: SetBlockingLimit(%d): the bound must not be negative", n))
	}
	if full != FullReject && full != FullWait {
		panic(fmt.Sprintf("loom: SetBlockingLimit: policy %v must be FullReject or FullWait", full))
	}
	if n == 0 {
		n = defaultBlockingLimit()
	}
	blockingMu.Lock()
	defer blockingMu.Unlock()
	blockingNow.Store(newBlockingBound(n, full))
}

// BlockingLimit returns the bound of Blocking: how many calls may run fn at
// once, and how many do now.
func BlockingLimit() (limit, running int) {
	b := currentBlocking()
	return b.limit, b.slots.Held()
}

// blockingBound is one setting of Blocking's bound.
type blockingBound struct {
	limit int
	full  FullPolicy
	slots *semaphore.Semaphore
}

var (
	blockingMu  sync.Mutex // serialises setting the bound
	blockingNow atomic.Pointer[blockingBound]
)

func newBlockingBound(n int, full FullPolicy) *blockingBound {
	return &blockingBound{limit: n, full: full, slots: semaphore.New(n)}
}

// defaultBlockingLimit is half the thread limit: the other half stays for the
// threads that run Go code, the runtime's own, and the blocking calls that
// do not go through Blocking.
func defaultBlockingLimit() int {
	return max(1, osthreads.MaxThreads()/2)
}

func currentBlocking() *blockingBound {
	if b := blockingNow.Load(); b != nil {
		return b
	}
	blockingMu.Lock()
	defer blockingMu.Unlock()
	if b := blockingNow.Load(); b != nil {
		return b
	}
	b := newBlockingBound(defaultBlockingLimit(), FullWait)
	blockingNow.Store(b)
	return b
}

func (b *blockingBound) do(ctx context.Context, fn func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ok, _ := b.slots.TryAcquire(); !ok {
		if b.full == FullReject {
			return ErrRejected
		}
		if b.slots.Wait(ctx.Done()) != semaphore.Acquired {
			return ctx.Err()
		}
	}
	defer b.slots.Release()
	fn()
	return nil
}
