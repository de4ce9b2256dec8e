// Package peers measures loom against the libraries and frameworks a Go
// programmer would otherwise reach for, side by side in the same run. It is a
// module of its own so that loom's go.mod does not carry them.
//
// The package holds only benchmarks and the tests that keep them honest; the
// peer HTTP servers that loom bench loads are in cmd/peer-server. Run the
// executor comparison with:
//
//	cd bench/peers
//	go test -run '^$' -bench . -count 5 . > executors.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl executors.txt
//
// Benchmarks are named Benchmark<Shape>/kind=<loom executor>/impl=<library>,
// where the shapes are those of loom's own bench_test.go, so benchstat can set
// each library beside the loom executor it competes with.
package peers
