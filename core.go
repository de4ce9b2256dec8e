package loom

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomrt/loom/internal/latency"
)

// core holds what every executor shares: identity, counters, the panic
// report, the admission gate and the machinery Shutdown uses to give up.
// Its methods live with their concern: counting and sampling in counters.go,
// running one task in taskrun.go, Shutdown and giving up in shutdown.go, the
// admission gate in gate.go.
type core struct {
	name          string
	kind          Kind
	workers       int
	queueCapacity int
	full          FullPolicy
	onPanic       func(name string, v any, stack []byte)
	labels        context.Context // carries the pprof labels of started goroutines
	epoch         time.Time
	sampleShift   uint // see sampleShift; 64 times every task
	untimed       bool // time no task: lets the benchmarks show what timing costs
	ignoreThreads bool // WithoutThreadWatch

	// Admission and completion write the first group of counters. Virtual
	// and ThreadPerTask write them at both ends of a task, and keep them on
	// one cache line so that a task ending on another core moves one line,
	// not several. A pool's workers count in their own tallies and Limit's
	// tasks in its semaphore, so their submitters keep this line to
	// themselves.
	_         [64]byte
	gate      gate
	submitted atomic.Uint64
	rejected  atomic.Uint64
	completed atomic.Uint64 // Virtual's and ThreadPerTask's
	_         [64]byte
	peak      atomic.Int64
	panicked  atomic.Uint64
	abandoned atomic.Uint64
	expired   atomic.Uint64
	// rejectedByWatch counts the refusals of a tripped ThreadWatch, also
	// counted in rejected.
	rejectedByWatch atomic.Uint64
	_               [64]byte
	tallies         []tally // a pool's, one per worker; nil for other executors

	// onAbandon, if not nil, is called once Shutdown has given up and set
	// abandoning, to wake what waits without watching stop.
	onAbandon func()

	// counts returns the tasks running and queued now and the tasks
	// completed, from whatever the executor keeps. queued must err on the
	// high side while tasks move: Shutdown waits for it to reach zero.
	counts func() (running, queued int64, completed uint64)

	queueWait latency.Histogram
	runTime   latency.Histogram

	// stop is cancelled, with cause ErrAbandoned, when Shutdown gives up
	// waiting; every task's context ends with it.
	stop       context.Context
	cancel     context.CancelCauseFunc
	abandoning atomic.Bool
	// cancels holds the cancel functions of the running tasks whose submit
	// context was cancellable, for Shutdown to call when it gives up.
	cancels [cancelShards]cancelList

	closing chan struct{} // closed when Shutdown begins: wakes callers waiting for room

	beginOnce   sync.Once
	abandonOnce sync.Once
	abandonErr  error
}

func (c *core) init(kind Kind, cfg config, workers, queueCapacity int) {
	c.name = cfg.name
	c.kind = kind
	c.workers = workers
	c.queueCapacity = queueCapacity
	c.full = cfg.full
	c.ignoreThreads = cfg.ignoreThreads
	c.onPanic = cfg.onPanic
	if c.onPanic == nil {
		logger := cfg.logger
		c.onPanic = func(name string, v any, stack []byte) {
			logger.Error("loom: task panicked", "executor", name, "kind", kind,
				"panic", fmt.Sprint(v), "stack", string(stack))
		}
	}
	c.labels = pprof.WithLabels(context.Background(), pprof.Labels("executor", cfg.name, "kind", string(kind)))
	c.epoch = time.Now()
	c.sampleShift = sampleShift
	c.stop, c.cancel = context.WithCancelCause(context.Background())
	for i := range c.cancels {
		c.cancels[i].init()
	}
	c.gate.idle = make(chan struct{})
	c.closing = make(chan struct{})
}

// refuses reports whether a tripped ThreadWatch refuses a new task, and
// counts the refusal. While no watch is tripped it is one atomic load.
func (c *core) refuses() bool {
	if threadRefusals.tripped.Load() == 0 {
		return false // inlined into Go and Run: the rest is not
	}
	return c.refusesTripped()
}

// refusesTripped is kept out of line so that refuses inlines.
//
//go:noinline
func (c *core) refusesTripped() bool {
	if !threadRefusals.refuse(c.name, c.ignoreThreads) {
		return false
	}
	c.rejected.Add(1)
	c.rejectedByWatch.Add(1)
	return true
}
