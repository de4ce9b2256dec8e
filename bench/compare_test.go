package bench

import (
	"bytes"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	old := sampleReport()
	cur := sampleReport()
	cur.Scenarios[0].Runs[0].Throughput = 790         // virtual: 987.5 → 790, a regression
	cur.Scenarios[0].Runs[1].Throughput = 158.25 * 2  // pool:16 doubled
	cur.Scenarios[1].Runs = cur.Scenarios[1].Runs[:1] // cpu pool:16 missing from the new report
	cur.Scenarios[1].Runs[0].Status = StatusErrors    // cpu virtual: as fast, but now with errors

	changes := Compare(old, cur)
	if got, want := len(changes), 5; got != want {
		t.Fatalf("len(changes) = %d; want %d (4 cask-sleep + 1 cpu)", got, want)
	}
	tests := []struct {
		i     int
		model string
		ratio float64
	}{
		{0, "virtual", 0.8},
		{1, "pool:16", 2},
		{2, "thread-per-task", 0}, // crashed both times: nothing to divide by
		{4, "virtual", 1},
	}
	for _, tt := range tests {
		c := changes[tt.i]
		if c.Model != tt.model || !near(c.Ratio, tt.ratio) {
			t.Errorf("changes[%d] = %s ratio %.3f; want %s ratio %.3f", tt.i, c.Model, c.Ratio, tt.model, tt.ratio)
		}
	}
	var b bytes.Buffer
	regressions, err := WriteComparison(&b, changes)
	if err != nil {
		t.Fatal(err)
	}
	if regressions != 2 {
		t.Errorf("regressions = %d; want 2 (cask-sleep virtual slower, cpu virtual ok → errors)\n%s", regressions, b.String())
	}
	for _, want := range []string{"REGRESSION", "faster", "0.80", "2.00", "status ok → errors"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, b.String())
		}
	}
}

// TestComparePairsStdWithTheBareSpec: "std/virtual" is "virtual", so a run
// that names the engine is compared with one from before engines existed;
// "nbio/virtual" is another model.
func TestComparePairsStdWithTheBareSpec(t *testing.T) {
	old, cur := sampleReport(), sampleReport()
	cur.Scenarios[0].Runs[0].Model = "std/virtual"
	cur.Scenarios[0].Runs[1].Model = "nbio/pool:16"
	var models []string
	for _, c := range Compare(old, cur) {
		if c.Scenario == cur.Scenarios[0].Name {
			models = append(models, c.Model)
		}
	}
	if len(models) == 0 || models[0] != "std/virtual" || strings.Contains(strings.Join(models, " "), "nbio/pool:16") {
		t.Errorf("compared models %q; want std/virtual paired with virtual, and nbio/pool:16 unpaired", models)
	}
}
