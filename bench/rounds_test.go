package bench

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRoundOrders: each round is a permutation of the models, drawn from
// the seed and the scenario's name: the same seed gives the same orders,
// another seed or scenario others, and the first place moves between
// rounds.
func TestRoundOrders(t *testing.T) {
	orders := roundOrders(6, 5, 42, "hello")
	firsts := map[int]bool{}
	for _, order := range orders {
		if sorted := slices.Sorted(slices.Values(order)); !slices.Equal(sorted, []int{0, 1, 2, 3, 4, 5}) {
			t.Errorf("order %v; want a permutation of 0–5", order)
		}
		firsts[order[0]] = true
	}
	if len(firsts) < 2 {
		t.Errorf("orders %v: the same model first in every round", orders)
	}
	same := func(a, b [][]int) bool { return slices.EqualFunc(a, b, slices.Equal[[]int]) }
	if !same(orders, roundOrders(6, 5, 42, "hello")) {
		t.Error("the same seed and scenario gave other orders")
	}
	if same(orders, roundOrders(6, 5, 43, "hello")) || same(orders, roundOrders(6, 5, 42, "cpu")) {
		t.Error("another seed or scenario gave the same orders")
	}
}

// TestSummariseRounds: the median throughput and latencies over the
// rounds, totals of requests and errors, the worst status with its
// failure, and the median round's own server figures.
func TestSummariseRounds(t *testing.T) {
	run := func(tp float64, p99 time.Duration, status Status, rss uint64) ModelRun {
		return ModelRun{Model: "m", Status: status, Throughput: tp, Requests: 10, Errors: 1, Failure: string(status),
			Latency: []Percentile{{50, p99 / 2}, {99, p99}}, Server: ServerStats{PeakRSSBytes: rss}}
	}
	runs := []ModelRun{
		run(300, 30*time.Millisecond, StatusOK, 3),
		run(100, 10*time.Millisecond, StatusCrashed, 1),
		run(200, 50*time.Millisecond, StatusErrors, 2),
		run(400, 20*time.Millisecond, StatusOK, 4),
	}
	var rounds []Round
	for i, r := range runs {
		rounds = append(rounds, roundOf(r, i+1, 1))
	}
	got := summariseRounds(runs, rounds)
	if got.Throughput != 250 || got.ThroughputSpread != (Spread{Median: 250, Min: 100, Max: 400, Rounds: 4}) {
		t.Errorf("throughput %v, spread %+v; want the median 250 of 100–400", got.Throughput, got.ThroughputSpread)
	}
	if p99 := got.LatencyAt(99); p99 != 25*time.Millisecond {
		t.Errorf("p99 %v; want the median of the rounds' p99s, 25ms", p99)
	}
	if got.P99Spread.Min != float64(10*time.Millisecond) || got.P99Spread.Max != float64(50*time.Millisecond) {
		t.Errorf("p99 spread %+v; want 10ms–50ms", got.P99Spread)
	}
	if got.Requests != 40 || got.Errors != 4 {
		t.Errorf("requests %d, errors %d; want the totals 40 and 4", got.Requests, got.Errors)
	}
	if got.Status != StatusCrashed || got.Failure != "crashed" {
		t.Errorf("status %s (%s); want the worst round's, crashed", got.Status, got.Failure)
	}
	if got.Server.PeakRSSBytes != 2 {
		t.Errorf("server figures of the round at %d; want the lower median round's (200 req/s)", got.Server.PeakRSSBytes)
	}
	if len(got.Rounds) != 4 || got.Rounds[1].Status != StatusCrashed {
		t.Errorf("rounds %+v; want all four kept", got.Rounds)
	}

	// A round that served nothing, without crashing, stays a round of 0
	// but does not make the model failed while other rounds served.
	runs = []ModelRun{run(300, 30*time.Millisecond, StatusOK, 3), run(400, 20*time.Millisecond, StatusOK, 4),
		{Model: "m", Status: StatusFailed, Failure: "no request served: no errors"}}
	rounds = nil
	for i, r := range runs {
		rounds = append(rounds, roundOf(r, i+1, 1))
	}
	got = summariseRounds(runs, rounds)
	if got.Status != StatusOK || got.ThroughputSpread.Min != 0 || got.Throughput != 300 {
		t.Errorf("status %s, throughput %v, spread %+v; want ok, the median 300 of 0–400", got.Status, got.Throughput, got.ThroughputSpread)
	}
	sc := ScenarioResult{Runs: []ModelRun{got}}
	judge(&sc)
	if want := "m served nothing in 1 of 3 rounds (counted as 0)"; !strings.Contains(sc.Verdict, want) {
		t.Errorf("verdict %q lacks %q", sc.Verdict, want)
	}
	// A round that crashed is the model's status even when it served
	// nothing and the others served.
	crashed := append(runs[:2:2], ModelRun{Model: "m", Status: StatusCrashed, Failure: "fatal error: boom"})
	if got := summariseRounds(crashed, rounds); got.Status != StatusCrashed || got.Failure != "fatal error: boom" {
		t.Errorf("a round crashed without serving: status %s (%s); want crashed", got.Status, got.Failure)
	}
	runs = runs[2:]
	if got := summariseRounds(runs, rounds[2:]); got.Status != StatusFailed {
		t.Errorf("no round served: status %s; want failed", got.Status)
	}
}
