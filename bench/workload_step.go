package bench

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/loomrt/loom/load"
)

// The step-load scenario runs the overload scenario's server (serveOverload:
// 10 slots × 10 ms, 1,000 req/s) under an open loop whose rate steps from
// half its capacity to twice it and back, and judges how fast each model
// settles after each step (settle).

// Convergence, as the reports and docs/benchmarks.md define it.
const (
	// settleWindow is how long a figure must stay in its band to count as
	// settled.
	settleWindow = time.Second
	// limitBand is how far, as a fraction, the adaptive limit may be from
	// its settled value: the median of its samples over the phase's last
	// third.
	limitBand = 0.20
	// goodputBand is how far, as a fraction, the goodput over settleWindow
	// may be from its settled value: what was served per second over the
	// phase's last third.
	goodputBand = 0.10
)

// stepPhases is the step: half the capacity, twice, half again, each for
// length.
func stepPhases(length time.Duration) []load.Phase {
	return []load.Phase{
		{Rate: float64(overloadCapacity) / 2, Duration: length},
		{Rate: 2 * float64(overloadCapacity), Duration: length},
		{Rate: float64(overloadCapacity) / 2, Duration: length},
	}
}

func stepLoad() *Scenario {
	plan := func(models []string, length time.Duration) Plan {
		phases := stepPhases(length)
		return Plan{
			Models: models, Phases: phases, Duration: phasesLength(phases),
			Timeout: time.Second, Service: overloadHold, Rounds: 1,
		}
	}
	return &Scenario{
		Name: "step-load",
		Workload: fmt.Sprintf("overload's GET /query (one of %d \"database connections\" for %s); the offered rate steps "+
			"from half that capacity to twice it and back, and clients give up after 1 s", overloadSlots, overloadHold),
		Seed: "None of the seeds: how fast a limit follows a change of load. Reported per step: the seconds until the " +
			"adaptive limit stays within ±20% of where it settles, and until goodput is within 10% of what the phase allows.",
		Changes: "Open loop at 500 req/s for 10 s, 2,000 req/s for 10 s, 500 req/s for 10 s (1.5 s each with --quick, adaptive " +
			"and virtual), 1 s client timeout; adaptive beside the hand-tuned limit:10,queue=20 and unbounded virtual. One round " +
			"unless --rounds says otherwise: the figures are each run's settling times, and its first phase is its warm-up.",
		Full:  plan([]string{"adaptive", "limit:10,queue=20", "virtual"}, 10*time.Second),
		Quick: plan([]string{"adaptive", "virtual"}, 1500*time.Millisecond),
		Limit: func(p Plan) Limit {
			var offered []string
			for _, ph := range p.Phases {
				offered = append(offered, count(int64(ph.Rate)))
			}
			return Limit{PerSecond: float64(overloadCapacity), Formula: fmt.Sprintf(
				"goodput at most %d connections ÷ %s = %s req/s, whatever is offered (%s req/s in turn)",
				overloadSlots, overloadHold, count(int64(overloadCapacity)), strings.Join(offered, ", then "))}
		},
		Targets:    get("/query"),
		ExpectBody: overloadBody,
		Serve:      serveOverload,
	}
}

func phasesLength(phases []load.Phase) time.Duration {
	var d time.Duration
	for _, p := range phases {
		d += p.Duration
	}
	return d
}

// StepResult is how a run settled after one change of the offered rate.
// Times are seconds from the step; -1 means the figure did not settle
// before the phase ended (or, for the limit, that the model has none).
type StepResult struct {
	// At is when the rate changed, from the start of the load; From and To
	// are the offered rates before and after, in requests per second.
	At   time.Duration `json:"at_ns"`
	From float64       `json:"from"`
	To   float64       `json:"to"`
	// LimitBefore is the adaptive limit's last sample before the step.
	// SettledLimit is where it settled in this phase: the median of its
	// samples over the phase's last third; both are 0 for a model that
	// reports no limit. LimitSeconds is when the limit came within ±20% of
	// SettledLimit and then stayed there for a whole second.
	LimitBefore  int     `json:"limit_before"`
	SettledLimit int     `json:"settled_limit"`
	LimitSeconds float64 `json:"limit_seconds"`
	// Goodput is what the phase allows: min(To, capacity). SettledGoodput
	// is what was served per second over the phase's last third, and
	// GoodputSeconds when the requests served over a second first came
	// within 10% of it.
	Goodput        float64 `json:"goodput"`
	SettledGoodput float64 `json:"settled_goodput"`
	GoodputSeconds float64 `json:"goodput_seconds"`
}

// settle judges each step of phases from a run's samples: the server's,
// every 100 ms, for the limit, and the generator's counts for goodput.
// capacity is the scenario's limit in requests per second.
func settle(phases []load.Phase, capacity float64, run ModelRun) []StepResult {
	var steps []StepResult
	start := phases[0].Duration
	for k := 1; k < len(phases); k++ {
		end := start + phases[k].Duration
		tail := end - phases[k].Duration/3
		st := StepResult{At: start, From: phases[k-1].Rate, To: phases[k].Rate, Goodput: phases[k].Rate,
			LimitSeconds: -1, GoodputSeconds: -1}
		if capacity > 0 {
			st.Goodput = min(st.Goodput, capacity)
		}

		var times []time.Duration
		var limits []float64
		for _, s := range run.Server.Samples {
			switch {
			case !s.RuntimeOK || s.Limit == 0:
			case s.At < start:
				st.LimitBefore = s.Limit
			case s.At <= end:
				times, limits = append(times, s.At), append(limits, float64(s.Limit))
			}
		}
		var settled []float64
		for i, at := range times {
			if at >= tail {
				settled = append(settled, limits[i])
			}
		}
		if len(settled) > 0 {
			slices.Sort(settled)
			st.SettledLimit = int(settled[len(settled)/2])
			st.LimitSeconds = firstSettled(start, end, times, limits, float64(st.SettledLimit), limitBand)
		}

		if served := servedAt(run.Client); served != nil && end > tail {
			st.SettledGoodput = round((served(end)-served(tail))/(end-tail).Seconds(), 1)
			// Goodput over a second from the step, then from each of the
			// generator's samples.
			from := []time.Duration{start}
			for _, c := range run.Client {
				if c.At > start && c.At+settleWindow <= end {
					from = append(from, c.At)
				}
			}
			for _, t := range from {
				if g := (served(t+settleWindow) - served(t)) / settleWindow.Seconds(); within(g, st.SettledGoodput, goodputBand) {
					st.GoodputSeconds = round((t - start).Seconds(), 2)
					break
				}
			}
		}
		steps = append(steps, st)
		start = end
	}
	return steps
}

// firstSettled returns the seconds from start to the first sample from
// which every sample over the next settleWindow (which must end by end) is
// within band of settled; -1 if there is none.
func firstSettled(start, end time.Duration, times []time.Duration, values []float64, settled, band float64) float64 {
	for i, at := range times {
		if at+settleWindow > end {
			break
		}
		ok := true
		for j := i; j < len(times) && times[j] <= at+settleWindow; j++ {
			if !within(values[j], settled, band) {
				ok = false
				break
			}
		}
		if ok {
			return round((at - start).Seconds(), 2)
		}
	}
	return -1
}

func within(v, target, band float64) bool {
	return v >= target*(1-band) && v <= target*(1+band)
}

// servedAt returns the served count at any time, interpolated linearly
// between the generator's samples (and 0 before the first); nil without
// samples.
func servedAt(samples []ClientSample) func(time.Duration) float64 {
	if len(samples) == 0 {
		return nil
	}
	return func(t time.Duration) float64 {
		i := sort.Search(len(samples), func(i int) bool { return samples[i].At >= t })
		switch {
		case i == len(samples):
			return float64(samples[len(samples)-1].Served)
		case samples[i].At == t:
			return float64(samples[i].Served)
		}
		var prevAt time.Duration
		var prevServed float64
		if i > 0 {
			prevAt, prevServed = samples[i-1].At, float64(samples[i-1].Served)
		}
		next := samples[i]
		if next.At <= prevAt {
			return float64(next.Served)
		}
		f := float64(t-prevAt) / float64(next.At-prevAt)
		return prevServed + f*(float64(next.Served)-prevServed)
	}
}

// stepVerdict says in a sentence how the models with an adaptive limit
// settled after each step; empty when none has one.
func stepVerdict(sr *ScenarioResult) string {
	var parts []string
	for _, run := range sr.Runs {
		for _, st := range run.Steps {
			if st.SettledLimit == 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("after the step from %s to %s req/s, %s's limit went from %s to %s (%s), "+
				"and goodput to %s req/s (%.0f%% of the %s allowed; %s)",
				count(int64(st.From)), count(int64(st.To)), run.Model, count(int64(st.LimitBefore)), count(int64(st.SettledLimit)),
				afterSeconds(st.LimitSeconds), rate(st.SettledGoodput), 100*st.SettledGoodput/st.Goodput, rate(st.Goodput),
				afterSeconds(st.GoodputSeconds)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func afterSeconds(s float64) string {
	if s < 0 {
		return "not settled before the phase ended"
	}
	return fmt.Sprintf("settled within %.1f s", s)
}

// stepRows is the table of how each run settled after each step, for the
// text and Markdown reports; nil when no run has steps.
func stepRows(sr ScenarioResult) [][]string {
	var rows [][]string
	for _, run := range sr.Runs {
		for _, st := range run.Steps {
			limit, limitAt := "–", "–"
			if st.SettledLimit > 0 {
				limit = count(int64(st.LimitBefore)) + " → " + count(int64(st.SettledLimit))
				limitAt = fmtSeconds(st.LimitSeconds)
			}
			rows = append(rows, []string{
				run.Model, fmt.Sprintf("%s → %s req/s at %s", count(int64(st.From)), count(int64(st.To)), st.At),
				limit, limitAt, rate(st.SettledGoodput), fmtRatio(st.SettledGoodput / st.Goodput), fmtSeconds(st.GoodputSeconds),
			})
		}
	}
	if rows == nil {
		return nil
	}
	header := []string{"model", "step", "limit before → settled", "limit settled after", "goodput settled",
		"÷ allowed", "goodput settled after"}
	return append([][]string{header}, rows...)
}

// stepDefinition heads the step table.
const stepDefinition = "Settling after each step: a figure's settled value is its median (the adaptive limit, " +
	"sampled every 100 ms) or mean (goodput) over the phase's last third. The limit has settled once it stays within " +
	"±20% of that for 1 s; goodput, once the requests served over the next second are within 10% of it. " +
	"÷ allowed: settled goodput over min(offered, capacity). \"never\": not before the phase ended."

func fmtSeconds(s float64) string {
	if s < 0 {
		return "never"
	}
	return fmt.Sprintf("%.1f s", s)
}
