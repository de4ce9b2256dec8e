// Package vegas is the limit algorithm of loom's Adaptive executor: the
// congestion avoidance of TCP Vegas (L. Brakmo and L. Peterson, "TCP Vegas:
// End to End Congestion Avoidance on a Global Internet", IEEE JSAC 13(8),
// 1995), applied to concurrency as Netflix's concurrency-limits library does
// in VegasLimit.
//
// From the lowest latency seen lately (base, the latency of a task that
// waited for nothing) and the latency of a round of tasks, the number of
// tasks waiting downstream is estimated as inflight × (1 − base/latency).
// Few waiting: the limit grows while the tasks fill it; many, twice in a
// row: it falls to the estimated capacity plus a few; in between it holds,
// so that a few tasks always wait downstream and the resource behind the
// executor stays busy without a queue that grows. The limit starts at its
// maximum: the estimate works from the tasks in flight, so a limit above the
// load costs nothing, and one that started low would turn a closed loop's
// connections away until it had grown.
//
// Four departures from the textbook, each for a failure seen in loom bench:
// the estimate uses the tasks in flight, not the limit, so a limit far above
// the load is neither cut by nor grown on latencies it did not cause; a
// round's latency is the median of up to roundSamples tasks, not each task's,
// so one task delayed by the scheduler does not move the limit; a rise over
// the base of less than the slack (1 ms, or a tenth of the base if more) is
// not taken for queueing, so work of a few microseconds, or a timer fired
// late, on a busy machine does not look congested; and a round whose tasks
// are stuck behind a queue ends before they do, once the time they have
// waited is twice the base and shows it, with Vegas' rate form of the
// estimate (throughput against inflight/base) sizing the cut, so that a
// limit at its maximum meets a sudden overload within a few round trips,
// not as many queue lengths.
//
// A task whose context had ended when it returned never counts in the
// estimate, and counts as a drop when it ran for more than twice the base
// latency; drops in two rounds in a row lower the limit, so callers that
// give up at once cannot make the resource look idle, and a plateau of
// timeouts lowers the limit instead of growing it. A limit that a whole
// measuring window (1 s, doubling up to the window given to New) leaves
// half empty, with nothing waiting, returns to the maximum.
//
// Latency alone cannot tell a queue the limit makes from a latency it does
// not set: a cache that answers some tasks at once (the base is the
// cache's), cores saturated by the callers themselves, a queue downstream
// that others fill. There a cut only lowers throughput, and a closed loop's
// callers, turned away, come straight back and take the cores from the
// tasks admitted (loom bench db: 256 connections, a pool of 16, the limit
// cut to 3–6 and 1 request in 8 served). So throughput judges what latency
// decides. A cut on latency is on trial: if the tasks started after it do
// not succeed at a third of the rate of the last tasks before it, it is
// undone, and latency may not lower the limit for a while (a second, or
// eight times the trial, doubling each time in a row). Cuts that each pass
// their trial can still add up to a collapse that comes late, so a full
// limit whose throughput falls under a third of the best of the window
// returns to the maximum on trial, kept if a third of that best comes
// back. Above the resource's capacity a cut keeps the throughput, so a
// real overload is cut as before.
package vegas

import (
	"math"
	"slices"
	"time"
)

// Limit is a concurrency limit that Vegas moves. It keeps no clock: every
// call is given the time, measured from any fixed epoch, so that tests drive
// it deterministically. It is not safe for concurrent use; the executor calls
// it under its lock. Make one with New.
type Limit struct {
	limit    float64
	min, max float64

	// base is the minimum latency of the current and the previous window,
	// so it forgets a minimum after one to two windows and follows a
	// resource that became slower. The first window lasts a second and each
	// next one twice as long, up to maxWindow.
	thisWindow, lastWindow time.Duration // 0: none seen in that window
	windowStart            time.Duration
	window, maxWindow      time.Duration

	// decided is when the last round ended. Only tasks that started after
	// it make up a round, once per round trip as TCP Vegas does: the tasks
	// already running were admitted under the old limit, and letting them
	// move the limit again overshoots by as many tasks as are in flight.
	// It also makes a stall of the whole process (every task in flight
	// delayed at once, their completions in a burst) one round, not many.
	decided time.Duration
	// congested says the last round found more than beta tasks waiting.
	// The limit falls only on the second such round in a row: a real queue
	// lasts, a stall of the machine ends within a round.
	congested bool
	// probing is set when a window ends with its base above the floor by
	// more than the slack: the next round that finds the limit in use
	// halves it so that the queue downstream drains and the next window
	// measures a true base latency. Without it, a queue that never empties
	// makes the queued latency the new base, and the limit creeps up window
	// after window (the drift reported against delay-based limiters). A
	// base within the slack of the floor has not crept: halving a limit in
	// use then only turns tasks away (cask-sleep, 100 connections: 92 → 46).
	probing bool
	// floor is the lowest latency since the last probe (0: none yet), what
	// a window's base is held against before probing.
	floor time.Duration
	// strained says a round of this window filled the limit, found more
	// than beta tasks waiting or saw drops. A window without one forgets
	// the limit: it returns to the maximum, where it started, so that a
	// cut made in a passing stall of the machine does not turn away the
	// bursts of a load far below capacity for ever after.
	strained bool
	// threshold is where doubling stops (TCP's slow-start threshold): the
	// limit doubles per round below it and grows by a step above it. It
	// starts at max and falls to the limit at each decrease; a probe sets
	// it to the limit it halved, so the limit doubles back.
	threshold float64

	// The round being measured: the latencies of the tasks that succeeded
	// (the last roundSamples of them), the tasks that were cancelled after
	// running long (drops), and the most tasks in flight when one ended.
	samples  [roundSamples]time.Duration
	measured int
	drops    int
	used     int
	// starts holds when the round's first tasks started, in order, and
	// begun counts them (past roundSamples too): while fewer than half of
	// the round's tasks have ended, its median latency is at least the
	// time since the last of them started, so a round stuck behind a
	// growing queue is judged by that bound instead of lasting as long as
	// the queue.
	starts [roundSamples]time.Duration
	begun  int
	// finished counts the tasks that succeeded since the round began,
	// whenever they started: the round's throughput, from which Little's
	// law gives the latency a full queue imposes.
	finished int

	// ends holds when the last bestSamples tasks that succeeded ended, a
	// ring (ended counts them all): the throughput lately, over more
	// tasks than a round of a small limit has.
	ends  [bestSamples]time.Duration
	ended int
	// trial is the cut on latency, or the return to the maximum, that
	// throughput judges (see the package comment and judge).
	trial trial
	// holdUntil is when latency may lower the limit again after a cut
	// was undone; hold is how long the next undone cut holds it:
	// firstHold, or holdShare times as long as the trial if more,
	// doubling each time in a row, up to the window. A cut kept resets
	// it.
	holdUntil, hold time.Duration
	// retryAt is when the limit may return to the maximum again; retry is
	// how long the next return waits, firstHold doubling up to the window.
	retryAt, retry time.Duration
	// best is the highest throughput over bestSamples tasks seen in this
	// window and lastBest in the last, as base is the lowest latency.
	best, lastBest float64
}

// A trial is a change of the limit on trial: kept if the tasks started
// after it succeed at least at need tasks a second, else undone to from.
type trial struct {
	on    bool
	up    bool          // a return to the maximum; else a cut
	from  float64       // the limit before the change
	need  float64       // tasks a second
	start time.Duration // when the change was made
	began time.Duration // when the first task started after it succeeded
	done  int           // tasks started after it that succeeded
	// latency is the median latency of the round before the change: the
	// tasks after it have at least that long to succeed, since they may
	// start over a round trip, and a few fast ones end long before the
	// rest.
	latency time.Duration
}

// Outcome says what a finished task tells the algorithm.
type Outcome int

const (
	// Succeeded: the task returned with its context still live.
	Succeeded Outcome = iota
	// Cancelled: the task's context had ended when it returned, because
	// the caller gave up or its deadline passed.
	Cancelled
)

const (
	// roundSamples is the most tasks a round waits for; fewer while fewer
	// are in flight.
	roundSamples = 16
	// noise is the least rise in latency not taken for queueing: what a
	// busy machine's scheduler adds to any task. A tenth of the base
	// latency when that is more (see slack).
	noise = time.Millisecond
	// rateSamples is how many tasks' ends time a throughput: before a cut
	// and after it. bestSamples time the best of a window, over enough
	// tasks that a burst of them ending at once after a stall of the
	// machine is not taken for it.
	rateSamples = 64
	bestSamples = 4 * rateSamples
	// keptShare is the share of the throughput before a cut that the
	// tasks after it must keep. Above the resource's capacity a cut keeps
	// all of it; below, a cut to a quarter keeps a quarter. A third tells
	// them apart with room for the error of timing 64 tasks that end in
	// bursts (a resource of 40 slots × 10 ms, 4,000 a second, times
	// 3,150–6,300).
	keptShare = 1.0 / 3
	// firstHold is how long latency may not lower a limit whose cut was
	// undone, the first time in a row; holdShare times the trial's length
	// if more, so that trials that fail take at most a ninth of the time.
	// firstHold is also the first wait between returns to the maximum.
	firstHold = time.Second
	holdShare = 8
)

// FollowingQueue returns how many tasks may wait behind a limit of limit in
// an executor whose queue follows its limit: half of it, at least 1. Half
// covers a cut of a third below a closed loop's connections, as a slow
// spell of the machine makes (100 → 88–92 in loom bench cask-sleep), while
// under a lasting overload, where the queue stays full, a task waits at
// most half a round trip more than it runs.
func FollowingQueue(limit int) int { return max(1, limit/2) }

// slack returns the rise over a base latency that is not taken for
// queueing: noise, or a tenth of the base when that is more, since a machine
// too busy to fire a 100 ms timer on time makes it 10–30 ms late, which
// Vegas would read as a tenth of the tasks waiting (Gradient2, in the same
// library, tolerates 1.5× for the same reason).
func slack(base time.Duration) time.Duration { return max(noise, base/10) }

// waiting estimates how many of inUse tasks wait downstream when a round's
// latency is latency and the base is base: inUse × (1 − base/latency), with
// the latency less the slack.
func waiting(inUse float64, base, latency time.Duration) float64 {
	latency -= slack(base)
	if latency <= base {
		return 0
	}
	return inUse * (1 - float64(base)/float64(latency))
}

// New returns a limit that starts at initial and stays within [least, most].
// Its first measuring window lasts a second, or window if less, and each
// next one twice as long, up to window.
func New(initial, least, most int, window time.Duration) Limit {
	return Limit{
		limit:     float64(initial),
		min:       float64(least),
		max:       float64(most),
		window:    min(time.Second, window),
		maxWindow: window,
		threshold: float64(most),
	}
}

// Current returns the limit, rounded down.
func (v *Limit) Current() int { return int(v.limit) }

// Base returns the base latency, the lowest of the current and the last
// measuring window, or 0 if none has been seen.
func (v *Limit) Base() time.Duration {
	switch {
	case v.thisWindow == 0:
		return v.lastWindow
	case v.lastWindow == 0:
		return v.thisWindow
	}
	return min(v.thisWindow, v.lastWindow)
}

// step is the unit by which a limit of n moves: log10 of n, at least 1, so
// that a large limit moves by more than one task per round but far less
// than in proportion. Alpha, the tasks waiting below which the limit grows,
// is 3 steps; beta, above which it falls, 6.
func step(n float64) float64 { return max(1, math.Log10(n)) }

// Target returns the latency at which the limit stops growing: the latency
// at which alpha tasks are estimated to wait with the limit full, plus the
// slack. It is 0 while no base latency is known.
func (v *Limit) Target() time.Duration {
	b := v.Base()
	if b == 0 {
		return 0
	}
	t := b
	if alpha := 3 * step(v.limit); v.limit > alpha {
		t = time.Duration(float64(b) * v.limit / (v.limit - alpha))
	}
	return t + slack(b)
}

// Observe takes one finished task: it started at start, ran for latency and
// ended at now (times measured from any fixed epoch); inflight tasks were
// running when it ended, itself included. It returns whether the limit
// changed.
//
// A cancelled task never lowers the base latency and never counts in a
// round's latency: a task whose caller gave up may return at once, and
// near-zero latencies would make the resource look idle. If it ran for more
// than twice the base latency, and more than noise, it counts as a drop,
// and two rounds in a row with drops lower the limit, so that a plateau of
// tasks that all run until their deadline (every latency equal, the ratio
// flat) cannot grow the limit to its maximum.
func (v *Limit) Observe(start, latency, now time.Duration, inflight int, o Outcome) bool {
	changed := false
	if now-v.windowStart >= v.window {
		// A window without a task that succeeded keeps the base it had:
		// a resource that only times out has not become faster.
		if v.thisWindow != 0 {
			v.lastWindow, v.thisWindow = v.thisWindow, 0
			v.lastBest, v.best = v.best, 0
			v.probing = v.lastWindow > v.floor+slack(v.floor)
			if !v.strained && v.limit < v.max {
				v.limit, v.threshold, v.probing = v.max, v.max, false
				v.trial.on = false
				changed = true
			}
		}
		v.strained = false
		v.windowStart = now
		v.window = min(2*v.window, v.maxWindow)
	}
	if latency <= 0 {
		latency = 1
	}
	if o == Succeeded {
		v.finished++
		v.ends[v.ended%bestSamples] = now
		v.ended++
		if t := &v.trial; t.on && start >= t.start {
			if t.done == 0 {
				t.began = now
			}
			t.done++
		}
		if v.thisWindow == 0 || latency < v.thisWindow {
			v.thisWindow = latency
		}
		if v.floor == 0 || latency < v.floor {
			v.floor = latency
		}
	}
	if v.judge(now) {
		changed = true
	}
	if start < v.decided {
		return changed // started before the last round ended: judged already
	}
	switch base := v.Base(); {
	case o == Succeeded:
		v.samples[v.measured%roundSamples] = latency
		v.measured++
	case latency > max(2*base, noise):
		v.drops++
	default:
		return changed // a fast cancellation tells nothing
	}
	v.used = max(v.used, inflight)
	if v.measured+v.drops < v.roundSize() {
		return v.overdue(now) || changed
	}
	median := time.Duration(0) // every task of the round was a drop
	if v.measured > 0 {
		round := v.samples[:min(v.measured, roundSamples)]
		if len(round) > 1 {
			slices.Sort(round)
		}
		median = round[len(round)/2]
	}
	return v.endRound(now, median) || changed
}

// roundSize is how many tasks make up a round: up to roundSamples, and no
// more than the limit or the most tasks in flight, so that a small load
// still makes rounds.
func (v *Limit) roundSize() int { return min(max(v.Current(), 1), v.used, roundSamples) }

// Start takes a task that started at now with inflight tasks running,
// itself included. It returns whether the limit changed: a round whose
// tasks are stuck in a queue ends here once the bound on its latency
// shows it.
func (v *Limit) Start(now time.Duration, inflight int) bool {
	if v.judge(now) {
		return true
	}
	if now < v.decided {
		return false
	}
	if v.begun < roundSamples {
		v.starts[v.begun] = now
	}
	v.begun++
	v.used = max(v.used, inflight)
	return v.overdue(now)
}

// overdue ends the round early when its tasks have all started, fewer than
// half have ended, and the bound on its median latency alone, the time since
// the last of them started, estimates more than beta tasks waiting. It
// returns whether the limit changed.
func (v *Limit) overdue(now time.Duration) bool {
	n := v.roundSize()
	if v.begun < n || 2*(v.measured+v.drops) >= n {
		return false
	}
	base := v.Base()
	bound := now - v.starts[n-1]
	if base == 0 || bound < 2*base {
		// Only a queue that has at least doubled the latency: judged
		// early, two rounds fit in one slow spell of the machine.
		return false
	}
	inUse := min(v.limit, float64(v.used))
	if waiting(inUse, base, bound) <= 6*step(inUse) {
		return false
	}
	// The bound says a queue is there, not how long it is: the throughput
	// since the round began does, as in Vegas' own form of the estimate
	// (the expected rate inUse/base against the actual rate).
	latency := bound
	if v.finished >= roundSamples/2 {
		latency = max(latency, time.Duration(float64(now-v.decided)*inUse/float64(v.finished)))
	}
	return v.endRound(now, latency)
}

// endRound moves the limit on a round whose median latency was latency (0:
// every task was a drop) and starts the next round.
func (v *Limit) endRound(now, latency time.Duration) bool {
	old := v.limit
	if latency > 0 && v.used <= 6 && 2*v.used < v.Current() {
		// Too few tasks for more than beta to wait, in a limit they leave
		// half empty: no branch of decide applies. Skipping it spares a
		// load of a few tasks at a time, whose every round is a task or
		// two, a logarithm and a sort per task.
		v.congested = false
	} else {
		v.decide(now, latency)
	}
	v.best = max(v.best, v.rate(bestSamples))
	v.limit = min(max(v.limit, v.min), v.max)
	v.measured, v.drops, v.used, v.begun, v.finished = 0, 0, 0, 0, 0
	v.decided = now
	return v.limit != old
}

// decide moves the limit at the end of a round, at now, whose median
// latency was latency; 0 when every task of the round was a drop.
func (v *Limit) decide(now, latency time.Duration) {
	// The limit in use: a limit the tasks leave half empty tells nothing
	// about the resource, and grows only while they fill it.
	inUse := min(v.limit, float64(v.used))
	full := 2*v.used >= v.Current()
	s := step(inUse)
	wasCongested := v.congested
	v.congested = false
	if full || latency == 0 || v.drops > 0 {
		v.strained = true
	}
	// Latency may not lower the limit while a cut undone holds it, nor
	// while a return to the maximum is on trial.
	holding := now < v.holdUntil || v.trial.on && v.trial.up
	if full && !v.trial.on && v.limit < v.max && now >= v.retryAt {
		if r := v.rate(bestSamples); r > 0 && r < keptShare*max(v.best, v.lastBest) {
			best := max(v.best, v.lastBest)
			retry := max(v.retry, firstHold)
			v.retryAt = now + retry
			v.retry = min(2*retry, max(v.maxWindow, firstHold))
			v.try(now, latency, true, keptShare*best)
			v.limit, v.threshold, v.congested = v.max, v.max, false
			return
		}
	}
	if v.probing && !holding && v.used >= v.Current() && v.limit < v.max {
		// A limit at its maximum cannot have crept up: nothing to probe.
		v.probing = false
		v.cut(now, latency)
		v.threshold = v.limit
		v.limit /= 2
		v.floor = 0 // measured again, with the queue drained
		return
	}
	if latency == 0 {
		// Every task of the round ran long and was cancelled: the
		// resource hangs, or is so far behind that its callers give up.
		// Or the machine stalled past the callers' timeout: only a second
		// such round in a row cuts.
		if !wasCongested {
			v.congested = true
			return
		}
		v.limit = inUse / 4
		v.threshold = v.limit
		return
	}
	base := v.Base()
	queued := waiting(inUse, base, latency)
	if queued > 6*s {
		v.strained = true
	}
	// Far above: more than beta wait. Unless callers give up, not while
	// a cut undone holds the limit, nor before a throughput is known to
	// judge the cut against.
	far := queued > 6*s && (v.drops > 0 || !holding && v.ended >= rateSamples)
	switch {
	case (far || v.drops > 0) && !wasCongested:
		// Far above, or callers gave up: the limit falls only if the
		// next round says so too. A real queue or a hanging resource
		// lasts; a stall of the machine, which delays every task in
		// flight and can outlast their callers' timeout, ends.
		v.congested = true
	case far && v.drops > 0:
		// Far above, with callers giving up: straight to where alpha
		// would wait.
		v.cut(now, latency)
		v.limit = inUse - queued + 3*s
		v.threshold = v.limit
	case far:
		// Far above twice in a row: to where alpha would wait, at most
		// to a quarter, rather than a step per round.
		v.cut(now, latency)
		v.limit = max(inUse-queued+3*s, inUse/4)
		v.threshold = v.limit
	case v.drops > 0:
		v.limit = min(v.limit, inUse-s)
		v.threshold = v.limit
	case queued <= s && full && v.limit < v.threshold:
		v.limit = min(2*v.limit, v.threshold)
	case queued < 3*s && full:
		v.limit += s
	}
}

// rate returns the throughput over the last n tasks that succeeded (n at
// most bestSamples), tasks a second; 0 while fewer have, or if they all
// ended at once.
func (v *Limit) rate(n int) float64 {
	if v.ended < n {
		return 0
	}
	newest := v.ends[(v.ended-1)%bestSamples]
	oldest := v.ends[(v.ended-n)%bestSamples]
	if newest <= oldest {
		return 0
	}
	return float64(n-1) / (newest - oldest).Seconds()
}

// cut puts a cut on latency about to be made at now on trial, unless a
// trial is on: a cut made during the trial of another is judged with it.
func (v *Limit) cut(now, latency time.Duration) {
	if !v.trial.on {
		v.try(now, latency, false, keptShare*v.rate(rateSamples))
	}
}

// try puts the change of the limit about to be made at now, after a round
// whose median latency was latency, on trial: a return to the maximum if
// up, else a cut; the tasks started after it must succeed at need tasks a
// second. A cut made while another is on trial
// is judged with it; without a throughput to judge against (need 0) there
// is no trial.
func (v *Limit) try(now, latency time.Duration, up bool, need float64) {
	if need > 0 {
		v.trial = trial{on: true, up: up, from: v.limit, need: need, start: now, latency: latency}
	}
}

// judge ends the trial on, if any, at now. The change is kept once
// rateSamples tasks started after it have succeeded, if they took no
// longer than need allows from the first of them, and undone as soon as
// that time has passed without them: need allows 63 intervals at need
// tasks a second, or the latency of the round before the change if more.
// A cut undone holds the limit (see holdUntil). It reports whether the
// limit changed.
func (v *Limit) judge(now time.Duration) bool {
	t := &v.trial
	if !t.on || t.done == 0 {
		return false
	}
	allowed := max(time.Duration((rateSamples-1)/t.need*float64(time.Second)), t.latency)
	kept := t.done >= rateSamples && now-t.began <= allowed
	if !kept && now-t.began <= allowed {
		return false // still on trial
	}
	t.on = false
	switch {
	case kept && !t.up:
		v.hold = firstHold
		return false
	case kept:
		return false
	case !t.up:
		hold := max(v.hold, firstHold, holdShare*(now-t.start))
		v.holdUntil = now + hold
		v.hold = min(2*hold, max(v.maxWindow, firstHold))
		v.congested, v.probing = false, false
	}
	changed := v.limit != t.from
	v.limit, v.threshold = t.from, t.from
	return changed
}
