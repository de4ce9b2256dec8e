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
	// OldThroughput and NewThroughput are req/s; Ratio is new ÷ old (0 when
	// old served nothing).
	OldThroughput, NewThroughput, Ratio float64
	// OldUnit and NewUnit are what each report's tables count (msg/s for
	// actor-echo); the comparison shows each side in its own.
	OldUnit, NewUnit Unit
	// OldP99 and NewP99 are the 99th percentile latencies; P99Ratio is
	// new ÷ old.
	OldP99, NewP99 time.Duration
	P99Ratio       float64
}

// Regression is the throughput ratio below which Compare's table flags a
// change as a regression (and 1/Regression above which as an improvement).
const Regression = 0.9

// Compare pairs the runs of old and new by scenario and model, in new's
// order. Runs present in only one report are left out.
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
				OldUnit: found.unit, NewUnit: sc.Unit,
				OldP99: prev.LatencyAt(99), NewP99: run.LatencyAt(99),
			}
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

// WriteComparison writes changes as a table, flagging throughput that fell
// below Regression of the old figure or rose above its inverse, and status
// changes. It returns how many regressions it flagged: a run that was ok
// and now is not (errors, failed, crashed) is one whatever its throughput,
// since a server that crashed late or answered wrongly can still post a
// high req/s.
func WriteComparison(w io.Writer, changes []Change) (regressions int, err error) {
	rows := [][]string{{"scenario", "model", "old rate", "new rate", "new÷old", "old p99", "new p99", "p99 new÷old", ""}}
	for _, c := range changes {
		var flags []string
		broke := c.OldStatus == StatusOK && c.NewStatus != StatusOK
		switch {
		case broke || c.OldThroughput > 0 && c.Ratio < Regression:
			flags = append(flags, "REGRESSION")
			regressions++
		case c.OldThroughput > 0 && c.Ratio > 1/Regression:
			flags = append(flags, "faster")
		}
		if c.OldStatus != c.NewStatus {
			flags = append(flags, fmt.Sprintf("status %s → %s", c.OldStatus, c.NewStatus))
		}
		rows = append(rows, []string{c.Scenario, c.Model, c.OldUnit.format(c.OldThroughput), c.NewUnit.format(c.NewThroughput), fmtRatio(c.Ratio),
			fmtLatency(c.OldP99), fmtLatency(c.NewP99), fmtRatio(c.P99Ratio), strings.Join(flags, ", ")})
	}
	if len(changes) == 0 {
		_, err := fmt.Fprintln(w, "no scenario and model in common")
		return 0, err
	}
	return regressions, writeTable(w, "", rows)
}
