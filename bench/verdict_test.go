package bench

import (
	"strings"
	"testing"
	"time"
)

// p99 is a latency list with only a 99th percentile.
func p99(d time.Duration) []Percentile { return []Percentile{{99, d}} }

// TestVerdictSortsEachRun puts one run of five rounds in each of the
// verdict's kinds: a tie with the best, a significant gap, a faster run that
// fails requests, runs near their own cap (at most 15% over it) and one 16%
// over, one that served nothing and one that crashed.
func TestVerdictSortsEachRun(t *testing.T) {
	capEdge := 1.15 // verdict's factor, multiplied at run time as verdict does
	withCap := func(r ModelRun, cap float64) ModelRun { r.ModelCap = cap; return r }
	failing := roundsRun("more-but-failing", 1200, 1201, 1199, 1200, 1200)
	failing.Status, failing.Errors = StatusErrors, 5
	gone := roundsRun("gone", 5000, 5000, 5000, 5000, 5000)
	gone.Status, gone.Failure = StatusCrashed, "fatal error: boom"
	gone.Rounds[2].Status = StatusCrashed
	sc := ScenarioResult{
		Limit: Limit{PerSecond: 2000},
		Runs: []ModelRun{
			roundsRun("best", 1000, 1001, 999, 1000, 1002),
			roundsRun("same", 1001, 999, 1000, 1002, 998),
			failing,
			roundsRun("half", 500, 501, 499, 500, 500),
			withCap(roundsRun("pool:1", 114, 114, 114, 114, 114), 100),
			withCap(roundsRun("pool:2", 116, 116, 116, 116, 116), 100),
			withCap(roundsRun("pool:4", capEdge*200, capEdge*200, capEdge*200, capEdge*200, capEdge*200), 200),
			{Model: "idle", Status: StatusOK},
			gone,
		},
	}
	judge(&sc)
	if sc.Best != "best" {
		t.Fatalf("best = %q; want best (a crashed run and one that served no request never are)", sc.Best)
	}
	for _, want := range []string{
		"best and same tie for best (no significant difference at α = 0.05); best leads at 1,000 req/s " +
			"(median of 5 rounds, 999–1,002; 50% of the 2,000 req/s limit); ",
		"pool:1 is capped at 100 req/s by its 1 workers; pool:4 is capped at 200 req/s by its 4 workers; ",
		"more-but-failing serves 1.20× as much (1,200 req/s) but fails 5 requests; ",
		"half reaches 50% of best (p = 0.008); ",
		"pool:2 reaches 12% of best (p = 0.008); ",
		"idle served nothing; ",
		"gone crashed in 1 of 5 rounds: fatal error: boom",
	} {
		if !strings.Contains(sc.Verdict, want) {
			t.Errorf("verdict %q\nlacks %q", sc.Verdict, want)
		}
	}
	if got := sc.Runs[3].RatioToLimit; got != 0.25 {
		t.Errorf("half: ratio to the limit %v; want 0.25", got)
	}
	for i, want := range []Standing{StandingBest, StandingTie, StandingFaster, StandingSlower} {
		if got := sc.Runs[i].Standing; got != want {
			t.Errorf("%s: standing %q; want %q", sc.Runs[i].Model, got, want)
		}
	}
	// A run that served nothing and one that crashed are not ranked
	// against the best.
	for _, r := range sc.Runs[7:] {
		if r.Standing != "" || r.RatioToBest != 0 || r.P != 0 {
			t.Errorf("%s: standing %q, ratio to best %v, p %v; want none", r.Model, r.Standing, r.RatioToBest, r.P)
		}
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
	want := "With one round a model, no difference can be called (the U test needs 4 rounds a model at α = 0.05; see --rounds): " +
		"fast has the highest throughput, 300 req/s but with 4 errors; slow reaches 33% of fast (3 errors)."
	if sc.Verdict != want {
		t.Errorf("verdict = %q; want %q", sc.Verdict, want)
	}
	if sc.Runs[0].RatioToLimit != 0 {
		t.Errorf("ratio to a limit of 0: %v; want 0", sc.Runs[0].RatioToLimit)
	}

	// Nor is a run that crashed or failed after serving, however fast.
	for _, status := range []Status{StatusCrashed, StatusFailed} {
		sc = ScenarioResult{Runs: []ModelRun{
			{Model: "slow", Status: StatusErrors, Throughput: 100, Requests: 100, Errors: 3},
			{Model: "gone", Status: status, Throughput: 500, Requests: 500, Failure: "boom"},
		}}
		judge(&sc)
		if sc.Best != "slow" {
			t.Errorf("best %q beside a run that %s after serving; want slow", sc.Best, status)
		}
	}

	sc = ScenarioResult{Runs: []ModelRun{
		{Model: "a", Status: StatusFailed, Failure: "no request served: 9 timeouts"},
		{Model: "b", Status: StatusCrashed, Failure: "fatal error: x\nstack"},
		{Model: "c", Status: StatusOK},
	}}
	judge(&sc)
	want = "No model served this scenario: a failed: no request served: 9 timeouts; b crashed: fatal error: x; c ok."
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

// TestPeerNote sets loom's virtual model beside bare net/http only when both
// served (not when loom's run failed or crashed, nor when net/http's
// served nothing), and says what the test makes of the ratio: significant,
// a tie, or too few rounds to tell.
func TestPeerNote(t *testing.T) {
	runs := func(status Status, bare float64) []ModelRun {
		return []ModelRun{
			{Model: "virtual", Status: status, Throughput: 800},
			{Model: "peer:nethttp", Status: StatusOK, Throughput: bare},
		}
	}
	steady := []float64{1000, 1010, 990, 1005, 995}
	for _, tt := range []struct {
		runs []ModelRun
		want string
	}{
		{runs(StatusOK, 1000), "loom's virtual runs at 0.80× bare net/http (too few rounds to tell)"},
		{runs(StatusErrors, 1000), "loom's virtual runs at 0.80× bare net/http (too few rounds to tell)"},
		{runs(StatusFailed, 1000), ""},
		{runs(StatusCrashed, 1000), ""},
		{runs(StatusOK, 0), ""},
		{runs(StatusOK, 1000)[:1], ""},
		{runs(StatusOK, 1000)[1:], ""},
		{[]ModelRun{roundsRun("virtual", 800, 810, 790, 805, 795), roundsRun("peer:nethttp", steady...)},
			"loom's virtual runs at 0.80× bare net/http (a significant difference, p = 0.008)"},
		{[]ModelRun{roundsRun("virtual", 1002, 992, 1008, 998, 1001), roundsRun("peer:nethttp", steady...)},
			"loom's virtual runs at 1.00× bare net/http (a tie: no significant difference)"},
	} {
		sc := &ScenarioResult{Runs: tt.runs}
		for i := range sc.Runs {
			sc.Runs[i].summariseSpreads()
		}
		if got := peerNote(sc); got != tt.want {
			t.Errorf("peerNote(%+v) = %q; want %q", tt.runs, got, tt.want)
		}
	}
}

// roundsRun is a clean run of model whose rounds served the given
// throughputs, summarised as the runner does.
func roundsRun(model string, throughputs ...float64) ModelRun {
	runs := make([]ModelRun, len(throughputs))
	rounds := make([]Round, len(throughputs))
	for i, tp := range throughputs {
		runs[i] = ModelRun{Model: model, Status: StatusOK, Throughput: tp, Requests: int64(tp), Latency: p99(time.Millisecond)}
		rounds[i] = roundOf(runs[i], i+1, 1)
	}
	return summariseRounds(runs, rounds)
}

// TestVerdictJudgesRounds feeds the verdict synthetic rounds. Two models
// drawn from one distribution tie; a model shifted 20% above another beats
// it; a model whose rounds scatter over 90% beside a steady one makes the
// scenario too noisy to rank, and no winner is named. Removing the
// significance test (ranking by medians) fails the first and the third.
func TestVerdictJudgesRounds(t *testing.T) {
	steady := []float64{1000, 1010, 990, 1005, 995}
	for _, tt := range []struct {
		name      string
		a, b      []float64
		standing  Standing // b's against the best, or a's when b is best
		want, not []string
	}{
		{
			name: "equal", a: steady, b: []float64{1002, 992, 1008, 998, 1001}, standing: StandingTie,
			want: []string{"a and b tie for best (no significant difference at α = 0.05)"},
			not:  []string{"is best", "too noisy"},
		},
		{
			name: "shifted", a: steady, b: []float64{1200, 1210, 1190, 1205, 1195}, standing: StandingSlower,
			want: []string{"b is best at 1,200 req/s (median of 5 rounds, 1,190–1,210)", "a reaches 83% of b (p = 0.008)"},
			not:  []string{"tie", "too noisy"},
		},
		{
			name: "one noisy", a: steady, b: []float64{600, 1500, 900, 1300, 1100}, standing: StandingNoisy,
			want: []string{"The machine was too noisy to rank b and a: a model's rounds spread over up to 82% of its median"},
			not:  []string{"is best", "tie for best"},
		},
	} {
		sc := ScenarioResult{Runs: []ModelRun{roundsRun("a", tt.a...), roundsRun("b", tt.b...)}}
		judge(&sc)
		other := &sc.Runs[1]
		if sc.Best == "b" {
			other = &sc.Runs[0]
		}
		if other.Standing != tt.standing {
			t.Errorf("%s: %s's standing %q; want %q", tt.name, other.Model, other.Standing, tt.standing)
		}
		for _, w := range tt.want {
			if !strings.Contains(sc.Verdict, w) {
				t.Errorf("%s: verdict %q\nlacks %q", tt.name, sc.Verdict, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(sc.Verdict, n) {
				t.Errorf("%s: verdict %q\nsays %q", tt.name, sc.Verdict, n)
			}
		}
	}
}

// TestVerdictAtTheLimit: models within 2% of a known limit tie whatever
// the test says, as the limit bounds them; one below it is ranked.
func TestVerdictAtTheLimit(t *testing.T) {
	sc := ScenarioResult{Limit: Limit{PerSecond: 1000}, Runs: []ModelRun{
		roundsRun("virtual", 995, 996, 994, 995, 996),
		roundsRun("limit:100", 985, 986, 984, 985, 986), // significantly below virtual, but at the limit
		roundsRun("pool:200", 900, 901, 899, 900, 901),
	}}
	judge(&sc)
	want := "virtual and limit:100 reach the limit and tie (within 2.0% of it); virtual leads at 995 req/s " +
		"(median of 5 rounds, 994–996; 99.5% of the 1,000 req/s limit); pool:200 reaches 90% of virtual (p = 0.008)."
	if sc.Verdict != want {
		t.Errorf("verdict\n%q; want\n%q", sc.Verdict, want)
	}
	if got := sc.Runs[1].Standing; got != StandingAtLimit {
		t.Errorf("limit:100's standing %q; want %q", got, StandingAtLimit)
	}
}

// TestAtTheLimitTakesBoth: a run with errors at the limit is faster than a
// best below it, not tied with it: both must reach LimitTie of the limit.
func TestAtTheLimitTakesBoth(t *testing.T) {
	failing := roundsRun("failing", 995, 996, 994, 995, 996)
	failing.Status, failing.Errors = StatusErrors, 5
	sc := ScenarioResult{Limit: Limit{PerSecond: 1000}, Runs: []ModelRun{
		roundsRun("virtual", 900, 901, 899, 900, 901),
		failing,
	}}
	judge(&sc)
	if sc.Best != "virtual" || sc.Runs[1].Standing != StandingFaster {
		t.Errorf("best %q, failing's standing %q; want virtual and %q", sc.Best, sc.Runs[1].Standing, StandingFaster)
	}
}

// TestVerdictTooFewRounds: with one round, or three, no difference can
// be called, and the verdict says so rather than naming a winner.
func TestVerdictTooFewRounds(t *testing.T) {
	for _, n := range []int{1, 3} {
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], b[i] = 1000+float64(i), 500+float64(i)
		}
		sc := ScenarioResult{Runs: []ModelRun{roundsRun("a", a...), roundsRun("b", b...)}}
		judge(&sc)
		if !strings.Contains(sc.Verdict, "no difference can be called (the U test needs 4 rounds a model at α = 0.05") ||
			strings.Contains(sc.Verdict, "is best") {
			t.Errorf("%d rounds: verdict %q; want no difference called", n, sc.Verdict)
		}
		if got := sc.Runs[1].Standing; got != StandingUncalled {
			t.Errorf("%d rounds: b's standing %q; want %q", n, got, StandingUncalled)
		}
	}
}

// TestVerdictCapsOnlyWhatItsCapExplains: a run is "capped" when it serves
// at most 15% over its cap and under 90% of the best, and the test does
// not tie it with the best or put it at the limit; each case here breaks
// one of those conditions alone.
func TestVerdictCapsOnlyWhatItsCapExplains(t *testing.T) {
	withCap := func(r ModelRun, cap float64) ModelRun { r.ModelCap = cap; return r }
	for _, tc := range []struct {
		name  string
		limit float64
		runs  []ModelRun
		want  string
	}{
		{
			// A median of 0 (a round served, four did not) is within any
			// multiple of no cap at all.
			name: "no cap",
			runs: []ModelRun{roundsRun("best", 1000, 1001, 999, 1000, 1002), roundsRun("sparse", 0, 0, 0, 0, 50)},
			want: "sparse reaches 0.0% of best (p = 0.008)",
		},
		{
			name: "near the best",
			runs: []ModelRun{roundsRun("best", 1000, 1001, 999, 1000, 1002), withCap(roundsRun("pool:8", 950, 951, 949, 950, 951), 1000)},
			want: "pool:8 reaches 95% of best (p = 0.008)",
		},
		{
			// Rounds that overlap: 11% below the best's median, but not
			// significantly, and each model's rounds within 10%.
			name: "tied with the best",
			runs: []ModelRun{roundsRun("best", 905, 910, 1000, 1001, 1003), withCap(roundsRun("pool:8", 886, 888, 890, 965, 970), 890)},
			want: "best and pool:8 tie for best",
		},
		{
			name:  "at the limit",
			limit: 1000,
			runs:  []ModelRun{roundsRun("best", 1100, 1101, 1099, 1100, 1102), withCap(roundsRun("pool:8", 985, 986, 984, 985, 986), 985)},
			want:  "best and pool:8 reach the limit and tie",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := ScenarioResult{Limit: Limit{PerSecond: tc.limit}, Runs: tc.runs}
			judge(&sc)
			if !strings.Contains(sc.Verdict, tc.want) || strings.Contains(sc.Verdict, "capped") {
				t.Errorf("verdict %q; want %q and no cap named", sc.Verdict, tc.want)
			}
		})
	}
}

// TestVerdictTiesAndLimitTogether: a model tied with the best below the
// limit and one at the limit beside it: all three tie for best, and the
// verdict names both reasons.
func TestVerdictTiesAndLimitTogether(t *testing.T) {
	sc := ScenarioResult{Limit: Limit{PerSecond: 1000}, Runs: []ModelRun{
		roundsRun("best", 981, 983, 1000, 1001, 1002),
		roundsRun("near", 985, 985, 985, 985, 985),
		roundsRun("tied", 955, 958, 960, 990, 995),
	}}
	judge(&sc)
	if got := []Standing{sc.Runs[1].Standing, sc.Runs[2].Standing}; got[0] != StandingAtLimit || got[1] != StandingTie {
		t.Fatalf("standings %q; want %q and %q", got, StandingAtLimit, StandingTie)
	}
	want := "best, near and tied tie for best (no significant difference at α = 0.05, or within 2.0% of the limit)"
	if !strings.Contains(sc.Verdict, want) {
		t.Errorf("verdict %q\nlacks %q", sc.Verdict, want)
	}
}

// TestVerdictUncalledBesideEnoughRounds: the best has five rounds, another
// model one; nothing can be called against that one, and the verdict says
// so though the best's own rounds would do.
func TestVerdictUncalledBesideEnoughRounds(t *testing.T) {
	sc := ScenarioResult{Runs: []ModelRun{roundsRun("best", 1000, 1001, 999, 1000, 1002), roundsRun("once", 500)}}
	judge(&sc)
	for _, want := range []string{"no difference can be called", "once reaches 50% of best"} {
		if !strings.Contains(sc.Verdict, want) {
			t.Errorf("verdict %q\nlacks %q", sc.Verdict, want)
		}
	}
}
