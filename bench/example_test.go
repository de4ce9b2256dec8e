package bench_test

import (
	"fmt"
	"os"
	"time"

	"github.com/loomrt/loom/bench"
)

// Concurrency reads the bound a model puts on requests running at once.
func ExampleConcurrency() {
	for _, model := range []string{"virtual", "pool:16", "limit:1000,queue=9000"} {
		fmt.Println(model, bench.Concurrency(model))
	}
	// Output:
	// virtual 0
	// pool:16 16
	// limit:1000,queue=9000 1000
}

// Compare two reports, as `loom bench compare old.json new.json` does: a
// fall is a regression only when the rounds differ significantly.
func ExampleCompare() {
	report := func(virtual, pool []float64) *bench.Report {
		run := func(model string, rates []float64) bench.ModelRun {
			r := bench.ModelRun{Model: model, Status: bench.StatusOK}
			for i, rate := range rates {
				r.Rounds = append(r.Rounds, bench.Round{Round: i + 1, Status: bench.StatusOK, Throughput: rate,
					Latency: []bench.Percentile{{Percentile: 99, Latency: 110 * time.Millisecond}}})
			}
			r.Throughput = rates[len(rates)/2]
			r.Latency = r.Rounds[0].Latency
			return r
		}
		return &bench.Report{Scenarios: []bench.ScenarioResult{{
			Name: "cask-sleep", Runs: []bench.ModelRun{run("virtual", virtual), run("pool:16", pool)},
		}}}
	}
	old := report([]float64{985, 988, 990, 991, 993}, []float64{158, 159, 160, 160, 161})
	cur := report([]float64{695, 698, 700, 702, 705}, []float64{120, 155, 160, 190, 200})
	fmt.Println("old → new:")
	regressions, _ := bench.WriteComparison(os.Stdout, bench.Compare(old, cur))
	fmt.Println("regressions:", regressions)
	// Output:
	// old → new:
	//     scenario    model   old rate   new rate           new÷old  rounds  old p99  new p99  p99 new÷old
	//   cask-sleep  virtual  990 req/s  700 req/s  0.71 (p = 0.008)     5+5    110ms    110ms         1.00  REGRESSION
	//   cask-sleep  pool:16  160 req/s  160 req/s            1.00 ~     5+5    110ms    110ms         1.00
	// ~: no significant difference at α = 0.05 (Mann-Whitney U over the rounds); REGRESSION: a run no longer ok, or a significant fall below 90%.
	// regressions: 1
}
