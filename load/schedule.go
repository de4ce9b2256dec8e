package load

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Phase is one stretch of an open-loop schedule whose rate changes
// (Config.Phases): requests start at Rate per second for Duration.
type Phase struct {
	// Rate is in requests per second; zero means none start (a pause).
	Rate float64 `json:"rate"`
	// Duration is how long the phase lasts; it must be positive.
	Duration time.Duration `json:"duration_ns"`
}

// schedule says when each request of an open-loop run is due: phase k
// starts at start[k], its requests are numbered first[k] to first[k+1]-1,
// and request first[k]+j is due j/rate[k] seconds into it. A run with one
// Rate is one phase that never ends.
type schedule struct {
	rate  []float64
	start []time.Duration // len(rate)+1: the last is when the schedule ends
	first []int64         // len(rate)+1: the last is the number of requests
}

// newSchedule builds the schedule of phases, which have been validated.
func newSchedule(phases []Phase) schedule {
	s := schedule{start: []time.Duration{0}, first: []int64{0}}
	for _, p := range phases {
		s.rate = append(s.rate, p.Rate)
		s.start = append(s.start, satAdd(s.start[len(s.start)-1], p.Duration))
		s.first = append(s.first, satAddInt(s.first[len(s.first)-1], phaseRequests(p.Rate, p.Duration)))
	}
	return s
}

// singleRate is the schedule of Config.Rate alone: one phase, no end.
func singleRate(rate float64) schedule {
	return newSchedule([]Phase{{Rate: rate, Duration: math.MaxInt64}})
}

// offset is when request j of a phase at rate is due, from the phase's
// start. A time past what a Duration holds (request 1 at 1e-12/s)
// saturates, so that it is never due rather than due at once.
func offset(rate float64, j int64) time.Duration {
	d := float64(j) * float64(time.Second) / rate
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(d)
}

// phaseRequests counts the requests due in a phase: those j with
// offset(rate, j) < length, so that at and phaseRequests agree exactly.
func phaseRequests(rate float64, length time.Duration) int64 {
	if rate == 0 || length <= 0 {
		return 0
	}
	estimate := math.Ceil(length.Seconds() * rate) // close; rounding may be one off
	if estimate >= math.MaxInt64/2 {
		return math.MaxInt64 // a phase with no end at a rate too high to count
	}
	n := int64(estimate)
	for n > 0 && offset(rate, n-1) >= length {
		n--
	}
	for offset(rate, n) < length {
		n++
	}
	return n
}

// total is the number of requests the schedule holds (MaxInt64: no end).
func (s schedule) total() int64 { return s.first[len(s.first)-1] }

// length is when the schedule ends (MaxInt64: never).
func (s schedule) length() time.Duration { return s.start[len(s.start)-1] }

// at returns when request i is due, from the start; MaxInt64 for a request
// past the schedule's end.
func (s schedule) at(i int64) time.Duration {
	if i >= s.total() {
		return math.MaxInt64
	}
	// The phase holding i: the last whose first request is at or before it.
	k := sort.Search(len(s.rate), func(k int) bool { return s.first[k+1] > i })
	return satAdd(s.start[k], offset(s.rate[k], i-s.first[k]))
}

// dueBefore counts the requests due before d: those with at(i) < d.
func (s schedule) dueBefore(d time.Duration) int64 {
	if d >= s.length() {
		return s.total()
	}
	k := sort.Search(len(s.rate), func(k int) bool { return s.start[k+1] > d })
	return s.first[k] + phaseRequests(s.rate[k], d-s.start[k])
}

// checkPhases validates Config.Phases, naming the phase at fault.
func checkPhases(phases []Phase) error {
	var length time.Duration
	requests := false
	for i, p := range phases {
		switch {
		case math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0):
			return fmt.Errorf("%w: phase %d: rate %g is not a finite number", ErrBadConfig, i+1, p.Rate)
		case p.Rate < 0:
			return fmt.Errorf("%w: phase %d: rate %g < 0", ErrBadConfig, i+1, p.Rate)
		case p.Duration <= 0:
			return fmt.Errorf("%w: phase %d: duration %s; want > 0", ErrBadConfig, i+1, p.Duration)
		case length > math.MaxInt64-p.Duration:
			return fmt.Errorf("%w: phase %d: phases last longer than %s", ErrBadConfig, i+1, time.Duration(math.MaxInt64))
		}
		length += p.Duration
		requests = requests || phaseRequests(p.Rate, p.Duration) > 0
	}
	if !requests {
		return fmt.Errorf("%w: %d phases schedule no request", ErrBadConfig, len(phases))
	}
	return nil
}

func satAdd(a, b time.Duration) time.Duration {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

func satAddInt(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// ParsePhases parses a schedule of phases, as `loom load --phases` takes
// it: comma-separated RATE:DURATION items, a rate in requests per second
// and a Go duration, such as "500:10s,2000:10s,500:10s". Each phase must
// pass Config.Phases's checks; errors wrap ErrBadConfig and name the item.
func ParsePhases(s string) ([]Phase, error) {
	var phases []Phase
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		rate, length, found := strings.Cut(item, ":")
		if !found {
			return nil, fmt.Errorf("%w: phase %d %q: want RATE:DURATION, such as 500:10s", ErrBadConfig, i+1, item)
		}
		r, err := strconv.ParseFloat(strings.TrimSpace(rate), 64)
		if err != nil {
			return nil, fmt.Errorf("%w: phase %d %q: rate %q is not a number", ErrBadConfig, i+1, item, rate)
		}
		d, err := time.ParseDuration(strings.TrimSpace(length))
		if err != nil {
			return nil, fmt.Errorf("%w: phase %d %q: duration %q is not a Go duration (10s, 1m30s)", ErrBadConfig, i+1, item, length)
		}
		phases = append(phases, Phase{Rate: r, Duration: d})
	}
	if err := checkPhases(phases); err != nil {
		return nil, err
	}
	return phases, nil
}
