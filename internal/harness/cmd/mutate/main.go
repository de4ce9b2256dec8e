// Command mutate plants the mutants gremlins does not: one term of an &&
// or || chain dropped, and a default or a bound widened. It runs a
// package's tests against each and reports which mutants the tests kill.
//
//	nice -n 19 go run ./cmd/mutate [-ops drop-term,widen] [-timeout d] [-run regexp] [-list] dir...
//
// The tree is never edited: mutated files reach the compiler through
// go build's -overlay. The drop-term mutants and the removed defaults of a
// package are compiled into one test binary and chosen at run time by the
// LOOM_MUTANT environment variable (mutant schemata), so a package costs
// one build for them all. Each test first runs alone without a mutant and
// records the mutants it reaches; a mutant then runs only the tests that
// reach it, and one that no test reaches is reported NOT COVERED without
// a run. Widened values sit where only a constant may stand, so each is
// built on its own and runs every test. Mutants run one at a time; the
// command prints one line per mutant and a summary per operator. See
// docs/testing.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}
