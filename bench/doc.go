// Package bench is loom's benchmark suite: a catalogue of scenarios that
// reproduce the experiments behind virtual threads on the JVM (Cask's ab
// and wrk runs, the Spring talk's 500 ms endpoint, …) plus Go's own failure
// modes (thread exhaustion under blocking system calls), the runner that
// executes each under every execution model, and the reports.
//
// Each server under test runs as its own process — `loom serve-scenario`,
// which calls Serve — so that its memory, OS threads and goroutines are
// measured alone; the load generator (package load) runs in the caller.
// Every scenario states its physical limit, and every run is reported as a
// ratio of that limit and of the best model in the same run:
//
//	report, err := bench.Run(ctx, bench.Options{Quick: true, Progress: os.Stderr})
//	if err != nil {
//		return err
//	}
//	bench.WriteText(os.Stdout, report)
//	_, err = bench.WriteFiles("results", report) // results.json, report.md, report.html
//
// A server that crashes, answers 404 or times out is a result with its
// status and cause, not an error of Run. docs/benchmarks.md describes the
// scenarios and how to read the reports.
package bench
