package sharding

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// epoch is the origin of the lease deadlines: they are read on the
// monotonic clock, which wall-clock steps do not move.
var epoch = time.Now()

// leaseClock is a shard's lease as its entities see it: until when, by
// this node's clock, the owner trusts it, and whether it was lost. Every
// message an entity handles is checked against it.
type leaseClock struct {
	token    uint64       // the revision of the write that took the lease
	deadline atomic.Int64 // nanoseconds since epoch
	lost     atomic.Bool
	ctx      context.Context // ends when the lease is lost
	cancel   context.CancelFunc
}

func newLeaseClock(token uint64, sent time.Time, valid time.Duration) *leaseClock {
	l := &leaseClock{token: token}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.extend(sent, valid)
	return l
}

// extend trusts the lease until valid past sent, when a write of it was
// sent; a lost lease stays lost.
func (l *leaseClock) extend(sent time.Time, valid time.Duration) {
	d := int64(sent.Sub(epoch) + valid)
	for {
		old := l.deadline.Load()
		if d <= old || l.deadline.CompareAndSwap(old, d) {
			return
		}
	}
}

// lose marks the lease lost: it lapsed, or another node wrote it.
func (l *leaseClock) lose() {
	l.lost.Store(true)
	l.cancel()
}

// left returns how long the lease is still trusted; 0 once lost or past.
func (l *leaseClock) left() time.Duration {
	if l.lost.Load() {
		return 0
	}
	return max(0, time.Duration(l.deadline.Load())-time.Since(epoch))
}

// held reports whether the lease is still trusted.
func (l *leaseClock) held() bool { return l.left() > 0 }

// bound returns a context of parent that also ends when the lease is lost
// or its deadline passes; the deadline moves with each renewal.
func (l *leaseClock) bound(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	stopLost := context.AfterFunc(l.ctx, cancel)
	left := l.left()
	if left <= 0 {
		cancel()
		return ctx, func() { stopLost(); cancel() }
	}
	var mu sync.Mutex
	var t *time.Timer
	mu.Lock()
	t = time.AfterFunc(left, func() {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if left := l.left(); left > 0 {
			t.Reset(left)
			return
		}
		cancel()
	})
	mu.Unlock()
	return ctx, func() {
		mu.Lock()
		t.Stop()
		mu.Unlock()
		stopLost()
		cancel()
	}
}

// tokenKey is the context key of the fencing token.
type tokenKey struct{}

// FencingToken returns the fencing token in the context that Persistent's
// Load and Save receive: the revision of the lease write by which this
// node took the entity's shard. A later owner's token is greater, so a
// store that keeps the greatest token it has seen for an entity, and
// refuses a write carrying a smaller one, refuses a late Save of an
// activation whose shard has moved since. ok is false for any other
// context.
func FencingToken(ctx context.Context) (token uint64, ok bool) {
	token, ok = ctx.Value(tokenKey{}).(uint64)
	return token, ok
}
