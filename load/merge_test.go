package load

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// resultOf builds a closed-loop Result holding the given latencies.
func resultOf(t *testing.T, latencies []time.Duration) *Result {
	t.Helper()
	h := newHistogram()
	for _, d := range latencies {
		if err := h.RecordValue(int64(d / time.Microsecond)); err != nil {
			t.Fatal(err)
		}
	}
	r := &Result{Mode: Closed, Requests: int64(len(latencies)), Elapsed: time.Second, Status: map[int]int64{200: int64(len(latencies))}}
	if err := r.setHistogram(h); err != nil {
		t.Fatal(err)
	}
	return r
}

func roundTrip(t *testing.T, r *Result) *Result {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out Result
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func TestMergeOfJSONEqualsOneHistogram(t *testing.T) {
	var a, b []time.Duration
	for i := range 1000 {
		a = append(a, time.Duration(100+i)*time.Microsecond)   // 0.1-1.1 ms
		b = append(b, time.Duration(5+i%300)*time.Millisecond) // 5-305 ms
	}
	b = append(b, 3*time.Second) // one outlier
	both := resultOf(t, append(append([]time.Duration(nil), a...), b...))

	merged := roundTrip(t, resultOf(t, a))
	if err := merged.Merge(roundTrip(t, resultOf(t, b))); err != nil {
		t.Fatalf("Merge: %v", err)
	}
	if !merged.hist.Equals(both.hist) {
		t.Errorf("merged histogram differs from one histogram of both")
	}
	if merged.Latency != both.Latency {
		t.Errorf("merged latency %+v; want %+v", merged.Latency, both.Latency)
	}
	if merged.Requests != 2001 || merged.Status[200] != 2001 {
		t.Errorf("merged requests %d, status %v; want 2001", merged.Requests, merged.Status)
	}
	for _, p := range []float64{0, 50, 90, 99, 99.9, 100} {
		if got, want := merged.Percentile(p), both.Percentile(p); got != want {
			t.Errorf("Percentile(%g) = %s; want %s", p, got, want)
		}
	}
	// And the merged result survives JSON too.
	again := roundTrip(t, merged)
	if !again.hist.Equals(both.hist) || again.Latency != both.Latency {
		t.Errorf("merged result changed through JSON")
	}
}

func TestMergeOfRealRuns(t *testing.T) {
	srv, _ := countingServer(t, hello)
	cfg := Config{Targets: []Target{{URL: srv.URL}}, Connections: 2, Requests: 300}
	a, b := roundTrip(t, mustRun(t, cfg)), roundTrip(t, mustRun(t, cfg))
	maxBoth := max(a.Latency.Max, b.Latency.Max)
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Requests != 600 || a.Status[200] != 600 || a.Connections != 4 {
		t.Errorf("merged requests %d, status %v, connections %d; want 600, 600, 4", a.Requests, a.Status, a.Connections)
	}
	if a.Latency.Max != maxBoth {
		t.Errorf("merged max %s; want %s", a.Latency.Max, maxBoth)
	}
	var served int64
	for _, s := range a.Timeline {
		served += s.Requests
	}
	if served != 600 {
		t.Errorf("merged timeline holds %d requests; want 600", served)
	}
}

func TestMergeRejectsMixedModes(t *testing.T) {
	a := resultOf(t, []time.Duration{time.Millisecond})
	b := resultOf(t, []time.Duration{time.Millisecond})
	b.Mode = Open
	if err := a.Merge(b); !errors.Is(err, ErrMerge) {
		t.Errorf("Merge of closed and open: %v; want ErrMerge", err)
	}
	if err := json.Unmarshal([]byte(`{"mode":"closed","histogram":"bm90IGEgaGlzdG9ncmFt"}`), new(Result)); err == nil {
		t.Errorf("Unmarshal of a bad histogram succeeded; want an error")
	}
}

// TestMergeRecountsRateAndNon2xx checks what Merge derives rather than adds:
// the rate from the longer Elapsed, and the non-2xx count from the merged
// statuses, counted at the 2xx class's edges (199, 200, 299, 300).
func TestMergeRecountsRateAndNon2xx(t *testing.T) {
	a := resultOf(t, []time.Duration{time.Millisecond, time.Millisecond})
	a.Status = map[int]int64{200: 1, 299: 1}
	b := resultOf(t, []time.Duration{time.Millisecond, time.Millisecond})
	b.Status = map[int]int64{199: 1, 300: 1}
	b.Requests, b.Elapsed = 6, 2*time.Second
	a.countNon2xx()
	a.computeRate()
	if a.Non2xx != 0 || a.RequestsPerSec != 2 {
		t.Fatalf("before the merge: non-2xx %d, rate %g; want 0, 2", a.Non2xx, a.RequestsPerSec)
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Non2xx != 2 || a.RequestsPerSec != 4 {
		t.Errorf("merged non-2xx %d, rate %g; want 2 (199 and 300), 4 (8 requests in 2 s)", a.Non2xx, a.RequestsPerSec)
	}
}

// TestMergeRefusesAnUndecodedHistogram merges a result whose histogram is
// still text (a Result built by hand, not decoded from JSON), on either
// side: the latencies would be lost, so Merge refuses.
func TestMergeRefusesAnUndecodedHistogram(t *testing.T) {
	text := resultOf(t, []time.Duration{time.Millisecond}).Histogram
	for _, side := range []string{"receiver", "argument"} {
		a := resultOf(t, []time.Duration{time.Millisecond})
		b := resultOf(t, []time.Duration{time.Millisecond})
		undecoded := &Result{Mode: Closed, Requests: 1, Histogram: text}
		if side == "receiver" {
			a = undecoded
		} else {
			b = undecoded
		}
		if err := a.Merge(b); !errors.Is(err, ErrMerge) {
			t.Errorf("Merge with an undecoded histogram as the %s: %v; want ErrMerge", side, err)
		}
	}
}

// TestMergeIntoAnEmptyResult sums runs into a zero Result, as a caller
// adding up several runs does: a result without a histogram merges, and
// the sum starts when the earliest run started.
func TestMergeIntoAnEmptyResult(t *testing.T) {
	early := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	a := resultOf(t, []time.Duration{time.Millisecond})
	a.Start = early.Add(time.Second)
	b := resultOf(t, []time.Duration{2 * time.Millisecond})
	b.Start = early
	// The earliest first, then last: a later run must not move the start
	// again, and an earlier one must.
	for _, order := range [][]*Result{{b, a, {Mode: Closed}}, {a, {Mode: Closed}, b}} {
		sum := &Result{Mode: Closed}
		for _, r := range order {
			if err := sum.Merge(r); err != nil {
				t.Fatalf("Merge(start %s, histogram %v): %v", r.Start, r.hist != nil, err)
			}
		}
		if !sum.Start.Equal(early) {
			t.Errorf("merged start %s; want the earliest, %s", sum.Start, early)
		}
	}
	sum := &Result{Mode: Closed}
	for _, r := range []*Result{b, a} {
		if err := sum.Merge(r); err != nil {
			t.Fatal(err)
		}
	}
	if sum.Requests != 2 || sum.Latency.Max != 2*time.Millisecond {
		t.Errorf("merged requests %d, max %s; want 2, 2ms", sum.Requests, sum.Latency.Max)
	}
}
