package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomrt/loom/bench"
)

// newBenchRemoteEchoCmd builds `loom bench remote-echo`: bench/peers'
// remote-echo, built from the source tree and run with these flags.
func newBenchRemoteEchoCmd() *cobra.Command {
	var (
		libraries       string
		pairs, rate, n  int
		warmup, d, askD time.Duration
	)
	cmd := &cobra.Command{
		Use:   "remote-echo",
		Short: "Run the actor echo across processes on loom's NATS transport, protoactor-go's and hollywood's",
		Long: "Run the actor echo (pairs, batches of 50, both ways counted) with the senders in one process and the\n" +
			"echoes in another, on each library's own remote transport: loom's actor/remote over a NATS server\n" +
			"(a third process), protoactor-go's over gRPC, hollywood's over DRPC. Print msg/s, CPU per message\n" +
			"summed over every process (the NATS server's included), and the p50 and p99 of an Ask at a fixed\n" +
			"rate. Needs the source tree (bench/peers) and the go command: it builds bench/peers/cmd/remote-echo.",
		Example: "  loom bench remote-echo\n  loom bench remote-echo --libraries loom,hollywood --rounds 3",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			src, err := bench.FindPeers(wd)
			if err != nil {
				return fmt.Errorf("remote-echo: %w", err)
			}
			dir, err := os.MkdirTemp("", "loom-remote-echo-*")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			fmt.Fprintf(cmd.ErrOrStderr(), "building remote-echo from %s …\n", src)
			path, err := bench.BuildRemoteEcho(ctx, src, dir)
			if err != nil {
				return err
			}
			run := exec.CommandContext(ctx, path, "-libraries", libraries, "-pairs", strconv.Itoa(pairs),
				"-warmup", warmup.String(), "-duration", d.String(), "-ask-rate", strconv.Itoa(rate),
				"-ask-for", askD.String(), "-rounds", strconv.Itoa(n))
			// protoactor-go and hollywood register protobuf files of the same
			// names; the one binary that links both says so once per process.
			run.Env = append(os.Environ(), "GOLANG_PROTOBUF_REGISTRATION_CONFLICT=ignore")
			run.Stdout, run.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := run.Run(); err != nil {
				return fmt.Errorf("remote-echo: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&libraries, "libraries", "loom,protoactor,hollywood", "transports to run, in turn")
	f.IntVar(&pairs, "pairs", 64, "sender–echo pairs")
	f.DurationVar(&warmup, "warmup", time.Second, "before counting")
	f.DurationVar(&d, "duration", 4*time.Second, "counted")
	f.IntVar(&rate, "ask-rate", 1000, "Asks per second in the latency phase")
	f.DurationVar(&askD, "ask-for", 3*time.Second, "the latency phase")
	f.IntVar(&n, "rounds", 1, "runs of every library, interleaved")
	return cmd
}
