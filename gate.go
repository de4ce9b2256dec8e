package loom

import (
	"sync"
	"sync/atomic"
)

// gate counts the callers and tasks inside an executor, refuses new ones once
// closed, and closes idle when the last one leaves after that.
type gate struct {
	state atomic.Uint64 // closedBit | count
	once  sync.Once
	idle  chan struct{}
}

// enter reports whether the caller may come in, and how many are inside
// with it; a caller let in must call exit later.
func (g *gate) enter() (int64, bool) {
	n := g.state.Add(1)
	if n&closedBit != 0 {
		g.exit()
		return 0, false
	}
	return int64(n), true
}

// inside returns how many callers are inside.
func (g *gate) inside() int64 {
	return int64(g.state.Load() &^ closedBit)
}

func (g *gate) exit() {
	if g.state.Add(^uint64(0)) == closedBit {
		g.once.Do(func() { close(g.idle) })
	}
}

func (g *gate) close() {
	if old := g.state.Or(closedBit); old&^closedBit == 0 {
		g.once.Do(func() { close(g.idle) })
	}
}
