// Command grains runs Workload W on protoactor-go's cluster grains: 3 hosting
// member processes, a driver process that is a cluster client, 100,000
// grains activated once each and then loaded for 10 s with 2,000 requests
// in flight, every reply checked. It prints verified replies per second,
// CPU per reply over every process, activation latency p50/p99 and the
// hosts' memory per idle activation, once per round, between the machine's
// load averages before and after.
//
//	go run ./cmd/grains                 # Workload W, once
//	go run ./cmd/grains -rounds 3       # three times, then the medians
//	go run ./cmd/grains -quick          # 5,000 grains, 500 in flight, 2 s
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/loomrt/loom/bench/peers/internal/grains"
)

func main() {
	if child, err := grains.Child(); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, "grains:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "grains:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("grains", flag.ContinueOnError)
	quick := flags.Bool("quick", false, "a short run: 5,000 grains, 500 in flight, 2 s (flags below override it)")
	rounds := flags.Int("rounds", 1, "runs, one after another; more than one adds a line of medians")
	var cfg grains.Config
	flags.IntVar(&cfg.Hosts, "hosts", 0, "hosting member processes (0: 3)")
	flags.IntVar(&cfg.Grains, "grains", 0, "grain ids e0… (0: 100,000)")
	flags.IntVar(&cfg.InFlight, "in-flight", 0, "requests in flight (0: 2,000)")
	flags.DurationVar(&cfg.Duration, "duration", 0, "the load phase (0: 10s)")
	flags.DurationVar(&cfg.Timeout, "timeout", 0, "bounds each run (0: 2m)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds %d: want 1 or more", *rounds)
	}
	if *quick {
		q := grains.Quick()
		flags.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "hosts":
				q.Hosts = cfg.Hosts
			case "grains":
				q.Grains = cfg.Grains
			case "in-flight":
				q.InFlight = cfg.InFlight
			case "duration":
				q.Duration = cfg.Duration
			case "timeout":
				q.Timeout = cfg.Timeout
			}
		})
		cfg = q
	}
	fmt.Println("load average before:", loadAverage())
	defer func() { fmt.Println("load average after:", loadAverage()) }()
	fmt.Printf("%-6s %10s %10s %12s %12s %12s %12s %11s  %s\n",
		"round", "msg/s", "CPU/msg", "activate", "act p50", "act p99", "heap/grain", "RSS/grain", "CPU by process")
	var all []grains.Result
	for i := range *rounds {
		r, err := grains.Run(ctx, cfg)
		if err != nil {
			return err
		}
		all = append(all, r)
		fmt.Printf("%-6d %10.0f %10v %12v %12v %12v %11.0fB %10.0fB  %s\n", i+1, r.Rate(), r.CPUPerMessage(),
			r.ActivationTime.Round(time.Millisecond), r.ActivationP50.Round(time.Microsecond), r.ActivationP99.Round(time.Microsecond),
			r.HeapPerActivation(), r.RSSPerActivation(), strings.Join(r.Processes, ", "))
	}
	if len(all) > 1 {
		fmt.Printf("%-6s %10.0f %10v %12v %12v %12v %11.0fB %10.0fB\n", "median",
			median(all, grains.Result.Rate), time.Duration(median(all, func(r grains.Result) float64 { return float64(r.CPUPerMessage()) })),
			time.Duration(median(all, func(r grains.Result) float64 { return float64(r.ActivationTime) })).Round(time.Millisecond),
			time.Duration(median(all, func(r grains.Result) float64 { return float64(r.ActivationP50) })).Round(time.Microsecond),
			time.Duration(median(all, func(r grains.Result) float64 { return float64(r.ActivationP99) })).Round(time.Microsecond),
			median(all, grains.Result.HeapPerActivation), median(all, grains.Result.RSSPerActivation))
	}
	return nil
}

// loadAverage returns the machine's 1, 5 and 15 minute load averages, from
// /proc/loadavg, or why they cannot be read.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return err.Error()
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return fmt.Sprintf("/proc/loadavg: %q", data)
	}
	return strings.Join(f[:3], " ")
}

// median returns the median of f over rs (the lower middle one for an even count).
func median(rs []grains.Result, f func(grains.Result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return v[(len(v)-1)/2]
}
