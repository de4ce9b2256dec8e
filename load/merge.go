package load

import (
	"errors"
	"fmt"
	"slices"
)

// ErrMerge reports results that cannot be merged.
var ErrMerge = errors.New("cannot merge results")

// Merge adds o's measurements to r, as if both runs had been one run on
// several machines at once: counts add up, histograms merge, the timelines
// add second by second, Elapsed is the longer of the two and the rate is
// recomputed from it. Both must be of the same Mode and carry their
// histograms (results of Run, or decoded from JSON). o is not changed.
func (r *Result) Merge(o *Result) error {
	switch {
	case r.Mode != o.Mode:
		return fmt.Errorf("%w: %s loop with %s loop", ErrMerge, r.Mode, o.Mode)
	case (r.hist == nil && r.Histogram != "") || (o.hist == nil && o.Histogram != ""):
		return fmt.Errorf("%w: histogram not decoded", ErrMerge)
	}
	h := newHistogram()
	for _, x := range []*Result{r, o} {
		if x.hist == nil {
			continue
		}
		if dropped := h.Merge(x.hist); dropped > 0 {
			return fmt.Errorf("%w: %d latencies out of range", ErrMerge, dropped)
		}
	}
	for _, t := range o.Targets {
		if !slices.Contains(r.Targets, t) {
			r.Targets = append(r.Targets, t)
		}
	}
	r.Connections += o.Connections
	r.Rate += o.Rate
	r.Phases = mergePhases(r.Phases, o.Phases)
	if !o.Start.IsZero() && (o.Start.Before(r.Start) || r.Start.IsZero()) { // a result without a start moves nothing
		r.Start = o.Start
	}
	r.Elapsed = max(r.Elapsed, o.Elapsed)
	r.Requests += o.Requests
	r.Sent += o.Sent
	r.Errors.merge(o.Errors)
	if r.Status == nil {
		r.Status = map[int]int64{}
	}
	for code, n := range o.Status {
		r.Status[code] += n
	}
	r.Bytes += o.Bytes
	r.Scheduled += o.Scheduled
	r.Late += o.Late
	r.Connects += o.Connects
	r.Reconnects += o.Reconnects
	for _, l := range o.Limits {
		if !slices.Contains(r.Limits, l) {
			r.Limits = append(r.Limits, l)
		}
	}
	var t timeline
	for _, s := range r.Timeline {
		t.add(s)
	}
	for _, s := range o.Timeline {
		t.add(s)
	}
	r.Timeline = t.list()
	if err := r.setHistogram(h); err != nil {
		return err
	}
	r.countNon2xx()
	r.computeRate()
	return nil
}

// mergePhases adds the rates of two schedules whose phases change at the
// same times; schedules that change at different times have no one
// schedule, and merge to nil.
func mergePhases(a, b []Phase) []Phase {
	if len(a) != len(b) || len(a) == 0 {
		return nil
	}
	sum := make([]Phase, len(a))
	for i := range a {
		if a[i].Duration != b[i].Duration {
			return nil
		}
		sum[i] = Phase{Rate: a[i].Rate + b[i].Rate, Duration: a[i].Duration}
	}
	return sum
}
