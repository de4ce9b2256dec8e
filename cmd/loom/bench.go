package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newBenchCmd is a placeholder until package bench lands.
func newBenchCmd() *cobra.Command {
	return &cobra.Command{Use: "bench", Short: "Run the benchmark scenarios", RunE: func(*cobra.Command, []string) error {
		return errors.New("bench: not built yet")
	}}
}

// newServeScenarioCmd is a placeholder until package bench lands.
func newServeScenarioCmd() *cobra.Command {
	return &cobra.Command{Use: "serve-scenario", Hidden: true, RunE: func(*cobra.Command, []string) error {
		return errors.New("serve-scenario: not built yet")
	}}
}
