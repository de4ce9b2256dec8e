package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// maxSleep bounds -sleep so that a request always finishes well inside the
// server's write timeout.
const maxSleep = 30 * time.Second

// config is what the command line asks for.
type config struct {
	framework   framework
	workload    workload
	sleep       time.Duration
	maxThreads  int // debug.SetMaxThreads; 0: the runtime's default
	pairs       int // actor-echo's pairs of actors
	dbPool      int // TechEmpower's database tests: the pool's connections
	addr        string
	metricsAddr string
}

// parseConfig reads the command line. Errors name the flag that was wrong;
// -h prints the usage to usage and returns flag.ErrHelp.
func parseConfig(args []string, usage io.Writer) (config, error) {
	fs := flag.NewFlagSet("peer-server", flag.ContinueOnError)
	// The flag package would print every error with the usage after it; the
	// caller prints the error alone, and the usage only when asked.
	fs.SetOutput(io.Discard)
	frameworkName := fs.String("framework", "nethttp", "framework serving the workload: nethttp, chi, gin or echo; protoactor or hollywood for actor-echo")
	workloadName := fs.String("workload", "hello", "workload: hello, sleep (wait -sleep, then answer), block (hold the OS thread for -sleep, nethttp only) "+
		"or actor-echo (GET /echo runs a pair of actors through 100 rounds of 50 messages, protoactor and hollywood only)")
	dbPool := fs.Int("db-pool", 16, "db, queries, fortunes and updates: connections of the pgxpool, all opened at start")
	pairs := fs.Int("pairs", 64, "actor-echo: how many pairs of actors echo; a request borrows one")
	sleep := fs.Duration("sleep", 100*time.Millisecond, "how long the sleep and block workloads wait before answering")
	maxThreads := fs.Int("max-threads", 0, "the process's OS thread limit (debug.SetMaxThreads); 0 keeps the runtime's")
	addr := fs.String("addr", "127.0.0.1:0", "address the workload is served on")
	metricsAddr := fs.String("metrics-addr", "127.0.0.1:0", "address runtime metrics are served on")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(usage)
			fs.PrintDefaults()
		}
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	fw, err := parseFramework(*frameworkName)
	if err != nil {
		return config{}, fmt.Errorf("-framework: %w", err)
	}
	wl, err := parseWorkload(*workloadName)
	if err != nil {
		return config{}, fmt.Errorf("-workload: %w", err)
	}
	if wl == block && fw != netHTTP {
		return config{}, fmt.Errorf("-workload block: served by nethttp only, not %s", fw)
	}
	if fw.actors() && wl != actorEcho {
		return config{}, fmt.Errorf("-framework %s: serves the actor-echo workload only, not %s", fw, wl)
	}
	if wl == actorEcho && !fw.actors() {
		return config{}, fmt.Errorf("-workload actor-echo: served by protoactor and hollywood only, not %s", fw)
	}
	if fw.native() && wl != hello && !wl.techEmpower() {
		return config{}, fmt.Errorf("-framework %s: serves hello and the TechEmpower workloads only, not %s", fw, wl)
	}
	if *dbPool < 1 {
		return config{}, fmt.Errorf("-db-pool %d: want at least one", *dbPool)
	}
	if *pairs < 1 {
		return config{}, fmt.Errorf("-pairs %d: want at least one", *pairs)
	}
	if *maxThreads < 0 {
		return config{}, fmt.Errorf("-max-threads %d: must not be negative", *maxThreads)
	}
	if *sleep < 0 || *sleep > maxSleep {
		return config{}, fmt.Errorf("-sleep %v: %w", *sleep, errSleepRange)
	}
	return config{
		framework:   fw,
		workload:    wl,
		sleep:       *sleep,
		dbPool:      *dbPool,
		maxThreads:  *maxThreads,
		pairs:       *pairs,
		addr:        *addr,
		metricsAddr: *metricsAddr,
	}, nil
}

var errSleepRange = errors.New("must be between 0 and " + maxSleep.String())
