package bench

import (
	"strings"
	"testing"
	"time"
)

// p99 is a latency list with only a 99th percentile.
func p99(d time.Duration) []Percentile { return []Percentile{{99, d}} }

// TestVerdictSortsEachRun puts one run in each of the verdict's kinds, at
// the edges between them: a run at exactly 90% of the best is within 10% of
// it, one at exactly 110% with errors is in no class of its own, and a
// capped run is one near its own cap (at most 15% over), not one 16% over.
func TestVerdictSortsEachRun(t *testing.T) {
	capEdge := 1.15 // verdict's factor, multiplied at run time as verdict does
	sc := ScenarioResult{
		Limit: Limit{PerSecond: 2000},
		Runs: []ModelRun{
			{Model: "best", Status: StatusOK, Throughput: 1000, Requests: 1000, Latency: p99(time.Millisecond)},
			{Model: "at-90", Status: StatusOK, Throughput: 900, Requests: 900},
			{Model: "at-110", Status: StatusErrors, Throughput: 1100, Requests: 1100, Errors: 7},
			{Model: "more-but-failing", Status: StatusErrors, Throughput: 1200, Requests: 1200, Errors: 5},
			{Model: "half", Status: StatusOK, Throughput: 500, Requests: 500},
			{Model: "pool:1", Status: StatusOK, Throughput: 114, Requests: 114, ModelCap: 100},
			{Model: "pool:2", Status: StatusOK, Throughput: 116, Requests: 116, ModelCap: 100},
			{Model: "pool:3", Status: StatusOK, Throughput: 900, Requests: 900, ModelCap: 800},
			{Model: "pool:4", Status: StatusOK, Throughput: capEdge * 200, Requests: 230, ModelCap: 200},
			{Model: "idle", Status: StatusOK},
			{Model: "gone", Status: StatusCrashed, Throughput: 5000, Requests: 5000, Failure: "fatal error: boom"},
			{Model: "nothing", Status: StatusOK, Throughput: 3000},
		},
	}
	judge(&sc)
	if sc.Best != "best" {
		t.Fatalf("best = %q; want best (a crashed run and one that served no request never are)", sc.Best)
	}
	for _, want := range []string{
		"best is best at 1,000 req/s (50% of the 2,000 req/s limit); ",
		"at-90, at-110 (7 errors) and pool:3 within 10% of it; ",
		"pool:1 is capped at 100 req/s by its 1 workers; pool:4 is capped at 200 req/s by its 4 workers; ",
		"idle reaches 0.0% of it; ",
		"more-but-failing serves 1.2× as much (1,200 req/s) but fails 5 requests; ",
		"half reaches 50% of it; ",
		"pool:2 reaches 12% of it; ",
		"gone crashed: fatal error: boom",
	} {
		if !strings.Contains(sc.Verdict, want) {
			t.Errorf("verdict %q\nlacks %q", sc.Verdict, want)
		}
	}
	if got := sc.Runs[4].RatioToLimit; got != 0.25 {
		t.Errorf("half: ratio to the limit %v; want 0.25", got)
	}
}

// TestVerdictWithoutACleanRun: with no run free of errors the best is the
// fastest that served, said to have errors; with none that served, the
// verdict says what became of each.
func TestVerdictWithoutACleanRun(t *testing.T) {
	sc := ScenarioResult{Runs: []ModelRun{
		{Model: "slow", Status: StatusErrors, Throughput: 100, Requests: 100, Errors: 3},
		{Model: "fast", Status: StatusErrors, Throughput: 300, Requests: 300, Errors: 4},
	}}
	judge(&sc)
	if want := "fast is best at 300 req/s but with 4 errors; slow reaches 33% of it (3 errors)."; sc.Verdict != want {
		t.Errorf("verdict = %q; want %q", sc.Verdict, want)
	}
	if sc.Runs[0].RatioToLimit != 0 {
		t.Errorf("ratio to a limit of 0: %v; want 0", sc.Runs[0].RatioToLimit)
	}

	sc = ScenarioResult{Runs: []ModelRun{
		{Model: "a", Status: StatusFailed, Failure: "no request served: 9 timeouts"},
		{Model: "b", Status: StatusCrashed, Failure: "fatal error: x\nstack"},
		{Model: "c", Status: StatusOK},
	}}
	judge(&sc)
	want := "No model served this scenario: a failed: no request served: 9 timeouts; b crashed: fatal error: x; c ok."
	if sc.Best != "" || sc.Verdict != want {
		t.Errorf("best %q, verdict %q; want none and %q", sc.Best, sc.Verdict, want)
	}
}

// TestBetter: a throughput more than 0.5% higher wins whatever the latency;
// within 0.5% the lower p99 does.
func TestBetter(t *testing.T) {
	base := &ModelRun{Throughput: 1000, Latency: p99(100 * time.Millisecond)}
	const tie = 0.005
	up, down := 1+tie, 1-tie // as better computes them
	for _, tt := range []struct {
		throughput float64
		p99        time.Duration
		want       bool
	}{
		{1010, time.Second, true},
		{990, time.Millisecond, false},
		{1003, time.Second, false},
		{1003, time.Millisecond, true},
		{997, time.Millisecond, true},
		{997, time.Second, false},
		{1000, 100 * time.Millisecond, false},
		{base.Throughput * up, time.Second, false}, // at the edge: still a tie
		{base.Throughput * down, time.Millisecond, true},
	} {
		r := &ModelRun{Throughput: tt.throughput, Latency: p99(tt.p99)}
		if got := better(r, base); got != tt.want {
			t.Errorf("better(%v req/s p99 %v, than 1000 req/s p99 100ms) = %t; want %t", tt.throughput, tt.p99, got, tt.want)
		}
	}
}

// TestJudgeBestWithoutThroughput: a best run whose throughput rounds to 0
// gives no ratio to it rather than a division by zero.
func TestJudgeBestWithoutThroughput(t *testing.T) {
	sc := ScenarioResult{Runs: []ModelRun{{Model: "a", Status: StatusOK, Requests: 1}}}
	judge(&sc)
	if r := sc.Runs[0].RatioToBest; r != 0 {
		t.Errorf("ratio to a best of 0 req/s: %v; want 0", r)
	}
}

// TestPeerNote sets loom's virtual beside bare net/http only when both
// served: not when loom's run failed or crashed, nor when net/http's
// served nothing.
func TestPeerNote(t *testing.T) {
	runs := func(status Status, bare float64) []ModelRun {
		return []ModelRun{
			{Model: "virtual", Status: status, Throughput: 800},
			{Model: "peer:nethttp", Status: StatusOK, Throughput: bare},
		}
	}
	for _, tt := range []struct {
		runs []ModelRun
		want string
	}{
		{runs(StatusOK, 1000), "loom's virtual runs at 0.80× bare net/http"},
		{runs(StatusErrors, 1000), "loom's virtual runs at 0.80× bare net/http"},
		{runs(StatusFailed, 1000), ""},
		{runs(StatusCrashed, 1000), ""},
		{runs(StatusOK, 0), ""},
		{runs(StatusOK, 1000)[:1], ""},
		{runs(StatusOK, 1000)[1:], ""},
	} {
		if got := peerNote(tt.runs); got != tt.want {
			t.Errorf("peerNote(%+v) = %q; want %q", tt.runs, got, tt.want)
		}
	}
}
