package loom

import (
	"sync"
	"sync/atomic"
)

// gateClosed marks a closed gate in its state word.
const gateClosed = 1 << 63

// gate counts the callers and tasks inside an executor, refuses new ones once
// closed, and closes idle when the last one leaves after that.
type gate struct {
	state atomic.Uint64 // gateClosed | count
	once  sync.Once
	idle  chan struct{}
}

// enter reports whether the caller may come in, and how many are inside
// with it; a caller let in must call exit later.
func (g *gate) enter() (int64, bool) {
	n := g.state.Add(1)
	if n&gateClosed != 0 {
		g.exit()
		return 0, false
	}
	return int64(n), true
}

// inside returns how many callers are inside.
func (g *gate) inside() int64 {
	return int64(g.state.Load() &^ gateClosed)
}

func (g *gate) exit() {
	if g.state.Add(^uint64(0)) == gateClosed {
		g.once.Do(func() { close(g.idle) })
	}
}

func (g *gate) close() {
	if old := g.state.Or(gateClosed); old&^gateClosed == 0 {
		g.once.Do(func() { close(g.idle) })
	}
}
