package vegas

import (
	"testing"
	"time"
)

// The defaults of loom's Adaptive executor, which most tests run with.
const (
	adaptiveMin        = 1
	adaptiveMax        = 10000
	adaptiveBaseWindow = 10 * time.Second
)

// resource stands for what an adaptive executor protects: capacity tasks
// are served at once in hold each, the rest wait their turn, so a task's
// latency is hold × max(1, inflight/capacity).
type resource struct {
	capacity int
	hold     time.Duration
}

func (r resource) latency(inflight int) time.Duration {
	if inflight <= r.capacity {
		return r.hold
	}
	return time.Duration(int64(r.hold) * int64(inflight) / int64(r.capacity))
}

// drive runs rounds of a closed loop that keeps the limit full: each round
// the limit's worth of tasks start together and end together. It returns the
// limit after each round and the clock.
func drive(v *Limit, now time.Duration, r resource, rounds int) ([]int, time.Duration) {
	limits := make([]int, 0, rounds)
	for range rounds {
		n := v.Current()
		lat := r.latency(n)
		start := now
		now += lat
		for range n {
			v.Observe(start, lat, now, n, Succeeded)
		}
		limits = append(limits, v.Current())
	}
	return limits, now
}

func TestVegasIgnoresFastCancellations(t *testing.T) {
	v := New(adaptiveMax, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	r := resource{capacity: 10, hold: 10 * time.Millisecond}
	_, now := drive(&v, 0, r, 100)
	limit, base := v.Current(), v.Base()
	// Callers that give up at once: a microsecond each, thousands of them.
	for range 5000 {
		now += time.Microsecond
		v.Observe(now-time.Microsecond, time.Microsecond, now, limit, Cancelled)
	}
	if got := v.Base(); got != base {
		t.Errorf("base latency %v after fast cancellations; want %v unchanged", got, base)
	}
	if got := v.Current(); got != limit {
		t.Errorf("limit %d after fast cancellations; want %d unchanged", got, limit)
	}
}

func TestVegasTimeoutPlateauShrinks(t *testing.T) {
	tests := []struct {
		name         string
		initial, min int
		warm         bool // 50 round trips that succeed first
	}{
		{"after success, to a minimum of 1", 20, 1, true},
		{"after success, exactly to a minimum of 7", 20, 7, true},
		{"from the maximum, nothing ever succeeded", adaptiveMax, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := New(tt.initial, tt.min, adaptiveMax, adaptiveBaseWindow)
			now := time.Duration(0)
			if tt.warm {
				_, now = drive(&v, 0, resource{capacity: 10, hold: 10 * time.Millisecond}, 50)
			}
			// The resource hangs: every task runs until its 1 s deadline,
			// every latency is the same, and each is cancelled. The load
			// keeps the limit full.
			for range 100 {
				n := v.Current()
				start := now
				now += time.Second
				for range n {
					v.Observe(start, time.Second, now, n, Cancelled)
				}
			}
			if got := v.Current(); got != tt.min {
				t.Errorf("limit %d after 100 s of timeouts; want the minimum, %d", got, tt.min)
			}
		})
	}
}

func TestVegasHalfEmptyLimitIsForgotten(t *testing.T) {
	v := New(20, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	now := time.Duration(0)
	// Five tasks at a time, never waiting: the limit of 20 is never used,
	// so it has no evidence to grow on within a window; after a window
	// without strain it is forgotten, back to the maximum.
	rounds := func(n int) {
		for range n {
			start := now
			now += 10 * time.Millisecond
			for range 5 {
				v.Observe(start, 10*time.Millisecond, now, 5, Succeeded)
			}
		}
	}
	rounds(90) // 0.9 s: the first window lasts 1 s
	if got := v.Current(); got != 20 {
		t.Errorf("limit %d with 5 tasks in flight for 0.9 s; want 20 unchanged", got)
	}
	rounds(30)
	if got := v.Current(); got != adaptiveMax {
		t.Errorf("limit %d after a window with 5 tasks in flight; want the maximum, %d", got, adaptiveMax)
	}
}

func TestVegasBounds(t *testing.T) {
	tests := []struct {
		name     string
		r        resource
		min, max int
		want     int
	}{
		// Latency never rises: the limit grows to its maximum, exactly.
		{"grows to max", resource{capacity: 1 << 30, hold: time.Millisecond}, 1, 300, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := New(20, tt.min, tt.max, time.Hour)
			limits, _ := drive(&v, 0, tt.r, 300)
			if got := limits[len(limits)-1]; got != tt.want {
				t.Errorf("limit %d; want %d (limits %v)", got, tt.want, limits)
			}
			for i, l := range limits {
				if l < tt.min || l > tt.max {
					t.Fatalf("round %d: limit %d outside [%d, %d]", i, l, tt.min, tt.max)
				}
			}
		})
	}
}

// A stall of the whole process that outlasts the callers' timeout ends
// every task in flight cancelled after running long, once: that round
// alone does not cut the limit, since a stall ends within a round while a
// hanging resource (TestVegasTimeoutPlateauShrinks) does not. Cut at once,
// a load of 20 in flight far below capacity was held to 19 and its next
// burst turned away (seen in loom bench overload's unloaded phase).
func TestVegasOneStalledRoundDoesNotCut(t *testing.T) {
	v := New(adaptiveMax, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	r := resource{capacity: 1 << 30, hold: 10 * time.Millisecond}
	now := time.Duration(0)
	round := func(n int, latency time.Duration, o Outcome) {
		start := now
		now += latency
		for range n {
			v.Observe(start, latency, now, n, o)
		}
	}
	for range 20 {
		round(20, r.hold, Succeeded)
	}
	round(20, 1200*time.Millisecond, Cancelled) // the stall
	for range 20 {
		round(20, r.hold, Succeeded)
	}
	if got := v.Current(); got != adaptiveMax {
		t.Errorf("limit %d after one stalled round; want %d unchanged", got, adaptiveMax)
	}
}

// A round stuck behind a queue is judged before its tasks end only once the
// bound on its median latency has doubled the base: a machine too busy to
// fire timers on time makes a round 1.6× late, and two such rounds judged
// early fit in one slow spell (loom bench cask-sleep turned tens of
// thousands of requests away before this).
func TestVegasJudgesEarlyOnlyPastTwiceTheBase(t *testing.T) {
	v := New(adaptiveMax, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	hold := 100 * time.Millisecond
	now := time.Duration(0)
	for range 20 { // rounds of 100 tasks of 100 ms: the base
		start := now
		now += hold
		for range 100 {
			v.Observe(start, hold, now, 100, Succeeded)
		}
	}
	for range roundSamples {
		v.Start(now, 100)
	}
	v.Start(now+160*time.Millisecond, 100) // none of the round has ended
	if v.congested {
		t.Errorf("a round 1.6× the base was judged congested before it ended; want it left to end")
	}
	v.Start(now+210*time.Millisecond, 100)
	if !v.congested {
		t.Errorf("a round past 2.1× the base was not judged congested before it ended; want it judged")
	}
}

// A window's end probes (halves a limit in use) only when the window's base
// latency has crept above the floor, the least since the last probe, by more
// than the slack: a limit in use whose latency has not moved is left alone
// (loom bench cask-sleep: 92 → 46 under 100 connections), while a base that
// crept, the sign of a queue that never empties, is still probed.
func TestVegasProbesOnlyACreptBase(t *testing.T) {
	hold := 100 * time.Millisecond
	v := New(adaptiveMax, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	now := time.Duration(0)
	least := v.Current()
	until := func(end time.Duration) { // rounds of the 100 clients the limit lets in
		for now < end {
			n := min(v.Current(), 100)
			start := now
			now += hold
			for range n {
				v.Observe(start, hold, now, n, Succeeded)
			}
			least = min(least, v.Current())
		}
	}
	// Cut below the 100 clients, as a slow spell does, 0.2 s before the
	// first window's end at 1 s: the limit is still in use there.
	until(800 * time.Millisecond)
	v.limit, v.threshold, least = 90, 90, 90
	until(1500 * time.Millisecond)
	if least < 90 {
		t.Errorf("limit down to %d from 90 at a window's end with the latency unchanged; want no probe", least)
	}

	until(2800 * time.Millisecond)
	v.limit, v.threshold = 90, 90
	v.floor = hold / 2 // a lower latency seen since the last probe: the base crept
	least = v.Current()
	until(3500 * time.Millisecond) // past the second window's end, at 3 s
	if least > 60 {
		t.Errorf("limit down to %d only, from about 90 at a window's end with the base twice the floor; want it halved", least)
	}
}

// A window's base exactly the slack above the floor has not crept: no
// probe. Only a rise past the slack counts (a floor of 90.909091 ms has a
// slack of 9.090909 ms, which makes the 100 ms base exactly its edge).
func TestVegasProbesOnlyPastTheSlack(t *testing.T) {
	hold := 100 * time.Millisecond
	floor := 90909091 * time.Nanosecond
	if floor+slack(floor) != hold {
		t.Fatalf("floor %v + slack %v is not the base %v", floor, slack(floor), hold)
	}
	v := New(adaptiveMax, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	now := time.Duration(0)
	least := v.Current()
	until := func(end time.Duration) { // rounds of the 100 clients the limit lets in
		for now < end {
			n := min(v.Current(), 100)
			start := now
			now += hold
			for range n {
				v.Observe(start, hold, now, n, Succeeded)
			}
			least = min(least, v.Current())
		}
	}
	until(800 * time.Millisecond)
	v.limit, v.threshold, v.floor, least = 90, 90, floor, 90
	until(1500 * time.Millisecond) // past the first window's end, at 1 s
	if least < 90 {
		t.Errorf("limit down to %d from 90 with the base exactly the slack above the floor; want no probe", least)
	}
}

// TestVegasTarget checks the latency at which the limit stops growing,
// below and above the limit where alpha tasks would wait (alpha is 3 steps:
// 3 up to a limit of 10, 6 at 100): at most alpha, the base; above it, the
// base scaled by limit / (limit - alpha); either plus the slack, a tenth of
// the base and at least noise.
func TestVegasTarget(t *testing.T) {
	for _, tc := range []struct {
		base  time.Duration
		limit float64
		want  time.Duration
	}{
		{0, 100, 0}, // no base latency yet
		{10 * time.Millisecond, 1, 10*time.Millisecond + noise},
		{10 * time.Millisecond, 3, 10*time.Millisecond + noise},
		{10 * time.Millisecond, 4, 40*time.Millisecond + noise},                          // 10 ms × 4 / 1
		{100 * time.Millisecond, 100, 100*time.Millisecond*100/94 + 10*time.Millisecond}, // alpha 6, slack a tenth
		{10 * time.Millisecond, 100, 10*time.Millisecond*100/94 + noise},                 // 10.6 ms + 1 ms
		{5 * time.Millisecond, 100, 5*time.Millisecond*100/94 + noise},                   // a tenth is under noise
		{time.Second, 4, 4*time.Second + 100*time.Millisecond},                           // slack a tenth
	} {
		v := New(int(tc.limit), 1, 1000, time.Second)
		v.thisWindow = tc.base
		if got := v.Target(); got != tc.want {
			t.Errorf("target at base %s, limit %g = %s; want %s", tc.base, tc.limit, got, tc.want)
		}
	}
}

// TestVegasWindowEndsAtItsLength observes a task one nanosecond before the
// first measuring window's end and one exactly at it: only the second ends
// the window, which then starts there and doubles.
func TestVegasWindowEndsAtItsLength(t *testing.T) {
	v := New(4, 1, 10, 4*time.Second) // the first window lasts 1 s
	v.Observe(0, time.Millisecond, time.Second-1, 1, Succeeded)
	if v.windowStart != 0 || v.window != time.Second {
		t.Fatalf("at 1s-1ns: window starts %s, lasts %s; want 0s, 1s", v.windowStart, v.window)
	}
	v.Observe(0, time.Millisecond, time.Second, 1, Succeeded)
	if v.windowStart != time.Second || v.window != 2*time.Second || v.lastWindow != time.Millisecond {
		t.Errorf("at 1s: window starts %s, lasts %s, last window's base %s; want 1s, 2s, 1ms", v.windowStart, v.window, v.lastWindow)
	}
}

// TestVegasZeroLatencyCountsAsOneNanosecond observes a task that took no
// measurable time: it still sets a base latency, the least there is, since
// 0 means none has been seen.
func TestVegasZeroLatencyCountsAsOneNanosecond(t *testing.T) {
	v := New(4, 1, 10, time.Second)
	v.Observe(0, 0, time.Millisecond, 1, Succeeded)
	if v.thisWindow != 1 || v.Base() != 1 {
		t.Errorf("after a task of 0 ns the base latency is %s (this window %s); want 1ns", v.Base(), v.thisWindow)
	}
}

// TestVegasRoundEndsWithItsLastTask runs a round of two tasks (two in
// flight, limit 2): the first to end leaves the round open, the second
// closes it; a task that starts at the very moment the round was decided
// belongs to the next round.
func TestVegasRoundEndsWithItsLastTask(t *testing.T) {
	v := New(2, 1, 10, 10*time.Second)
	v.Start(1, 1)
	v.Start(2, 2)
	ms := time.Millisecond
	v.Observe(1, 10*ms, 10*ms, 2, Succeeded)
	if v.measured != 1 || v.decided != 0 {
		t.Fatalf("after the first of 2 tasks: measured %d, decided at %s; want 1, 0s (round open)", v.measured, v.decided)
	}
	v.Observe(2, 11*ms, 11*ms, 2, Succeeded)
	if v.measured != 0 || v.decided != 11*ms {
		t.Fatalf("after the second of 2 tasks: measured %d, decided at %s; want 0, 11ms (round closed)", v.measured, v.decided)
	}
	v.Start(11*ms, 1)
	if v.begun != 1 {
		t.Errorf("a task started at the decision counts %d in the new round; want 1", v.begun)
	}
}

// TestVegasOverdueAtItsEdges judges a round of 8 tasks early, before its
// tasks end, by the time since the last of them started (1 s against a
// base of 1 ms): only once all 8 have started, and only while fewer than
// half (4) have ended.
func TestVegasOverdueAtItsEdges(t *testing.T) {
	round := func(started, measured int) Limit {
		v := New(8, 1, 10, 10*time.Second)
		v.thisWindow = time.Millisecond
		for i := 1; i <= started; i++ {
			v.Start(time.Duration(i), 8)
		}
		v.measured = measured
		return v
	}
	for _, tc := range []struct {
		started, measured int
		judged            bool
	}{
		{7, 0, false},
		{8, 0, true},
		{8, 3, true},
		{8, 4, false},
	} {
		v := round(tc.started, tc.measured)
		v.overdue(time.Second)
		if judged := v.decided == time.Second; judged != tc.judged {
			t.Errorf("%d of 8 started, %d ended: judged early %v; want %v", tc.started, tc.measured, judged, tc.judged)
		}
	}
}

// TestVegasOverdueCountsDropsAsEnded judges a round of 8 tasks early as
// TestVegasOverdueAtItsEdges does, with drops in place of tasks that
// succeeded: 3 drops leave it to be judged, 4 (half) do not.
func TestVegasOverdueCountsDropsAsEnded(t *testing.T) {
	for _, tc := range []struct {
		drops  int
		judged bool
	}{{3, true}, {4, false}} {
		v := New(8, 1, 10, 10*time.Second)
		v.thisWindow = time.Millisecond
		for i := 1; i <= 8; i++ {
			v.Start(time.Duration(i), 8)
		}
		v.drops = tc.drops
		v.overdue(time.Second)
		if judged := v.decided == time.Second; judged != tc.judged {
			t.Errorf("8 of 8 started, %d dropped: judged early %v; want %v", tc.drops, judged, tc.judged)
		}
	}
}

// TestVegasOverdueAtTwiceTheBase judges a round of 16 tasks (limit 100)
// early once the time since the last of them started is exactly twice the
// base latency (100 ms, so the slack is 10 ms and 47 of 100 are estimated
// waiting, past beta's 12), and not a nanosecond before.
func TestVegasOverdueAtTwiceTheBase(t *testing.T) {
	base := 100 * time.Millisecond
	for _, tc := range []struct {
		bound  time.Duration
		judged bool
	}{{2*base - 1, false}, {2 * base, true}} {
		v := New(100, 1, 100, 10*time.Second)
		v.thisWindow = base
		for i := 1; i <= roundSamples; i++ {
			v.Start(time.Duration(i), 100)
		}
		now := roundSamples + tc.bound
		v.overdue(now)
		if judged := v.decided == now; judged != tc.judged {
			t.Errorf("%s since the last start, base %s: judged early %v; want %v", tc.bound, base, judged, tc.judged)
		}
	}
}

// TestVegasOverdueAtBeta judges a round of 8 tasks early only once the
// bound estimates more than beta (6 at a limit of 8) waiting: with a base of
// 20 ms (slack 2 ms), a bound of 82 ms leaves 80 ms, 4 × the base, which
// makes exactly 8 × 3/4 = 6 waiting, not judged; a nanosecond more is.
func TestVegasOverdueAtBeta(t *testing.T) {
	base := 20 * time.Millisecond
	for _, tc := range []struct {
		bound  time.Duration
		judged bool
	}{{82 * time.Millisecond, false}, {82*time.Millisecond + 1, true}} {
		v := New(8, 1, 10, 10*time.Second)
		v.thisWindow = base
		for i := 1; i <= 8; i++ {
			v.Start(time.Duration(i), 8)
		}
		now := 8 + tc.bound
		v.overdue(now)
		if judged := v.decided == now; judged != tc.judged {
			t.Errorf("%s since the last start, base %s: judged early %v; want %v", tc.bound, base, judged, tc.judged)
		}
	}
}

// TestVegasOverdueBetaGrowsWithTheLimit judges a round of 16 tasks (limit
// 16, so beta is 6 steps of log10(16), 7.2) against a base of 1 ms (slack
// 1 ms): a bound of 2.5 ms estimates 16 × (1 − 1/1.5) = 5.3 waiting, under
// beta, not judged; 3 ms estimates 8, judged.
func TestVegasOverdueBetaGrowsWithTheLimit(t *testing.T) {
	for _, tc := range []struct {
		bound  time.Duration
		judged bool
	}{{2500 * time.Microsecond, false}, {3 * time.Millisecond, true}} {
		v := New(16, 1, 16, 10*time.Second)
		v.thisWindow = time.Millisecond
		for i := 1; i <= 16; i++ {
			v.Start(time.Duration(i), 16)
		}
		now := 16 + tc.bound
		v.overdue(now)
		if judged := v.decided == now; judged != tc.judged {
			t.Errorf("%s since the last start: judged early %v; want %v", tc.bound, judged, tc.judged)
		}
	}
}

// TestVegasOverdueSizesTheCutByThroughput judges a round of 16 tasks
// (limit 100, base 100 ms) early at a bound of 200 ms, the second congested
// round in a row. With 7 tasks finished since the round began the bound is
// the latency: 47 waiting, the limit falls to 100 − 47 + 6 = 58. From 8
// (half a round) on, the throughput sizes it: 8 tasks in 200 ms at 100 in
// flight is a latency of 2.5 s, 96 waiting, and the cut stops at a quarter,
// 25.
func TestVegasOverdueSizesTheCutByThroughput(t *testing.T) {
	base := 100 * time.Millisecond
	for _, tc := range []struct {
		finished, want int
	}{{7, 58}, {8, 25}} {
		v := New(100, 1, 100, 10*time.Second)
		v.thisWindow = base
		v.congested = true
		v.ended = rateSamples // enough tasks seen for latency to cut
		for i := 1; i <= roundSamples; i++ {
			v.Start(time.Duration(i), 100)
		}
		v.finished = tc.finished
		now := roundSamples + 2*base
		if !v.overdue(now) {
			t.Fatalf("%d finished: the round was not judged early, or the limit did not move", tc.finished)
		}
		if got := v.Current(); got != tc.want {
			t.Errorf("%d finished in the round: limit %d; want %d", tc.finished, got, tc.want)
		}
	}
}

// endRounds ends n rounds of used tasks in flight, drops of them dropped,
// with median latency latency (0: all dropped), 1 ms apart, and returns the
// limit after them.
func endRounds(v *Limit, n, used, drops int, latency time.Duration) int {
	for range n {
		v.used, v.drops = used, drops
		v.endRound(v.decided+time.Millisecond, latency)
	}
	return v.Current()
}

// TestVegasFewTasksSkipTheDecision ends rounds in a limit of 20 that its
// tasks leave half empty, each round with a drop: up to 6 tasks in flight
// they skip the decision (too few for more than beta to wait), so two such
// rounds leave the limit alone; 7 do not, and two rounds with drops cut it
// to a step under the 7 in use. Nor do 6 that fill half a limit of 12.
func TestVegasFewTasksSkipTheDecision(t *testing.T) {
	for _, tc := range []struct{ limit, used, want int }{{20, 6, 20}, {20, 7, 6}, {12, 6, 5}} {
		v := New(tc.limit, 1, 20, 10*time.Second)
		v.thisWindow = time.Millisecond
		if got := endRounds(&v, 2, tc.used, 1, time.Millisecond); got != tc.want {
			t.Errorf("two rounds of %d tasks with a drop each, limit %d: limit %d; want %d", tc.used, tc.limit, got, tc.want)
		}
	}
}

// TestVegasFewTasksAllDroppedCut ends two rounds of 2 tasks in a limit of
// 20, every task dropped (median latency 0): few tasks do not skip the
// decision when all of them were dropped, so the second round cuts the limit
// to a quarter of the 2 in use, held at the minimum, 1.
func TestVegasFewTasksAllDroppedCut(t *testing.T) {
	v := New(20, 1, 20, 10*time.Second)
	v.thisWindow = time.Millisecond
	if got := endRounds(&v, 1, 2, 2, 0); got != 20 || !v.congested {
		t.Fatalf("one round of 2 tasks, both dropped: limit %d, congested %v; want 20, true", got, v.congested)
	}
	if got := endRounds(&v, 1, 2, 2, 0); got != 1 {
		t.Errorf("two rounds of 2 tasks, all dropped: limit %d; want the minimum, 1", got)
	}
}

// TestVegasGrowsOnlyWhenHalfFull ends a round without queueing (latency the
// base) in a limit of 20: 10 tasks in flight fill half of it, and the limit
// doubles (it is under the threshold, the maximum); 9 do not, and it holds.
func TestVegasGrowsOnlyWhenHalfFull(t *testing.T) {
	for _, tc := range []struct{ used, want int }{{10, 40}, {9, 20}} {
		v := New(20, 1, 100, 10*time.Second)
		v.thisWindow = time.Millisecond
		if got := endRounds(&v, 1, tc.used, 0, time.Millisecond); got != tc.want {
			t.Errorf("a round of %d tasks at the base latency, limit 20: limit %d; want %d", tc.used, got, tc.want)
		}
	}
}

// TestVegasCalmRoundsAreForgotten ends a round of 7 tasks in a limit of 20
// at the base latency, without drops: it does not strain the limit, so the
// window's end, at 1 s, forgets the limit: back to the maximum. (A round of
// drops or a full limit strains it; TestVegasFewTasksAllDroppedCut.)
func TestVegasCalmRoundsAreForgotten(t *testing.T) {
	v := New(20, 1, 100, 10*time.Second)
	v.thisWindow = time.Millisecond
	endRounds(&v, 1, 7, 0, time.Millisecond)
	if v.strained {
		t.Fatalf("a round of 7 in a limit of 20 at the base latency strained the limit")
	}
	if !v.Observe(v.decided, time.Millisecond, time.Second, 1, Succeeded) || v.Current() != 100 {
		t.Errorf("at the window's end: limit %d; want it forgotten, back to 100", v.Current())
	}
}

// TestVegasDecideAtBeta ends single rounds against a base of 1 ms (slack
// 1 ms) with more than beta waiting or not, with and without a drop, after a
// congested round or not, and checks the limit, whether the round was
// judged congested, and whether it strained the limit. 8 tasks at 5 ms
// estimate 8 × 3/4 = 6 waiting, exactly beta (6 steps of 1); 12 at 3 ms
// estimate 6, under beta there (6 steps of log10(12), 6.5) but over 6/step.
// 100 at 20 ms estimate 95: a second such round cuts to where alpha would
// wait, 100 − 95 + 6 = 11, with a drop, and at most to a quarter without;
// 100 at 3 ms estimate 50, and a second round cuts to 100 − 50 + 6 = 56.
// 2 at 3 ms estimate 1, a step: a full limit under the threshold doubles;
// 4 at 5 ms estimate 3, alpha, at which a full limit no longer grows; 50
// at 2.087 ms estimate 4, under alpha there (3 steps of log10(50), 5.1),
// and the limit grows by a step.
func TestVegasDecideAtBeta(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name                 string
		limit, used, drops   int
		latency              time.Duration
		congested, probing   bool
		want                 int
		congestedAfter, strn bool
	}{
		{"8 of 20, beta waiting", 20, 8, 0, 5 * ms, false, false, 20, false, false},
		{"8 of 20, beta waiting, again, with a drop", 20, 8, 1, 5 * ms, true, false, 7, false, true},
		{"8 of 20, beta waiting, again", 20, 8, 0, 5 * ms, true, false, 20, false, false},
		{"12 of 30, 6 waiting", 30, 12, 0, 3 * ms, false, false, 30, false, false},
		{"12 of 30, 6 waiting, again, with a drop", 30, 12, 1, 3 * ms, true, false, 10, false, true},
		{"8 of 20, 7 waiting, with a drop", 20, 8, 1, 9 * ms, false, false, 20, true, true},
		{"100 of 100, 95 waiting, again", 100, 100, 0, 20 * ms, true, false, 25, false, true},
		{"100 of 100, 95 waiting, again, with a drop", 100, 100, 1, 20 * ms, true, false, 11, false, true},
		{"100 of 100, 50 waiting, again", 100, 100, 0, 3 * ms, true, false, 56, false, true},
		{"2 of 4, 1 waiting", 4, 2, 0, 3 * ms, false, false, 8, false, true},
		{"4 of 4, 3 waiting", 4, 4, 0, 5 * ms, false, false, 4, false, true},
		{"50 of 50, 4 waiting", 50, 50, 0, 2087 * time.Microsecond, false, false, 51, false, true},
		{"probing, half full", 20, 10, 0, ms, false, true, 40, false, true},
		{"probing, at the maximum", 100, 100, 0, ms, false, true, 100, false, true},
	} {
		v := New(tc.limit, 1, 100, 10*time.Second)
		v.thisWindow = ms
		v.ended = rateSamples // enough tasks seen for latency to cut
		v.congested, v.probing = tc.congested, tc.probing
		got := endRounds(&v, 1, tc.used, tc.drops, tc.latency)
		if got != tc.want || v.congested != tc.congestedAfter || v.strained != tc.strn {
			t.Errorf("%s: limit %d, congested %v, strained %v; want %d, %v, %v",
				tc.name, got, v.congested, v.strained, tc.want, tc.congestedAfter, tc.strn)
		}
	}
}

// FollowingQueue lets half the limit wait, rounded down, and at least one
// task.
func TestFollowingQueue(t *testing.T) {
	for limit, want := range map[int]int{0: 1, 1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 100: 50, 101: 50} {
		if got := FollowingQueue(limit); got != want {
			t.Errorf("FollowingQueue(%d) = %d; want %d", limit, got, want)
		}
	}
}

// Observe reports a change exactly when the limit moved: a window that ends
// calm with the limit already at its maximum changes nothing, and says so.
func TestVegasObserveReportsOnlyAChange(t *testing.T) {
	v := New(10, 1, 10, time.Second)
	now := time.Duration(0)
	for range 300 { // 3 s of rounds of two tasks: calm windows, the limit at its maximum
		start := now
		now += 10 * time.Millisecond
		for range 2 {
			before := v.Current()
			if changed := v.Observe(start, 10*time.Millisecond, now, 2, Succeeded); changed != (v.Current() != before) {
				t.Fatalf("at %v: Observe says changed=%v, limit %d → %d", now, changed, before, v.Current())
			}
		}
	}
	if got := v.Current(); got != 10 {
		t.Errorf("limit %d; want 10, the maximum, kept", got)
	}
}

// A cancelled task is a drop only past twice the base latency: rounds of
// tasks cancelled at exactly twice the base leave the limit alone, and one
// nanosecond more cuts it.
func TestVegasDropOnlyPastTwiceTheBase(t *testing.T) {
	for _, tc := range []struct {
		latency time.Duration
		cut     bool
	}{
		{20 * time.Millisecond, false},
		{20*time.Millisecond + 1, true},
	} {
		v := New(10, 1, 10, time.Hour)
		now := time.Duration(0)
		for range 10 { // a round of successes: the base is 10 ms
			v.Observe(now, 10*time.Millisecond, now+10*time.Millisecond, 10, Succeeded)
		}
		now += 10 * time.Millisecond
		for range 5 {
			start := now
			now += tc.latency
			for range 10 {
				v.Observe(start, tc.latency, now, 10, Cancelled)
			}
		}
		if cut := v.Current() < 10; cut != tc.cut {
			t.Errorf("rounds of tasks cancelled after %v, base %v: limit %d; want a cut: %v", tc.latency, v.Base(), v.Current(), tc.cut)
		}
	}
}

// succeed feeds n tasks that started at start and succeed gap apart from
// first on, one in flight, and returns when the last ended.
func succeed(v *Limit, n int, start, first, gap time.Duration) time.Duration {
	now := first
	for i := range n {
		now = first + time.Duration(i)*gap
		v.Observe(start, now-start, now, 1, Succeeded)
	}
	return now
}

// Latency lowers the limit only once rateSamples tasks have succeeded: a
// cut is judged against the throughput before it. One task fewer, and the
// second round far above leaves the limit alone.
func TestVegasCutsOnlyWithAThroughput(t *testing.T) {
	for _, tc := range []struct{ ended, want int }{{rateSamples - 1, 100}, {rateSamples, 25}} {
		v := New(100, 1, 100, 10*time.Second)
		v.thisWindow = time.Millisecond
		v.ended, v.congested = tc.ended, true
		if got := endRounds(&v, 1, 100, 0, 20*time.Millisecond); got != tc.want {
			t.Errorf("%d tasks succeeded before, a second round with 95 waiting: limit %d; want %d", tc.ended, got, tc.want)
		}
	}
}

// A cut on latency is put on trial against keptShare of the throughput
// over the last rateSamples tasks: 64 tasks 1 ms apart are 1,000 a second,
// so the tasks after the cut must keep a third of it. A cut made during
// the trial joins it and keeps what it returns to.
func TestVegasCutGoesOnTrial(t *testing.T) {
	v := New(100, 1, 100, 10*time.Second)
	now := succeed(&v, rateSamples, 0, time.Millisecond, time.Millisecond)
	if got := v.rate(rateSamples); got != 1000 {
		t.Fatalf("throughput %v a second; want 1000", got)
	}
	v.cut(now, 5*time.Millisecond)
	v.limit = 40
	if tr := v.trial; !tr.on || tr.up || tr.from != 100 || tr.need != 1000.0/3 || tr.start != now || tr.latency != 5*time.Millisecond {
		t.Errorf("trial %+v; want a cut from 100 needing 333.3 a second, from %v, latency 5ms", tr, now)
	}
	v.cut(now+time.Second, time.Millisecond)
	if tr := v.trial; tr.from != 100 || tr.start != now {
		t.Errorf("a second cut during the trial: trial %+v; want it kept from 100, from %v", tr, now)
	}
}

// A cut on trial is kept when the rateSamples tasks started after it
// succeed within the time need allows from the first of them, and undone
// one nanosecond later: the limit returns to where it was, and latency may
// not lower it for holdShare times the trial's length, at least firstHold,
// doubling each time in a row, up to the window. A cut kept resets the
// hold. The grace of a round's latency lets the tasks take longer when the
// throughput asks less than that.
func TestVegasTrialOfACut(t *testing.T) {
	const need = 1000.0 // tasks a second: 63 ms for 64 tasks
	allowed := time.Duration((rateSamples - 1) / need * float64(time.Second))
	for _, tc := range []struct {
		name     string
		latency  time.Duration // of the round before the cut
		span     time.Duration // from the first task's end to the last's
		hold     time.Duration // before the trial
		trialLen time.Duration // from the cut to the first task's end
		kept     bool
		holdFor  time.Duration // 0: kept
		nextHold time.Duration
	}{
		{"within", 0, allowed, 3 * time.Second, 0, true, 0, firstHold},
		{"a nanosecond late", 0, allowed + 1, 0, 0, false, firstHold, 2 * firstHold},
		{"late, a long trial", 0, allowed + 1, 0, 500 * time.Millisecond, false, holdShare * (500*time.Millisecond + allowed + 1), 2 * holdShare * (500*time.Millisecond + allowed + 1)},
		{"late, in a row", 0, allowed + 1, 4 * time.Second, 0, false, 4 * time.Second, 8 * time.Second},
		{"late, in a row at the window", 0, allowed + 1, 8 * time.Second, 0, false, 8 * time.Second, 10 * time.Second},
		{"within a round's latency", 100 * time.Millisecond, 100 * time.Millisecond, 0, 0, true, 0, firstHold},
		{"past a round's latency", 100 * time.Millisecond, 100*time.Millisecond + 1, 0, 0, false, firstHold, 2 * firstHold},
	} {
		v := New(100, 1, 100, 10*time.Second)
		start := time.Second
		v.hold = tc.hold
		v.trial = trial{on: true, from: 100, need: need, start: start, latency: tc.latency}
		v.limit = 20
		first := start + tc.trialLen
		gap := tc.span / (rateSamples - 1)
		succeed(&v, rateSamples-1, start, first, gap)
		now := first + tc.span
		v.Observe(start, now-start, now, 1, Succeeded)
		switch {
		case v.trial.on:
			t.Errorf("%s: still on trial after %d tasks", tc.name, rateSamples)
		case tc.kept && (v.Current() != 20 || v.holdUntil != 0 || v.hold != tc.nextHold):
			t.Errorf("%s: limit %d, held until %v, next hold %v; want the cut kept: 20, 0, %v", tc.name, v.Current(), v.holdUntil, v.hold, tc.nextHold)
		case !tc.kept && (v.Current() != 100 || v.holdUntil != now+tc.holdFor || v.hold != tc.nextHold):
			t.Errorf("%s: limit %d, held for %v, next hold %v; want the cut undone: 100, %v, %v", tc.name, v.Current(), v.holdUntil-now, v.hold, tc.holdFor, tc.nextHold)
		}
	}
}

// While a cut undone holds the limit, latency does not lower it, but
// callers giving up still do.
func TestVegasHoldStopsOnlyLatency(t *testing.T) {
	for _, tc := range []struct {
		drops int
		want  int
	}{{0, 100}, {1, 11}} {
		v := New(100, 1, 100, 10*time.Second)
		v.thisWindow = time.Millisecond
		v.ended, v.congested = rateSamples, true
		v.holdUntil = time.Hour
		if got := endRounds(&v, 1, 100, tc.drops, 20*time.Millisecond); got != tc.want {
			t.Errorf("held, a second round with 95 waiting and %d drops: limit %d; want %d", tc.drops, got, tc.want)
		}
	}
}

// A full limit under the maximum returns to it on trial when the
// throughput over the last bestSamples tasks has fallen under keptShare of
// the best over as many of this window or the last, no sooner than
// retryAt; each return waits firstHold longer before the next, doubling.
// The return is kept if a third of that best comes back, else undone.
func TestVegasReturnsToTheMaximum(t *testing.T) {
	for _, tc := range []struct {
		name        string
		tasks       int // succeeded, 1 ms apart: 1,000 a second
		best        float64
		retryAt     time.Duration
		up          bool
		wantRetryAt time.Duration
	}{
		{"under a third of the best", bestSamples, 3001, 0, true, firstHold},
		{"at a third of the best", bestSamples, 3000, 0, false, 0},
		{"under a third, before retryAt", bestSamples, 3001, time.Hour, false, time.Hour},
		{"no throughput known yet", bestSamples - 1, 3001, 0, false, 0},
	} {
		v := New(20, 1, 100, 10*time.Second)
		v.thisWindow = time.Millisecond
		end := succeed(&v, tc.tasks, 0, time.Millisecond, time.Millisecond)
		v.best, v.retryAt, v.decided = tc.best, tc.retryAt, end
		v.used = 20
		v.endRound(end, time.Millisecond)
		if tc.up != v.trial.on || tc.up && (v.Current() != 100 || !v.trial.up || v.trial.from != 20 || v.trial.need != keptShare*tc.best) {
			t.Errorf("%s: limit %d, trial %+v; want a return on trial: %v", tc.name, v.Current(), v.trial, tc.up)
		}
		if v.retryAt-end != tc.wantRetryAt && v.retryAt != tc.wantRetryAt {
			t.Errorf("%s: next return at %v; want %v after", tc.name, v.retryAt-end, tc.wantRetryAt)
		}
	}
}
