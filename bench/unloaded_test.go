package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A plan with an unloaded phase records its latency beside the loaded one,
// and the reports set the two p99s side by side; a plan without records
// nothing.
func TestRunMeasuresTheUnloadedPhase(t *testing.T) {
	report := runTest(t, "test-unloaded", "test-ok")
	byName := map[string]ScenarioResult{}
	for _, sc := range report.Scenarios {
		byName[sc.Name] = sc
	}
	withPhase, without := byName["test-unloaded"], byName["test-ok"]
	if len(withPhase.Runs) != 1 {
		t.Fatalf("test-unloaded: %d runs; want 1", len(withPhase.Runs))
	}
	run := withPhase.Runs[0]
	if run.Status != StatusOK {
		t.Fatalf("test-unloaded: status %s (%s); want ok", run.Status, run.Failure)
	}
	if run.UnloadedAt(99) <= 0 || run.UnloadedAt(50) > run.UnloadedAt(99) {
		t.Errorf("unloaded p50 %v, p99 %v; want 0 < p50 <= p99", run.UnloadedAt(50), run.UnloadedAt(99))
	}
	for _, r := range without.Runs {
		if r.Unloaded != nil {
			t.Errorf("test-ok %s: unloaded latency %v; want none without an unloaded phase", r.Model, r.Unloaded)
		}
	}
	var text bytes.Buffer
	if err := WriteText(&text, report); err != nil {
		t.Fatal(err)
	}
	if want := "p99 ÷ unloaded p99 (50.0 req/s for 300ms on the same server first): virtual "; !strings.Contains(text.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, text.String())
	}
	if got := strings.Count(text.String(), "unloaded p99"); got != 1 {
		t.Errorf("text report names the unloaded p99 %d times; want once, for test-unloaded", got)
	}
}

// TestUnloadedNote: a run with both p99s gets their ratio; a run of a plan
// with an unloaded phase but no reference says so, unless it crashed or
// failed; a plan without the phase gets no note.
func TestUnloadedNote(t *testing.T) {
	p99 := func(d time.Duration) []Percentile { return []Percentile{{Percentile: 99, Latency: d}} }
	sc := ScenarioResult{
		Plan: Plan{UnloadedRate: 200, UnloadedDuration: 5 * time.Second},
		Runs: []ModelRun{
			{Model: "adaptive", Status: StatusOK, Latency: p99(60 * time.Millisecond), Unloaded: p99(20 * time.Millisecond)},
			{Model: "pool", Status: StatusOK, Latency: p99(60 * time.Millisecond), UnloadedErrors: 3},
			{Model: "limit", Status: StatusOK, Unloaded: p99(20 * time.Millisecond), UnloadedErrors: 4},
			{Model: "threads", Status: StatusCrashed, Latency: p99(time.Millisecond)},
			{Model: "virtual", Status: StatusFailed},
		},
	}
	want := "p99 ÷ unloaded p99 (200 req/s for 5s on the same server first): adaptive 60ms ÷ 20ms = 3.0×; " +
		"pool no unloaded reference (3 of its requests failed); limit no unloaded reference (4 of its requests failed)"
	if got := unloadedNote(sc); got != want {
		t.Errorf("unloadedNote =\n%q; want\n%q", got, want)
	}
	sc.Plan.UnloadedRate = 0
	sc.Runs = sc.Runs[1:]
	if got := unloadedNote(sc); got != "" {
		t.Errorf("unloadedNote without an unloaded phase = %q; want none", got)
	}
}

// TestUnloadedNoteOverRounds: a run of several rounds, each with its own
// unloaded p99, gets the median and range of the rounds' own ratios, not
// its median p99 over the median round's reference; a round without a
// reference, or without a served request, is left out.
func TestUnloadedNoteOverRounds(t *testing.T) {
	p99 := func(d time.Duration) []Percentile { return []Percentile{{Percentile: 99, Latency: d}} }
	round := func(loaded, ref time.Duration) Round {
		return Round{Requests: 1, Latency: p99(loaded), UnloadedP99: ref}
	}
	sc := ScenarioResult{
		Plan: Plan{UnloadedRate: 200, UnloadedDuration: 2 * time.Second},
		Runs: []ModelRun{{
			Model: "limit", Status: StatusErrors,
			Latency: p99(60 * time.Millisecond), Unloaded: p99(10 * time.Millisecond), // 6×, which no round saw
			Rounds: []Round{
				round(20*time.Millisecond, 10*time.Millisecond),            // 2×
				round(60*time.Millisecond, 40*time.Millisecond),            // 1.5×
				round(90*time.Millisecond, 30*time.Millisecond),            // 3×
				round(50*time.Millisecond, 0),                              // no reference
				{Latency: p99(time.Second), UnloadedP99: time.Millisecond}, // nothing served
			},
		}},
	}
	want := "p99 ÷ unloaded p99 (200 req/s for 2s on the same server first): limit 2.0× (1.5–3.0×) over 3 rounds " +
		"(over rounds: each round's p99 ÷ its own unloaded p99, median and range)"
	if got := unloadedNote(sc); got != want {
		t.Errorf("unloadedNote =\n%q; want\n%q", got, want)
	}
}

// TestIsReference takes the 1% rule at its edge: 1 failure in 100 served
// leaves a reference, 2 do not, and nothing served never is.
func TestIsReference(t *testing.T) {
	for _, tc := range []struct {
		served, failed int64
		want           bool
	}{
		{0, 0, false},
		{1, 0, true},
		{100, 1, true},
		{100, 2, false},
		{99, 1, false},
		{1000, 10, true},
		{1000, 11, false},
	} {
		if got := isReference(tc.served, tc.failed); got != tc.want {
			t.Errorf("isReference(%d served, %d failed) = %t; want %t", tc.served, tc.failed, got, tc.want)
		}
	}
}
