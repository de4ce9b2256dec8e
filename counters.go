package loom

import (
	"sync/atomic"
	"time"
)

// sampleShift selects which tasks are timed for the QueueWait and RunTime
// percentiles: one in 1<<(64-sampleShift) = 32. Reading the clock three
// times per task costs more than the rest of Limit.Run or Virtual.Run (see
// BenchmarkStatsSampling); one task in 32 costs a few nanoseconds and still
// gives a p99 from a hundred samples after a few thousand tasks.
const sampleShift = 59

// sampleSpread is 2^64 divided by the golden ratio. Task number n is timed
// when the top bits of n*sampleSpread are zero: a Weyl sequence, which picks
// one task in 32 without a random number and without lining up with any
// period in the workload (alternating fast and slow tasks are both sampled).
const sampleSpread = 0x9E3779B97F4A7C15

// stamp returns the admission time of task number n if it is timed, or 0.
func (c *core) stamp(n uint64) int64 {
	if c.untimed || (n*sampleSpread)>>c.sampleShift != 0 {
		return 0
	}
	return int64(time.Since(c.epoch)) + 1
}

// started records the queue wait of a timed task admitted at admitted and
// returns the time it starts.
func (c *core) started(admitted int64) time.Duration {
	start := time.Since(c.epoch)
	c.queueWait.Record(start - time.Duration(admitted-1))
	return start
}

// ended records the run time of a task that started at start, if it is
// timed, and counts it as completed in done.
func (c *core) ended(admitted int64, start time.Duration, done *atomic.Uint64) {
	if admitted != 0 {
		c.timed(start)
	}
	done.Add(1)
}

// timed records the run time of a timed task that started at start.
func (c *core) timed(start time.Duration) {
	c.runTime.Record(time.Since(c.epoch) - start)
}

// observe raises PeakRunning to r if r is higher.
func (c *core) observe(r int64) {
	for p := c.peak.Load(); r > p && !c.peak.CompareAndSwap(p, r); p = c.peak.Load() {
	}
}

// A tally is where one pool worker counts its tasks, on a cache line of its
// own: shared counters written by every worker would bounce between cores on
// every task, and that costs more than the rest of the hand-off.
type tally struct {
	taken     atomic.Uint64 // jobs the worker took from the queue
	completed atomic.Uint64 // of which it ran to the end
	_         [112]byte
}

// stats returns a snapshot of the counters, settled (see Stats.settle).
func (c *core) stats() Stats {
	s := c.snapshot()
	s.settle()
	return s
}

// snapshot reads the counters, unsettled: a pool adds its hand-offs to
// Submitted first.
func (c *core) snapshot() Stats {
	running, queued, completed := c.counts()
	return Stats{
		Name:          c.name,
		Kind:          c.kind,
		Workers:       c.workers,
		QueueCapacity: c.queueCapacity,
		Submitted:     c.submitted.Load(),
		Completed:     completed,
		Rejected:      c.rejected.Load(),
		Panicked:      c.panicked.Load(),
		Abandoned:     c.abandoned.Load(),
		Expired:       c.expired.Load(),
		Running:       int(max(running, 0)),
		Queued:        int(max(queued, 0)),
		PeakRunning:   int(c.peak.Load()),
		QueueWait:     Percentiles{P50: c.queueWait.Quantile(0.50), P99: c.queueWait.Quantile(0.99)},
		RunTime:       Percentiles{P50: c.runTime.Quantile(0.50), P99: c.runTime.Quantile(0.99)},

		RejectedByWatch: c.rejectedByWatch.Load(),
		Threads:         WatchedThreads(),
	}
}

// settle raises Submitted to what the other counters prove was submitted.
// They are read one after another, and a submitter counts its task only
// once it is queued, by which time a worker may have run it: without this a
// snapshot could show more tasks completed than submitted.
func (s *Stats) settle() {
	s.Submitted = max(s.Submitted, s.Completed+s.Abandoned+s.Expired+uint64(s.Running))
}
