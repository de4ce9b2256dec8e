package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Change compares one scenario and model between two reports.
type Change struct {
	Scenario, Model      string
	OldStatus, NewStatus Status
	// OldThroughput and NewThroughput are the medians over each report's
	// rounds, in req/s; Ratio is new ÷ old (0 when old served nothing).
	OldThroughput, NewThroughput, Ratio float64
	// OldRounds and NewRounds are each report's rounds' throughputs.
	OldRounds, NewRounds []float64
	// Comparison is the U test of the new rounds against the old ones.
	Comparison Comparison
	// OldUnit and NewUnit are what each report's tables count (msg/s for
	// actor-echo); the comparison shows each side in its own.
	OldUnit, NewUnit Unit
	// OldP99 and NewP99 are the 99th percentile latencies (medians over
	// the rounds); P99Ratio is new ÷ old.
	OldP99, NewP99 time.Duration
	P99Ratio       float64
}

// Regression is the throughput ratio below which a significant fall is a
// regression (and 1/Regression above which a significant rise is called
// faster): a change must be both significant at Alpha and this large.
const Regression = 0.9

// Compare pairs the runs of old and new by scenario and model, in new's
// order, and tests each pair's rounds. Runs present in only one report
// are left out.
func Compare(old, new *Report) []Change {
	type oldRun struct {
		run  ModelRun
		unit Unit
	}
	before := map[[2]string]oldRun{}
	for _, sc := range old.Scenarios {
		for _, run := range sc.Runs {
			before[[2]string{sc.Name, sameModel(run.Model)}] = oldRun{run, sc.Unit}
		}
	}
	var changes []Change
	for _, sc := range new.Scenarios {
		for _, run := range sc.Runs {
			found, ok := before[[2]string{sc.Name, sameModel(run.Model)}]
			if !ok {
				continue
			}
			prev := found.run
			c := Change{
				Scenario: sc.Name, Model: run.Model,
				OldStatus: prev.Status, NewStatus: run.Status,
				OldThroughput: prev.Throughput, NewThroughput: run.Throughput,
				OldRounds: prev.throughputs(), NewRounds: run.throughputs(),
				OldUnit: found.unit, NewUnit: sc.Unit,
				OldP99: prev.LatencyAt(99), NewP99: run.LatencyAt(99),
			}
			c.Comparison = compareRounds(c.OldRounds, c.NewRounds)
			if prev.Throughput > 0 {
				c.Ratio = run.Throughput / prev.Throughput
			}
			if c.OldP99 > 0 {
				c.P99Ratio = float64(c.NewP99) / float64(c.OldP99)
			}
			changes = append(changes, c)
		}
	}
	return changes
}

// Regressed reports whether c is a regression: a run that was ok and now
// is not (errors, failed, crashed), whatever its throughput, since a
// server that crashed late or answered wrongly can still post a high
// req/s; or a throughput that fell below Regression of the old one with a
// significant difference at Alpha.
func (c Change) Regressed() bool {
	if c.OldStatus == StatusOK && c.NewStatus != StatusOK {
		return true
	}
	return c.OldThroughput > 0 && c.Ratio < Regression && c.Comparison.Difference == Significant
}

// WriteComparison writes changes as a table: new ÷ old of the medians,
// marked "~" where the rounds do not differ significantly, with the test's
// p-value, and flags for regressions (Change.Regressed), significant
// improvements beyond 1/Regression, and status changes. It returns how
// many regressions it flagged.
func WriteComparison(w io.Writer, changes []Change) (regressions int, err error) {
	if len(changes) == 0 {
		_, err := fmt.Fprintln(w, "no scenario and model in common")
		return 0, err
	}
	rows := [][]string{{"scenario", "model", "old rate", "new rate", "new÷old", "rounds", "old p99", "new p99", "p99 new÷old", ""}}
	uncalled := false
	for _, c := range changes {
		var flags []string
		switch {
		case c.Regressed():
			flags = append(flags, "REGRESSION")
			regressions++
		case c.OldThroughput > 0 && c.Ratio > 1/Regression && c.Comparison.Difference == Significant:
			flags = append(flags, "faster")
		}
		if c.OldStatus != c.NewStatus {
			flags = append(flags, fmt.Sprintf("status %s → %s", c.OldStatus, c.NewStatus))
		}
		ratio := fmtRatio(c.Ratio)
		switch c.Comparison.Difference {
		case Significant:
			ratio += " (" + fmtP(c.Comparison.P) + ")"
		case Uncalled:
			ratio += " ?"
			uncalled = true
		default:
			ratio += " ~"
		}
		rows = append(rows, []string{c.Scenario, c.Model, c.OldUnit.format(c.OldThroughput), c.NewUnit.format(c.NewThroughput), ratio,
			fmt.Sprintf("%d+%d", len(c.OldRounds), len(c.NewRounds)),
			fmtLatency(c.OldP99), fmtLatency(c.NewP99), fmtRatio(c.P99Ratio), strings.Join(flags, ", ")})
	}
	if err := writeTable(w, "", rows); err != nil {
		return regressions, err
	}
	_, err = fmt.Fprintf(w, "~: no significant difference at α = %.2f (Mann-Whitney U over the rounds); "+
		"REGRESSION: a run no longer ok, or a significant fall below %.0f%%", Alpha, Regression*100)
	if err == nil && uncalled {
		_, err = fmt.Fprintf(w, "; ?: too few rounds to call any difference (%d a side needed)", MinRounds())
	}
	if err == nil {
		_, err = fmt.Fprintln(w, ".")
	}
	return regressions, err
}
