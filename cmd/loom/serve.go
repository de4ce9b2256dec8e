package main

import (
	"github.com/spf13/cobra"

	"github.com/loomrt/loom/bench"
)

// newServeScenarioCmd builds the hidden `loom serve-scenario`, the server
// under test that `loom bench` starts as a child process for each run.
func newServeScenarioCmd() *cobra.Command {
	var cfg bench.ServeConfig
	cmd := &cobra.Command{
		Use:    "serve-scenario NAME",
		Short:  "Serve one benchmark scenario (started by loom bench)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Scenario = args[0]
			return bench.Serve(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&cfg.Model, "model", "", "model the routes run on: an executor spec, after its engine if not std (nbio/pool:16) (default: LOOM_EXECUTOR_HTTP, LOOM_EXECUTOR, virtual, on LOOM_ENGINE)")
	cmd.Flags().StringVar(&cfg.Addr, "addr", "127.0.0.1:0", "address to serve the scenario on")
	cmd.Flags().StringVar(&cfg.MetricsAddr, "metrics-addr", "127.0.0.1:0", "address to serve runtime metrics on")
	cmd.Flags().StringVar(&cfg.Dir, "dir", "", "empty directory for the scenario's files (default: a temporary one)")
	cmd.Flags().BoolVar(&cfg.Quick, "quick", false, "serve the quick plan")
	return cmd
}
