package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loomrt/loom"
)

// judge fills in each run's ratios, the best model and the verdict of a
// scenario's runs.
func judge(sr *ScenarioResult) {
	best := bestRun(sr.Runs)
	for i := range sr.Runs {
		r := &sr.Runs[i]
		r.Rate = sr.Unit.of(r.Throughput)
		if sr.Limit.PerSecond > 0 {
			r.RatioToLimit = r.Throughput / sr.Limit.PerSecond
		}
		if best != nil && best.Throughput > 0 {
			r.RatioToBest = r.Throughput / best.Throughput
		}
	}
	if best != nil {
		sr.Best = best.Model
	}
	sr.Verdict = verdict(sr, best)
	if steps := stepVerdict(sr); steps != "" {
		sr.Verdict += " " + steps
	}
}

// bestRun is the fastest run that served without errors, or, if none did,
// the fastest that served at all. Crashed runs never count. Throughputs
// within 0.5% of each other are a tie, which the lower p99 latency breaks:
// a closed loop at its limit gives several models the same rate.
func bestRun(runs []ModelRun) *ModelRun {
	var best, bestAny *ModelRun
	for i := range runs {
		r := &runs[i]
		if r.Status == StatusCrashed || r.Status == StatusFailed || r.Requests == 0 {
			continue
		}
		if better(r, bestAny) {
			bestAny = r
		}
		if r.Status == StatusOK && better(r, best) {
			best = r
		}
	}
	if best == nil {
		return bestAny
	}
	return best
}

// better reports whether r beats the current best (nil: anything does).
func better(r, best *ModelRun) bool {
	if best == nil {
		return true
	}
	const tie = 0.005
	switch {
	case r.Throughput > best.Throughput*(1+tie):
		return true
	case r.Throughput < best.Throughput*(1-tie):
		return false
	}
	return r.LatencyAt(99) < best.LatencyAt(99)
}

// verdict says in one sentence what the runs show: the winner and its
// distance to the limit, then what held each other model back.
func verdict(sr *ScenarioResult, best *ModelRun) string {
	if best == nil {
		var why []string
		for _, r := range sr.Runs {
			why = append(why, r.Model+" "+describeRun(r))
		}
		return "No model served this scenario: " + strings.Join(why, "; ") + "."
	}
	var b strings.Builder
	unit := sr.Unit
	fmt.Fprintf(&b, "%s is best at %s", best.Model, unit.format(best.Throughput))
	if sr.Limit.PerSecond > 0 {
		fmt.Fprintf(&b, " (%s of the %s limit)", percent(best.RatioToLimit), unit.format(sr.Limit.PerSecond))
	}
	if best.Status == StatusErrors {
		fmt.Fprintf(&b, " but with %s errors", count(best.Errors))
	}

	var close, capped, slower, broken []string
	for _, r := range sr.Runs {
		if r.Model == best.Model {
			continue
		}
		switch {
		case r.Status == StatusCrashed || r.Status == StatusFailed:
			broken = append(broken, r.Model+" "+describeRun(r))
		case r.ModelCap > 0 && r.Throughput <= 1.15*r.ModelCap && r.RatioToBest < 0.9:
			capped = append(capped, fmt.Sprintf("%s is capped at %s by %s%s",
				r.Model, unit.format(r.ModelCap), boundName(r.Model), errorNote(r)))
		case r.RatioToBest > 1.1: // faster than the best clean run, but with errors
			slower = append(slower, fmt.Sprintf("%s serves %.1f× as much (%s) but fails %s requests",
				r.Model, r.RatioToBest, unit.format(r.Throughput), count(r.Errors)))
		case r.RatioToBest >= 0.9:
			close = append(close, r.Model+errorNote(r))
		default:
			slower = append(slower, fmt.Sprintf("%s reaches %s of it%s", r.Model, percent(r.RatioToBest), errorNote(r)))
		}
	}
	if len(close) > 0 {
		fmt.Fprintf(&b, "; %s within 10%% of it", joinAnd(close))
	}
	for _, group := range [][]string{capped, slower, broken} {
		if len(group) > 0 {
			b.WriteString("; " + strings.Join(group, "; "))
		}
	}
	for _, note := range []string{peerNote(sr.Runs), idleVerdict(sr.Runs)} {
		if note != "" {
			b.WriteString("; " + note)
		}
	}
	if note := ratioNote(sr); note != "" {
		b.WriteString("; " + note)
	}
	b.WriteString(".")
	return b.String()
}

// peerNote sets loom's virtual model beside bare net/http, when both ran.
func peerNote(runs []ModelRun) string {
	var loom, bare *ModelRun
	for i := range runs {
		switch sameModel(runs[i].Model) {
		case "virtual":
			loom = &runs[i]
		case "peer:nethttp":
			bare = &runs[i]
		}
	}
	if loom == nil || bare == nil || bare.Throughput == 0 || loom.Status == StatusFailed || loom.Status == StatusCrashed {
		return ""
	}
	return fmt.Sprintf("loom's virtual runs at %.2f× bare net/http", loom.Throughput/bare.Throughput)
}

// ratioNote states the scenario's Ratios whose two models both served:
// "pool ÷ peer:protoactor = 2.91×".
func ratioNote(sr *ScenarioResult) string {
	served := func(model string) *ModelRun {
		for i := range sr.Runs {
			if r := &sr.Runs[i]; r.Model == model && r.Throughput > 0 && r.Status != StatusFailed && r.Status != StatusCrashed {
				return r
			}
		}
		return nil
	}
	var parts []string
	for _, pair := range sr.ratios {
		a, b := served(pair[0]), served(pair[1])
		if a != nil && b != nil {
			parts = append(parts, fmt.Sprintf("%s ÷ %s = %.2f×", pair[0], pair[1], a.Throughput/b.Throughput))
		}
	}
	return strings.Join(parts, ", ")
}

// boundName says what bounds a model: "its 16 workers", "its limit of 100".
func boundName(model string) string {
	_, spec := splitModel(model)
	if s, err := loom.ParseSpec(spec); err == nil && s.Kind == loom.KindLimit {
		return fmt.Sprintf("its limit of %d", Concurrency(model))
	}
	return fmt.Sprintf("its %d workers", Concurrency(model))
}

// describeRun says briefly what became of a run that did not serve.
func describeRun(r ModelRun) string {
	switch r.Status {
	case StatusCrashed:
		return "crashed: " + firstLine(r.Failure, 120)
	case StatusFailed:
		return "failed: " + firstLine(r.Failure, 120)
	}
	return string(r.Status)
}

func errorNote(r ModelRun) string {
	if r.Errors == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s errors)", count(r.Errors))
}

// rate formats a throughput: "1,000", "38.4", "0.9".
func rate(perSecond float64) string {
	if perSecond >= 100 {
		return count(int64(perSecond + 0.5))
	}
	return fmt.Sprintf("%.1f", perSecond)
}

// percent formats a ratio as a percentage: 0.985 → "98.5%", 0.42 → "42%".
func percent(ratio float64) string {
	p := ratio * 100
	if p > 95 && p < 99.95 && p != float64(int(p)) { // 98.5% and 99% differ; 99.95% would print as 100.0%
		return fmt.Sprintf("%.1f%%", p)
	}
	if p < 10 {
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

// joinAnd joins "a", "b", "c" as "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func sortedStrings(s []string) []string {
	slices.Sort(s)
	return s
}
