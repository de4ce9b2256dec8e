package main

import (
	"context"

	"github.com/spf13/cobra"
)

// run builds the command tree and executes it with args.
func run(ctx context.Context, args []string) error {
	root := newRootCmd()
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// newRootCmd builds the command tree.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "loom",
		Short:         "Decide where work runs, and prove the choice with numbers",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newLoadCmd(), newBenchCmd(), newServeScenarioCmd())
	return root
}
