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

func TestVegasConvergesAboveCapacity(t *testing.T) {
	v := newVegas(adaptiveInitial, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	r := resource{capacity: 10, hold: 10 * time.Millisecond}
	limits, now := drive(&v, 0, r, 400)
	if now > 10*time.Second {
		t.Fatalf("400 rounds took %v; want under 10 s", now)
	}
	// Started under load, the limit first takes queued latencies for the
	// base; the probes at the ends of the first windows (1 s, then 2 s, …)
	// correct it. From then on it must stay above the capacity (the
	// resource kept busy) and below twice it (latency at most doubled),
	// but for the probes, which halve it for one round trip.
	for i, got := range limits[300:] {
		if got <= r.capacity/2 || got >= 2*r.capacity {
			t.Fatalf("round %d: limit %d; want in (%d, %d) (limits %v)", 300+i, got, r.capacity/2, 2*r.capacity, limits)
		}
	}
	if got := limits[len(limits)-1]; got <= r.capacity {
		t.Errorf("limit %d after %v; want above the capacity, %d (limits %v)", got, now, r.capacity, limits)
	}
	if got := v.target(); got <= r.hold || got > 2*r.hold {
		t.Errorf("target latency %v; want in (%v, %v]", got, r.hold, 2*r.hold)
	}
}

func TestVegasFollowsInjectedLatency(t *testing.T) {
	v := newVegas(adaptiveInitial, adaptiveMin, adaptiveMax, time.Hour)
	fast := resource{capacity: 40, hold: 10 * time.Millisecond}
	slow := resource{capacity: 10, hold: 10 * time.Millisecond}
	limits, now := drive(&v, 0, fast, 100)
	before := limits[len(limits)-1]
	if before <= fast.capacity {
		t.Fatalf("limit %d after 100 rounds at capacity %d; want above it", before, fast.capacity)
	}
	limits, now = drive(&v, now, slow, 100)
	during := limits[len(limits)-1]
	if during >= 2*slow.capacity {
		t.Errorf("limit %d after the capacity fell to %d; want below %d (limits %v)", during, slow.capacity, 2*slow.capacity, limits)
	}
	limits, _ = drive(&v, now, fast, 100)
	after := limits[len(limits)-1]
	if after <= fast.capacity {
		t.Errorf("limit %d after the capacity came back to %d; want above it (limits %v)", after, fast.capacity, limits)
	}
}

func TestVegasIgnoresFastCancellations(t *testing.T) {
	v := newVegas(adaptiveInitial, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
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
	v := newVegas(adaptiveInitial, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	r := resource{capacity: 10, hold: 10 * time.Millisecond}
	_, now := drive(&v, 0, r, 50)
	// The resource hangs: every task runs until its 1 s deadline, every
	// latency is the same, and each is cancelled.
	for range 100 {
		n := v.current()
		start := now
		now += time.Second
		for range n {
			v.observe(start, time.Second, now, n, cancelled)
		}
	}
	if got := v.current(); got != adaptiveMin {
		t.Errorf("limit %d after 100 s of timeouts; want the minimum, %d", got, adaptiveMin)
	}
	// And exactly at a minimum above 1.
	w := newVegas(adaptiveInitial, 7, adaptiveMax, adaptiveBaseWindow)
	_, now = drive(&w, 0, r, 50)
	for range 100 {
		start := now
		now += time.Second
		w.observe(start, time.Second, now, w.current(), cancelled)
	}
	if got := w.current(); got != 7 {
		t.Errorf("limit %d after 100 s of timeouts; want the minimum, 7", got)
	}
}

func TestVegasHalfEmptyLimitDoesNotGrow(t *testing.T) {
	v := newVegas(adaptiveInitial, adaptiveMin, adaptiveMax, adaptiveBaseWindow)
	now := time.Duration(0)
	// Five tasks at a time, never waiting: the limit of 20 is never used,
	// so it has no evidence to grow on.
	for range 1000 {
		start := now
		now += 10 * time.Millisecond
		for range 5 {
			v.observe(start, 10*time.Millisecond, now, 5, succeeded)
		}
	}
	if got := v.current(); got != adaptiveInitial {
		t.Errorf("limit %d with 5 tasks in flight; want %d unchanged", got, adaptiveInitial)
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

func TestVegasProbeRemeasuresBase(t *testing.T) {
	window := time.Second
	v := newVegas(adaptiveInitial, adaptiveMin, adaptiveMax, window)
	r := resource{capacity: 10, hold: 10 * time.Millisecond}
	_, now := drive(&v, 0, r, 300) // 300 rounds of at least 10 ms: several windows
	if got := v.base(); got != r.hold {
		t.Errorf("base latency %v after several windows under a standing queue; want %v", got, r.hold)
	}
	if got := v.current(); got <= r.capacity || got >= 2*r.capacity {
		t.Errorf("limit %d; want in (%d, %d)", got, r.capacity, 2*r.capacity)
	}
	_ = now
}
