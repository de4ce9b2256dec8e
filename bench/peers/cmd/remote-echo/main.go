// Command remote-echo runs the echo workload across two processes on each
// library's remote transport (loom's over NATS, protoactor-go's over gRPC,
// hollywood's over DRPC) and prints messages per second, CPU per message
// summed over every process involved (the NATS server's included), and the
// p50 and p99 of an Ask at a fixed rate.
//
//	go run ./bench/peers/cmd/remote-echo
//	go run ./bench/peers/cmd/remote-echo -libraries loom,hollywood -duration 8s -rounds 3
//
// With LOOM_REMOTE_ECHO_CPUPROFILE=<prefix> every process of the run writes
// its CPU profile to <prefix>.senders, <prefix>.echo and <prefix>.nats.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/loomrt/loom/bench/peers/internal/remoteecho"
)

func main() {
	if child, err := remoteecho.Child(); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, "remote-echo:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "remote-echo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) (err error) {
	flags := flag.NewFlagSet("remote-echo", flag.ContinueOnError)
	libraries := flags.String("libraries", strings.Join(remoteecho.Libraries, ","), "transports to run, in turn")
	var cfg remoteecho.Config
	flags.IntVar(&cfg.Pairs, "pairs", 64, "sender–echo pairs")
	flags.DurationVar(&cfg.Warmup, "warmup", time.Second, "before counting")
	flags.DurationVar(&cfg.Duration, "duration", 4*time.Second, "counted")
	flags.IntVar(&cfg.AskRate, "ask-rate", 1000, "Asks per second in the latency phase")
	flags.DurationVar(&cfg.AskFor, "ask-for", 3*time.Second, "the latency phase")
	rounds := flags.Int("rounds", 1, "runs of every library, interleaved")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	stopProfile, err := remoteecho.Profile("senders")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopProfile()) }()
	fmt.Printf("%-11s %12s %12s %9s %9s  %s\n", "library", "msg/s", "CPU/msg", "ask p50", "ask p99", "CPU by process")
	for range *rounds {
		for _, lib := range strings.Split(*libraries, ",") {
			r, err := remoteecho.Run(ctx, lib, cfg)
			if err != nil {
				return err
			}
			fmt.Printf("%-11s %12.0f %12v %9v %9v  %s (%d asks, %d failed)\n", r.Library, r.Rate(), r.CPUPerMessage(),
				r.AskP50.Round(time.Microsecond), r.AskP99.Round(time.Microsecond), strings.Join(r.Processes, ", "), r.Asks, r.AskFailures)
		}
	}
	return nil
}
