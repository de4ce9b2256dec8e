package bench

import (
	"math/rand/v2"
	"slices"
	"time"
)

// DefaultRounds are the rounds each model runs when Options.Rounds is 0:
// five in the full plan, enough for the U test to call a difference even
// with one round out of place; four with --quick, the fewest at which any
// difference can be called (every round of one model above every round of
// the other).
const (
	DefaultRounds      = 5
	DefaultQuickRounds = 4
)

// Round is one round of one model: the figures of its run. A ModelRun
// keeps every round; its own figures summarise them.
type Round struct {
	// Round counts from 1; Position is the run's place in its round's
	// order, from 1.
	Round    int    `json:"round"`
	Position int    `json:"position"`
	Status   Status `json:"status"`
	Failure  string `json:"failure,omitempty"`
	// Throughput is served requests per second; Requests and Errors count
	// served and failed requests.
	Throughput float64 `json:"throughput"`
	Requests   int64   `json:"requests"`
	Errors     int64   `json:"errors"`
	// Latency holds the round's percentiles (ModelRun.Latency's points).
	Latency []Percentile `json:"latency"`
	// UnloadedP99 is the p99 of the round's unloaded phase (Plan.UnloadedRate);
	// 0 without one, or without a reference.
	UnloadedP99 time.Duration `json:"unloaded_p99_ns,omitempty"`
	// The server's peaks and CPU time in this round.
	PeakRSSBytes   uint64  `json:"peak_rss_bytes"`
	PeakThreads    int     `json:"peak_threads"`
	PeakGoroutines uint64  `json:"peak_goroutines"`
	CPUSeconds     float64 `json:"cpu_seconds"`
}

// roundOrders returns, for each of rounds rounds, the order in which to run
// n models: a fresh shuffle per round from seed, so that no model always
// runs first or after the same neighbour, and a run can be repeated in the
// same order.
func roundOrders(n, rounds int, seed uint64, scenario string) [][]int {
	// Each scenario gets its own stream, so that selecting scenarios does
	// not change another's order.
	var h uint64 = 14695981039346656037 // FNV-1a of the name
	for i := 0; i < len(scenario); i++ {
		h = (h ^ uint64(scenario[i])) * 1099511628211
	}
	rng := rand.New(rand.NewPCG(seed, h))
	orders := make([][]int, rounds)
	for r := range orders {
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		orders[r] = order
	}
	return orders
}

// newSeed picks a seed for a run that names none.
func newSeed() uint64 {
	return uint64(time.Now().UnixNano())
}

// worse reports whether status a says less of a run than b: ok, then
// errors, failed, crashed.
func worse(a, b Status) bool {
	rank := func(s Status) int {
		switch s {
		case StatusOK:
			return 0
		case StatusErrors:
			return 1
		case StatusFailed:
			return 2
		case StatusCrashed:
			return 3
		}
		return 0
	}
	return rank(a) > rank(b)
}

// summariseRounds folds one model's rounds (in the order they ran, each with its
// round number and position) into the model's run. Throughput and each
// latency percentile are the medians over the rounds; Requests and Errors
// the totals; Status the worst round's, with its Failure and Stderr, where
// a round that served nothing in its window, without crashing, counts only
// when no round served: its throughput of 0 stays in the rounds, where it
// widens the spread, and the verdict names it, but a model that served in
// its other rounds is not called failed for a window too short for a busy
// machine. The
// server's figures, samples, steps and idle costs, and the load result, are
// those of the median round: the round whose throughput is the median (the
// lower middle one for an even count), a real run whose figures belong
// together.
func summariseRounds(runs []ModelRun, rounds []Round) ModelRun {
	idx := make([]int, len(runs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case runs[a].Throughput < runs[b].Throughput:
			return -1
		case runs[a].Throughput > runs[b].Throughput:
			return 1
		}
		return 0
	})
	out := runs[idx[(len(idx)-1)/2]]
	out.Rounds = rounds
	out.Requests, out.Errors = 0, 0
	var worst *ModelRun
	served := slices.ContainsFunc(runs, func(r ModelRun) bool { return r.Requests > 0 })
	for i := range runs {
		r := &runs[i]
		out.Requests += r.Requests
		out.Errors += r.Errors
		if served && r.Requests == 0 && r.Status != StatusCrashed {
			continue
		}
		if worst == nil || worse(r.Status, worst.Status) {
			worst = r
		}
	}
	out.Status, out.Failure, out.Stderr = worst.Status, worst.Failure, worst.Stderr
	out.summariseSpreads()
	return out
}

// summariseSpreads sets the run's median figures and spreads from its
// Rounds; a run without Rounds (a results.json of version 1, or one built
// by hand) is one round of its own figures.
func (r *ModelRun) summariseSpreads() {
	if len(r.Rounds) == 0 {
		r.ThroughputSpread = spreadOf([]float64{r.Throughput})
		r.P99Spread = spreadOf([]float64{float64(r.LatencyAt(99))})
		return
	}
	r.ThroughputSpread = spreadOf(r.throughputs())
	r.Throughput = r.ThroughputSpread.Median
	var latency []Percentile
	for _, p := range latencyPoints {
		var values []float64
		for _, rd := range r.Rounds {
			if rd.Requests > 0 {
				if l := at(rd.Latency, p); l > 0 {
					values = append(values, float64(l))
				}
			}
		}
		if len(values) > 0 {
			latency = append(latency, Percentile{Percentile: p, Latency: time.Duration(spreadOf(values).Median)})
		}
		if p == 99 {
			r.P99Spread = spreadOf(values)
		}
	}
	r.Latency = latency
}

// throughputs are the rounds' throughputs; the run's own for a run without
// rounds.
func (r *ModelRun) throughputs() []float64 {
	if len(r.Rounds) == 0 {
		return []float64{r.Throughput}
	}
	out := make([]float64, len(r.Rounds))
	for i, rd := range r.Rounds {
		out[i] = rd.Throughput
	}
	return out
}

// roundOf is the compact record of a run as round n, at position pos.
func roundOf(run ModelRun, n, pos int) Round {
	return Round{
		Round: n, Position: pos, Status: run.Status, Failure: firstLine(run.Failure, 300),
		Throughput: run.Throughput, Requests: run.Requests, Errors: run.Errors, Latency: run.Latency,
		UnloadedP99:  run.UnloadedAt(99),
		PeakRSSBytes: run.Server.PeakRSSBytes, PeakThreads: run.Server.PeakThreads,
		PeakGoroutines: run.Server.PeakGoroutines, CPUSeconds: run.Server.CPUSeconds,
	}
}
