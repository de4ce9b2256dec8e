package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loomrt/loom"
)

// judge fills in each run's ratios and standing, the best model and the
// verdict of a scenario's runs.
func judge(sr *ScenarioResult) {
	for i := range sr.Runs {
		if r := &sr.Runs[i]; r.ThroughputSpread.Rounds == 0 {
			r.summariseSpreads()
		}
	}
	best := bestRun(sr.Runs)
	for i := range sr.Runs {
		r := &sr.Runs[i]
		r.Rate = sr.Unit.of(r.Throughput)
		r.RatioToLimit, r.RatioToBest, r.Standing, r.P = 0, 0, "", 0
		if sr.Limit.PerSecond > 0 {
			r.RatioToLimit = r.Throughput / sr.Limit.PerSecond
		}
		if best == nil || broken(r) || r.Requests == 0 {
			continue
		}
		if best.Throughput > 0 {
			r.RatioToBest = r.Throughput / best.Throughput
		}
		if r == best {
			r.Standing = StandingBest
			continue
		}
		c := sr.compare(best, r)
		r.Standing, r.P = standingOf(c, r.Throughput > best.Throughput), c.P
	}
	if best != nil {
		sr.Best = best.Model
	}
	sr.Verdict = verdict(sr, best)
	if steps := stepVerdict(sr); steps != "" {
		sr.Verdict += " " + steps
	}
}

// compare tests two models' rounds by compareRounds, except that two
// models both at LimitTie of the scenario's limit tie whatever the test
// says: the limit bounds them, not the models.
func (sr *ScenarioResult) compare(a, b *ModelRun) Comparison {
	c := compareRounds(a.throughputs(), b.throughputs())
	if l := sr.Limit.PerSecond; l > 0 && a.Throughput >= LimitTie*l && b.Throughput >= LimitTie*l {
		c.Difference = AtLimit
	}
	return c
}

func standingOf(c Comparison, faster bool) Standing {
	switch c.Difference {
	case Significant:
		if faster {
			return StandingFaster
		}
		return StandingSlower
	case Same:
		return StandingTie
	case AtLimit:
		return StandingAtLimit
	case Noisy:
		return StandingNoisy
	}
	return StandingUncalled
}

func broken(r *ModelRun) bool { return r.Status == StatusCrashed || r.Status == StatusFailed }

// bestRun is the run with the highest median throughput among those that
// served without errors, or, if none did, among all that served. Crashed
// and failed runs never count. Medians within 0.5% of each other go to the
// lower p99: a closed loop at its limit gives several models the same rate.
// The best is only the model the others are tested against: whether it
// beats them is the test's to say (judge).
func bestRun(runs []ModelRun) *ModelRun {
	var best, bestAny *ModelRun
	for i := range runs {
		r := &runs[i]
		if broken(r) || r.Requests == 0 {
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

// better reports whether r leads the current best (nil: anything does).
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

// verdict says in one sentence what the runs show. A model beats another
// only by a significant difference (compareRounds); the models that do
// not differ significantly from the best tie with it when their rounds
// are steady, and when they are not, the verdict says the machine was too
// noisy to rank them and names no winner. Then what held each other model
// back: its own cap, a significant gap, errors, a crash.
func verdict(sr *ScenarioResult, best *ModelRun) string {
	if best == nil {
		var why []string
		for _, r := range sr.Runs {
			why = append(why, r.Model+" "+describeRun(r))
		}
		return "No model served this scenario: " + strings.Join(why, "; ") + "."
	}
	unit := sr.Unit
	var ties, atLimit, noisy, uncalled, capped, slower, broke []string
	var noisyRuns, uncalledRuns []*ModelRun
	for i := range sr.Runs {
		r := &sr.Runs[i]
		if r == best {
			continue
		}
		isCapped := r.ModelCap > 0 && r.Throughput <= 1.15*r.ModelCap && r.RatioToBest < 0.9
		switch {
		case broken(r):
			broke = append(broke, r.Model+" "+describeRun(*r))
		case r.Requests == 0:
			slower = append(slower, r.Model+" served nothing")
		case isCapped && r.Standing != StandingTie && r.Standing != StandingAtLimit:
			capped = append(capped, fmt.Sprintf("%s is capped at %s by %s%s",
				r.Model, unit.format(r.ModelCap), boundName(r.Model), errorNote(*r)))
		case r.Standing == StandingTie:
			ties = append(ties, r.Model+errorNote(*r))
		case r.Standing == StandingAtLimit:
			atLimit = append(atLimit, r.Model+errorNote(*r))
		case r.Standing == StandingNoisy:
			noisy = append(noisy, r.Model+errorNote(*r))
			noisyRuns = append(noisyRuns, r)
		case r.Standing == StandingUncalled:
			uncalled = append(uncalled, fmt.Sprintf("%s reaches %s of %s%s", r.Model, percent(r.RatioToBest), best.Model, errorNote(*r)))
			uncalledRuns = append(uncalledRuns, r)
		case r.Standing == StandingFaster:
			slower = append(slower, fmt.Sprintf("%s serves %.2f× as much (%s) but fails %s requests",
				r.Model, r.RatioToBest, unit.format(r.Throughput), count(r.Errors)))
		default:
			slower = append(slower, fmt.Sprintf("%s reaches %s of %s (%s)%s",
				r.Model, percent(r.RatioToBest), best.Model, fmtP(r.P), errorNote(*r)))
		}
	}

	var b strings.Builder
	var about []string
	if s := best.ThroughputSpread; s.Rounds > 1 {
		about = append(about, fmt.Sprintf("median of %d rounds, %s–%s", s.Rounds, rate(unit.of(s.Min)), rate(unit.of(s.Max))))
	}
	if sr.Limit.PerSecond > 0 {
		about = append(about, fmt.Sprintf("%s of the %s limit", percent(best.RatioToLimit), unit.format(sr.Limit.PerSecond)))
	}
	figure := unit.format(best.Throughput)
	if len(about) > 0 {
		figure += " (" + strings.Join(about, "; ") + ")"
	}
	if best.Status == StatusErrors {
		figure += fmt.Sprintf(" but with %s errors", count(best.Errors))
	}
	rounds := best.ThroughputSpread.Rounds
	leaders := append(append([]string{best.Model}, atLimit...), ties...)
	switch {
	case len(noisyRuns) > 0:
		// Too noisy to rank: no winner is named.
		group := append([]string{best.Model}, noisy...)
		within, between := best.ThroughputSpread.Relative(), 0.0
		for _, r := range noisyRuns {
			within = max(within, r.ThroughputSpread.Relative())
			between = max(between, 1-r.RatioToBest, r.RatioToBest-1)
		}
		fmt.Fprintf(&b, "The machine was too noisy to rank %s: a model's rounds spread over up to %s of its median", joinAnd(group), fmtSpreadPercent(within))
		if within > between {
			fmt.Fprintf(&b, ", more than the %s between their medians", fmtSpreadPercent(between))
		} else {
			fmt.Fprintf(&b, ", and their medians differ by up to %s without a significant difference", fmtSpreadPercent(between))
		}
		fmt.Fprintf(&b, " (α = %.2f); %s has the highest median, %s", Alpha, best.Model, figure)
		if len(leaders) > 1 {
			fmt.Fprintf(&b, "; %s tie with it", joinAnd(leaders[1:]))
		}
	case len(uncalledRuns) > 0 || !callable(rounds, rounds):
		fmt.Fprintf(&b, "%s, no difference can be called (the U test needs %d rounds a model at α = %.2f; see --rounds): %s has the highest throughput, %s",
			roundsPhrase(rounds), MinRounds(), Alpha, best.Model, figure)
		if len(uncalled) > 0 {
			b.WriteString("; " + strings.Join(uncalled, "; "))
		}
		if len(leaders) > 1 {
			fmt.Fprintf(&b, "; %s tie with it", joinAnd(leaders[1:]))
		}
	case len(atLimit) > 0 && len(ties) == 0:
		fmt.Fprintf(&b, "%s reach the limit and tie (within %s of it); %s leads at %s", joinAnd(leaders), percent(1-LimitTie), best.Model, figure)
	case len(leaders) > 1:
		fmt.Fprintf(&b, "%s tie for best (no significant difference at α = %.2f", joinAnd(leaders), Alpha)
		if len(atLimit) > 0 {
			fmt.Fprintf(&b, ", or within %s of the limit", percent(1-LimitTie))
		}
		fmt.Fprintf(&b, "); %s leads at %s", best.Model, figure)
	default:
		fmt.Fprintf(&b, "%s is best at %s", best.Model, figure)
	}
	for _, group := range [][]string{capped, slower, broke, emptyRounds(sr.Runs)} {
		if len(group) > 0 {
			b.WriteString("; " + strings.Join(group, "; "))
		}
	}
	for _, note := range []string{peerNote(sr), idleVerdict(sr.Runs), ratioNote(sr)} {
		if note != "" {
			b.WriteString("; " + note)
		}
	}
	b.WriteString(".")
	return b.String()
}

func roundsPhrase(n int) string {
	if n == 1 {
		return "With one round a model"
	}
	return fmt.Sprintf("With %d rounds a model", n)
}

// relation sets a's throughput against b's by the scenario's rule
// (compare): "0.84× (a significant difference, p = 0.008)", "0.97× (a tie:
// no significant difference)", "0.97× (too noisy to tell: rounds spread
// over 30%)", "0.97× (too few rounds to tell)".
func (sr *ScenarioResult) relation(a, b *ModelRun) string {
	ratio := fmt.Sprintf("%.2f×", a.Throughput/b.Throughput)
	c := sr.compare(a, b)
	switch c.Difference {
	case Significant:
		return fmt.Sprintf("%s (a significant difference, %s)", ratio, fmtP(c.P))
	case Same:
		return ratio + " (a tie: no significant difference)"
	case AtLimit:
		return ratio + " (a tie: both at the limit)"
	case Noisy:
		return fmt.Sprintf("%s (too noisy to tell: rounds spread over %s)", ratio, fmtSpreadPercent(c.Noise))
	}
	return ratio + " (too few rounds to tell)"
}

// peerNote sets loom's virtual model beside bare net/http, when both ran,
// with what the test makes of the difference.
func peerNote(sr *ScenarioResult) string {
	var loom, bare *ModelRun
	for i := range sr.Runs {
		switch sameModel(sr.Runs[i].Model) {
		case "virtual":
			loom = &sr.Runs[i]
		case "peer:nethttp":
			bare = &sr.Runs[i]
		}
	}
	if loom == nil || bare == nil || bare.Throughput == 0 || broken(loom) {
		return ""
	}
	ratio, how, _ := strings.Cut(sr.relation(loom, bare), " ")
	return "loom's virtual runs at " + ratio + " bare net/http " + how
}

// ratioNote states the scenario's Ratios whose two models both served:
// "pool ÷ peer:protoactor = 2.91×, a significant difference (p = 0.008)".
func ratioNote(sr *ScenarioResult) string {
	served := func(model string) *ModelRun {
		for i := range sr.Runs {
			if r := &sr.Runs[i]; r.Model == model && r.Throughput > 0 && !broken(r) {
				return r
			}
		}
		return nil
	}
	var parts []string
	for _, pair := range sr.ratios {
		a, b := served(pair[0]), served(pair[1])
		if a != nil && b != nil {
			parts = append(parts, fmt.Sprintf("%s ÷ %s = %s", pair[0], pair[1], sr.relation(a, b)))
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
		return "crashed" + inRounds(r, StatusCrashed) + ": " + firstLine(r.Failure, 120)
	case StatusFailed:
		return "failed" + inRounds(r, StatusFailed) + ": " + firstLine(r.Failure, 120)
	}
	return string(r.Status)
}

// emptyRounds names the models that served in some rounds and nothing in
// others (a window too short for the machine's load, most often): "pool:16
// served nothing in 1 of 4 rounds (counted as 0)".
func emptyRounds(runs []ModelRun) []string {
	var out []string
	for _, r := range runs {
		if broken(&r) {
			continue
		}
		n := 0
		for _, rd := range r.Rounds {
			if rd.Requests == 0 && rd.Status != StatusCrashed {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s served nothing in %d of %d rounds (counted as 0)", r.Model, n, len(r.Rounds)))
		}
	}
	return out
}

// inRounds says in how many of its rounds a run ended with status, when it
// ran more than one: " in 2 of 5 rounds".
func inRounds(r ModelRun, status Status) string {
	if len(r.Rounds) < 2 {
		return ""
	}
	n := 0
	for _, rd := range r.Rounds {
		if rd.Status == status {
			n++
		}
	}
	return fmt.Sprintf(" in %d of %d rounds", n, len(r.Rounds))
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

// Standing says how a model's throughput compares with the best model's
// in the same scenario, by the rule of compareRounds.
type Standing string

const (
	// StandingBest: the model the others are compared with, the highest
	// median among runs without errors (or among all that served).
	StandingBest Standing = "best"
	// StandingTie: no significant difference from the best, both steady.
	StandingTie Standing = "tie"
	// StandingAtLimit: both reach LimitTie of the scenario's limit.
	StandingAtLimit Standing = "limit"
	// StandingNoisy: no significant difference, and too scattered to call
	// it a tie.
	StandingNoisy Standing = "noisy"
	// StandingUncalled: too few rounds to call any difference.
	StandingUncalled Standing = "uncalled"
	// StandingSlower and StandingFaster: significantly below or above the
	// best (above it only by failing requests, as the best is the fastest
	// clean run).
	StandingSlower Standing = "slower"
	StandingFaster Standing = "faster"
)
