// Command peer-server serves the hello, sleep and block workloads with bare
// net/http, chi, gin or echo, and the actor-echo workload with protoactor-go
// or hollywood, so that loom bench can load a peer in the same run and with
// the same generator as loom's own servers.
//
// It prints one line when both listeners are up, serves runtime metrics on
// the second one, and stops gracefully on SIGTERM or SIGINT:
//
//	$ peer-server -framework chi -workload sleep -sleep 100ms
//	listening http=127.0.0.1:40113 metrics=127.0.0.1:38777
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "peer-server:", err)
		os.Exit(1)
	}
}
