package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/loomrt/loom/load"
)

// unloaded runs a plan's unloaded phase against a server under test with the
// load cfg, and returns its latency percentiles, or nil when no request was
// served or more than 1% failed (a busy machine's stall can time out a
// few), since then it is no reference; and how many requests failed.
func unloaded(ctx context.Context, cfg load.Config, p Plan) ([]Percentile, int64) {
	cfg.Connections, cfg.Requests, cfg.Progress = 0, 0, nil
	cfg.Rate, cfg.Duration = p.UnloadedRate, p.UnloadedDuration
	res, err := load.Run(ctx, cfg)
	if err != nil {
		return nil, 0
	}
	failed := res.Errors.Total()
	if !isReference(res.Requests, failed) {
		return nil, failed
	}
	return percentiles(res), failed
}

// isReference reports whether an unloaded phase that served and failed so
// many requests is a reference: it served some and failed at most 1%.
func isReference(served, failed int64) bool {
	return served > 0 && failed*100 <= served
}

func percentiles(res *load.Result) []Percentile {
	points := make([]Percentile, 0, len(latencyPoints))
	for _, pct := range latencyPoints {
		points = append(points, Percentile{Percentile: pct, Latency: res.Percentile(pct)})
	}
	return points
}

// unloadedNote sets each run's p99 beside the p99 of its unloaded phase:
// "p99 ÷ unloaded p99 (200 req/s for 5s first): adaptive 61ms ÷ 20ms = 3.0×;
// …". A run of several rounds that each kept their unloaded p99 gets the
// median and range of the rounds' own ratios instead, "adaptive 3.0×
// (2.1–4.5×) over 5 rounds": a round's loaded and unloaded phases ran a
// moment apart on the same server, while the median p99 and the median
// round's unloaded p99 may come from rounds minutes apart on a busy machine.
// It returns "" when no run had an unloaded phase.
func unloadedNote(sc ScenarioResult) string {
	var parts []string
	perRound := false
	for _, r := range sc.Runs {
		ratios := roundRatios(r)
		switch loaded, ref := r.LatencyAt(99), r.UnloadedAt(99); {
		case len(ratios) > 1:
			perRound = true
			s := spreadOf(ratios)
			parts = append(parts, fmt.Sprintf("%s %.1f× (%.1f–%.1f×) over %d rounds", r.Model, s.Median, s.Min, s.Max, s.Rounds))
		case ref > 0 && loaded > 0:
			parts = append(parts, fmt.Sprintf("%s %s ÷ %s = %.1f×", r.Model, fmtLatency(loaded), fmtLatency(ref), float64(loaded)/float64(ref)))
		case sc.Plan.UnloadedRate > 0 && r.Status != StatusCrashed && r.Status != StatusFailed:
			parts = append(parts, fmt.Sprintf("%s no unloaded reference (%s of its requests failed)", r.Model, count(r.UnloadedErrors)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	note := fmt.Sprintf("p99 ÷ unloaded p99 (%s req/s for %s on the same server first): %s",
		rate(sc.Plan.UnloadedRate), sc.Plan.UnloadedDuration, strings.Join(parts, "; "))
	if perRound {
		note += " (over rounds: each round's p99 ÷ its own unloaded p99, median and range)"
	}
	return note
}

// roundRatios returns, for each round of r with both, its p99 over its
// unloaded phase's p99.
func roundRatios(r ModelRun) []float64 {
	var ratios []float64
	for _, rd := range r.Rounds {
		if loaded := at(rd.Latency, 99); loaded > 0 && rd.UnloadedP99 > 0 && rd.Requests > 0 {
			ratios = append(ratios, float64(loaded)/float64(rd.UnloadedP99))
		}
	}
	return ratios
}
