package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestCompare pairs runs by scenario and model and tests their rounds: a
// fall of 20% over five steady rounds each is a regression, a doubling is
// faster, and a fall of 20% in medians whose rounds scatter is neither.
func TestCompare(t *testing.T) {
	old := sampleReport()
	cur := sampleReport()
	old.Scenarios[0].Runs[0] = roundsRun("virtual", 988, 987, 989, 986, 990)
	cur.Scenarios[0].Runs[0] = roundsRun("virtual", 790, 791, 789, 792, 788) // a regression
	old.Scenarios[0].Runs[1] = roundsRun("pool:16", 158, 158, 159, 157, 158)
	cur.Scenarios[0].Runs[1] = roundsRun("pool:16", 316, 316, 317, 315, 316) // doubled
	old.Scenarios[0].Runs[3] = roundsRun("limit:10", 100, 101, 99, 100, 100)
	cur.Scenarios[0].Runs[3] = roundsRun("limit:10", 40, 180, 80, 130, 60) // median 80%, but noise
	cur.Scenarios[1].Runs = cur.Scenarios[1].Runs[:1]                      // cpu pool:16 missing from the new report
	cur.Scenarios[1].Runs[0].Status = StatusErrors                         // cpu virtual: as fast, but now with errors

	changes := Compare(old, cur)
	if got, want := len(changes), 5; got != want {
		t.Fatalf("len(changes) = %d; want %d (4 cask-sleep + 1 cpu)", got, want)
	}
	tests := []struct {
		i     int
		model string
		ratio float64
		diff  Difference
	}{
		{0, "virtual", 790.0 / 988, Significant},
		{1, "pool:16", 2, Significant},
		{2, "thread-per-task", 0, Uncalled}, // crashed both times, once: nothing to divide by
		{3, "limit:10", 0.8, Noisy},
		{4, "virtual", 1, Uncalled},
	}
	for _, tt := range tests {
		c := changes[tt.i]
		if c.Model != tt.model || !near(c.Ratio, tt.ratio) || c.Comparison.Difference != tt.diff {
			t.Errorf("changes[%d] = %s ratio %.3f, difference %d; want %s ratio %.3f, difference %d",
				tt.i, c.Model, c.Ratio, c.Comparison.Difference, tt.model, tt.ratio, tt.diff)
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
	for _, want := range []string{"REGRESSION", "faster", "0.80 (p = 0.008)", "2.00 (p = 0.008)", "0.80 ~", "5+5", "status ok → errors"} {
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

// failAt is a writer whose writes all succeed but the one that holds
// failing, which fails once.
type failAt struct {
	failing string
	failed  bool
	b       bytes.Buffer
}

var errWrite = errors.New("write failed")

func (w *failAt) Write(p []byte) (int, error) {
	if !w.failed && bytes.Contains(p, []byte(w.failing)) {
		w.failed = true
		return 0, errWrite
	}
	return w.b.Write(p)
}

// TestWriteComparisonReportsAFailedWrite fails each line after the table
// once: the error is returned even where the writes after it succeed.
func TestWriteComparisonReportsAFailedWrite(t *testing.T) {
	// Too few rounds a side: the "?" note follows the legend.
	changes := []Change{{Scenario: "s", Model: "m", OldStatus: StatusOK, NewStatus: StatusOK, OldThroughput: 100, NewThroughput: 100, Ratio: 1,
		OldRounds: []float64{100}, NewRounds: []float64{100}, Comparison: Comparison{Difference: Uncalled}}}
	for _, failing := range []string{"~: no significant", "?: too few rounds", ".\n"} {
		w := &failAt{failing: failing}
		if _, err := WriteComparison(w, changes); !errors.Is(err, errWrite) {
			t.Errorf("write of %q failing: %v; want %v", failing, err, errWrite)
		}
	}
}
