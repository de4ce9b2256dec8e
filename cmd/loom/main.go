// Command loom runs loom's benchmarks and load generator.
//
//	loom bench --quick        reproduce the seeds' experiments, briefly
//	loom load -c 64 -d 10s URL  load an HTTP server
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
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loom:", err)
		os.Exit(1)
	}
}
