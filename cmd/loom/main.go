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
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loom:", err)
		os.Exit(1)
	}
}

// stopSignals are the signals that end a command in order, as Ctrl-C does:
// `loom bench` stops its server and removes its temporary directories.
// SIGHUP (a closed terminal) is one of them unless it is ignored, as under
// nohup: handling it would undo that.
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}
