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
// …". It returns "" when no run had an unloaded phase.
func unloadedNote(sc ScenarioResult) string {
	var parts []string
	for _, r := range sc.Runs {
		switch loaded, ref := r.LatencyAt(99), r.UnloadedAt(99); {
		case ref > 0 && loaded > 0:
			parts = append(parts, fmt.Sprintf("%s %s ÷ %s = %.1f×", r.Model, fmtLatency(loaded), fmtLatency(ref), float64(loaded)/float64(ref)))
		case sc.Plan.UnloadedRate > 0 && r.Status != StatusCrashed && r.Status != StatusFailed:
			parts = append(parts, fmt.Sprintf("%s no unloaded reference (%s of its requests failed)", r.Model, count(r.UnloadedErrors)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("p99 ÷ unloaded p99 (%s req/s for %s on the same server first): %s",
		rate(sc.Plan.UnloadedRate), sc.Plan.UnloadedDuration, strings.Join(parts, "; "))
}
