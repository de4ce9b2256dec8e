package loom

import (
	"testing"
	"time"
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
func drive(v *vegas, now time.Duration, r resource, rounds int) ([]int, time.Duration) {
	limits := make([]int, 0, rounds)
	for range rounds {
		n := v.current()
		lat := r.latency(n)
		start := now
		now += lat
		for range n {
			v.observe(start, lat, now, n, succeeded)
		}
		limits = append(limits, v.current())
	}
	return limits, now
}

func TestVegasIgnoresFastCancellations(t *testing.T) {
	v := newVegas(adaptiveMax, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	r := resource{capacity: 10, hold: 10 * time.Millisecond}
	_, now := drive(&v, 0, r, 100)
	limit, base := v.current(), v.base()
	// Callers that give up at once: a microsecond each, thousands of them.
	for range 5000 {
		now += time.Microsecond
		v.observe(now-time.Microsecond, time.Microsecond, now, limit, cancelled)
	}
	if got := v.base(); got != base {
		t.Errorf("base latency %v after fast cancellations; want %v unchanged", got, base)
	}
	if got := v.current(); got != limit {
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
			v := newVegas(tt.initial, tt.min, adaptiveMax, adaptiveBaseWindow)
			now := time.Duration(0)
			if tt.warm {
				_, now = drive(&v, 0, resource{capacity: 10, hold: 10 * time.Millisecond}, 50)
			}
			// The resource hangs: every task runs until its 1 s deadline,
			// every latency is the same, and each is cancelled. The load
			// keeps the limit full.
			for range 100 {
				n := v.current()
				start := now
				now += time.Second
				for range n {
					v.observe(start, time.Second, now, n, cancelled)
				}
			}
			if got := v.current(); got != tt.min {
				t.Errorf("limit %d after 100 s of timeouts; want the minimum, %d", got, tt.min)
			}
		})
	}
}

func TestVegasHalfEmptyLimitIsForgotten(t *testing.T) {
	v := newVegas(20, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	now := time.Duration(0)
	// Five tasks at a time, never waiting: the limit of 20 is never used,
	// so it has no evidence to grow on within a window; after a window
	// without strain it is forgotten, back to the maximum.
	rounds := func(n int) {
		for range n {
			start := now
			now += 10 * time.Millisecond
			for range 5 {
				v.observe(start, 10*time.Millisecond, now, 5, succeeded)
			}
		}
	}
	rounds(90) // 0.9 s: the first window lasts 1 s
	if got := v.current(); got != 20 {
		t.Errorf("limit %d with 5 tasks in flight for 0.9 s; want 20 unchanged", got)
	}
	rounds(30)
	if got := v.current(); got != adaptiveMax {
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
			v := newVegas(20, tt.min, tt.max, time.Hour)
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
	v := newVegas(adaptiveMax, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	r := resource{capacity: 1 << 30, hold: 10 * time.Millisecond}
	now := time.Duration(0)
	round := func(n int, latency time.Duration, o outcome) {
		start := now
		now += latency
		for range n {
			v.observe(start, latency, now, n, o)
		}
	}
	for range 20 {
		round(20, r.hold, succeeded)
	}
	round(20, 1200*time.Millisecond, cancelled) // the stall
	for range 20 {
		round(20, r.hold, succeeded)
	}
	if got := v.current(); got != adaptiveMax {
		t.Errorf("limit %d after one stalled round; want %d unchanged", got, adaptiveMax)
	}
}

// A round stuck behind a queue is judged before its tasks end only once the
// bound on its median latency has doubled the base: a machine too busy to
// fire timers on time makes a round 1.6× late, and two such rounds judged
// early fit in one slow spell (loom bench cask-sleep turned tens of
// thousands of requests away before this).
func TestVegasJudgesEarlyOnlyPastTwiceTheBase(t *testing.T) {
	v := newVegas(adaptiveMax, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	hold := 100 * time.Millisecond
	now := time.Duration(0)
	for range 20 { // rounds of 100 tasks of 100 ms: the base
		start := now
		now += hold
		for range 100 {
			v.observe(start, hold, now, 100, succeeded)
		}
	}
	for range roundSamples {
		v.start(now, 100)
	}
	v.start(now+160*time.Millisecond, 100) // none of the round has ended
	if v.congested {
		t.Errorf("a round 1.6× the base was judged congested before it ended; want it left to end")
	}
	v.start(now+210*time.Millisecond, 100)
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
	v := newVegas(adaptiveMax, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	now := time.Duration(0)
	least := v.current()
	until := func(end time.Duration) { // rounds of the 100 clients the limit lets in
		for now < end {
			n := min(v.current(), 100)
			start := now
			now += hold
			for range n {
				v.observe(start, hold, now, n, succeeded)
			}
			least = min(least, v.current())
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
	least = v.current()
	until(3500 * time.Millisecond) // past the second window's end, at 3 s
	if least > 60 {
		t.Errorf("limit down to %d only, from about 90 at a window's end with the base twice the floor; want it halved", least)
	}
}
