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

// Compare two reports, as `loom bench compare old.json new.json` does.
func ExampleCompare() {
	report := func(virtual, pool float64) *bench.Report {
		run := func(model string, rate float64) bench.ModelRun {
			return bench.ModelRun{Model: model, Status: bench.StatusOK, Throughput: rate,
				Latency: []bench.Percentile{{Percentile: 99, Latency: 110 * time.Millisecond}}}
		}
		return &bench.Report{Scenarios: []bench.ScenarioResult{{
			Name: "cask-sleep", Runs: []bench.ModelRun{run("virtual", virtual), run("pool:16", pool)},
		}}}
	}
	old, cur := report(990, 160), report(700, 160)
	fmt.Println("old → new:")
	regressions, _ := bench.WriteComparison(os.Stdout, bench.Compare(old, cur))
	fmt.Println("regressions:", regressions)
	// Output:
	// old → new:
	//     scenario    model   old rate   new rate  new÷old  old p99  new p99  p99 new÷old
	//   cask-sleep  virtual  990 req/s  700 req/s     0.71    110ms    110ms         1.00  REGRESSION
	//   cask-sleep  pool:16  160 req/s  160 req/s     1.00    110ms    110ms         1.00
	// regressions: 1
}
