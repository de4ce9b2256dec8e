package loom

import (
	"math"
	"time"
)

// vegas is the limit algorithm of the Adaptive executor: the congestion
// avoidance of TCP Vegas (L. Brakmo and L. Peterson, "TCP Vegas: End to End
// Congestion Avoidance on a Global Internet", IEEE JSAC 13(8), 1995), applied
// to concurrency as Netflix's concurrency-limits library does in VegasLimit.
//
// From the lowest latency seen lately (base, the latency of a task that
// waited for nothing) and a task's latency, the number of tasks waiting
// downstream is estimated as limit × (1 − base/latency). Few waiting: the
// limit grows; many: it shrinks; in between it holds, so that a few tasks
// always wait downstream and the resource behind the executor stays busy
// without a queue that grows.
//
// It keeps no clock: every call is given the time, so that tests drive it
// deterministically. It is not safe for concurrent use; the executor calls
// it under its lock.
type vegas struct {
	limit    float64
	min, max float64

	// base is the minimum latency of the current and the previous window,
	// so it forgets a minimum after one to two windows and follows a
	// resource that became slower. The first window lasts a second and each
	// next one twice as long, up to maxWindow: a limit that starts under
	// load first sees queued latencies as its base, and the probe at the
	// end of a short window corrects that within seconds.
	thisWindow, lastWindow time.Duration // 0: none seen in that window
	windowStart            time.Duration
	window, maxWindow      time.Duration

	// changed is when the limit last changed. A latency is judged only for
	// tasks that started after it, once per round trip as TCP Vegas does:
	// the tasks already running were admitted under the old limit, and
	// letting each of them move the limit again overshoots by as many
	// tasks as are in flight.
	changed time.Duration
	// probing is set when a window ends: the next round trip that fills the
	// limit halves it so that the queue downstream drains and the next window measures
	// a true base latency. Without it, a queue that never empties makes the
	// queued latency the new base, and the limit creeps up window after
	// window (the drift reported against delay-based limiters).
	probing bool
	// threshold is where doubling stops (TCP's slow-start threshold): the
	// limit doubles per round trip below it and grows by a step above it.
	// It starts at max and falls to the limit at each decrease; a probe
	// sets it to the limit it halved, so the limit doubles back.
	threshold float64
}

// outcome says what a finished task tells the algorithm.
type outcome int

const (
	// succeeded: the task returned with its context still live.
	succeeded outcome = iota
	// cancelled: the task's context had ended when it returned, because
	// the caller gave up or its deadline passed.
	cancelled
)

// Defaults of Adaptive, after Netflix's VegasLimit (initial 20) with a
// maximum as high as Limit's.
const (
	adaptiveInitial    = 20
	adaptiveMin        = 1
	adaptiveMax        = 10000
	adaptiveBaseWindow = 10 * time.Second
)

func newVegas(initial, least, most int, window time.Duration) vegas {
	return vegas{
		limit:     float64(initial),
		min:       float64(least),
		max:       float64(most),
		window:    min(time.Second, window),
		maxWindow: window,
		threshold: float64(most),
	}
}

// current returns the limit, rounded down.
func (v *vegas) current() int { return int(v.limit) }

// base returns the base latency, or 0 if none has been seen.
func (v *vegas) base() time.Duration {
	switch {
	case v.thisWindow == 0:
		return v.lastWindow
	case v.lastWindow == 0:
		return v.thisWindow
	}
	return min(v.thisWindow, v.lastWindow)
}

// step is the unit by which the limit moves: log10 of the limit, at least 1,
// so that a large limit moves by more than one task per round trip but far
// less than in proportion.
func (v *vegas) step() float64 { return max(1, math.Log10(v.limit)) }

// target returns the latency at which the limit stops growing: the latency
// at which alpha tasks are estimated to wait downstream. It is 0 while no
// base latency is known, or while the limit is so small that any latency
// lets it grow.
func (v *vegas) target() time.Duration {
	b := v.base()
	alpha := 3 * v.step()
	if b == 0 || v.limit <= alpha {
		return 0
	}
	return time.Duration(float64(b) * v.limit / (v.limit - alpha))
}

// observe takes one finished task: it started at start, ran for latency and
// ended at now (times measured from any fixed epoch); inflight tasks were
// running when it ended, itself included. It returns whether the limit
// changed.
//
// A cancelled task never lowers the base latency and never raises the limit:
// a task whose caller gave up may return at once, and near-zero latencies
// would make the resource look idle. If it ran for more than twice the base
// latency, it counts as a drop and lowers the limit, so that a plateau of
// tasks that all run until their deadline (every latency equal, the ratio
// flat) cannot grow the limit to its maximum.
func (v *vegas) observe(start, latency, now time.Duration, inflight int, o outcome) bool {
	if now-v.windowStart >= v.window {
		// A window without a task that succeeded keeps the base it had:
		// a resource that only times out has not become faster.
		if v.thisWindow != 0 {
			v.lastWindow, v.thisWindow = v.thisWindow, 0
			v.probing = true
		}
		v.windowStart = now
		v.window = min(2*v.window, v.maxWindow)
	}
	if latency <= 0 {
		latency = 1
	}
	if o == succeeded && (v.thisWindow == 0 || latency < v.thisWindow) {
		v.thisWindow = latency
	}
	if start < v.changed {
		return false // admitted under an older limit: judged already
	}
	old := v.limit
	base := v.base()
	step := v.step()
	// A limit the tasks leave half empty tells nothing about the resource:
	// it may grow, or be probed, only while they fill it.
	full := 2*float64(inflight) >= v.limit
	switch {
	case v.probing && full:
		v.probing = false
		v.threshold = v.limit
		v.limit /= 2
	case o == cancelled:
		if base == 0 || latency <= 2*base {
			return false
		}
		v.limit -= step
		v.threshold = v.limit
	default:
		queued := v.limit * (1 - float64(base)/float64(latency))
		switch {
		case queued <= step && full && v.limit < v.threshold:
			v.limit = min(2*v.limit, v.threshold)
		case queued < 3*step && full:
			v.limit += step
		case queued > 6*step:
			// Far above: drop straight to where alpha would wait, at
			// most halving, rather than a step per round trip.
			v.limit = max(v.limit-queued+3*step, v.limit/2)
			v.threshold = v.limit
		}
	}
	v.limit = min(max(v.limit, v.min), v.max)
	if v.limit == old {
		return false
	}
	v.changed = now
	return true
}
