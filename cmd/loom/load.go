package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newLoadCmd is a placeholder until package load lands.
func newLoadCmd() *cobra.Command {
	return &cobra.Command{Use: "load", Short: "Load an HTTP server", RunE: func(*cobra.Command, []string) error {
		return errors.New("load: not built yet")
	}}
}
