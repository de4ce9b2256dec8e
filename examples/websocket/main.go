// Command websocket serves an echo endpoint and a chat room over
// WebSockets at /ws, and a page at / that uses them.
//
//	go run ./examples/websocket                     # 127.0.0.1:8080
//	go run ./examples/websocket -allow-origin '*.example.com'
//	LOOM_EXECUTOR=pool:8 go run ./examples/websocket  # the page's route on 8 workers
//
// Sockets run on their own executor, LOOM_EXECUTOR_WEBSOCKET (default
// virtual), because each holds its slot while it is open. On SIGINT or
// SIGTERM every socket is closed with "going away" and the chat hub stops.
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

	"github.com/loomrt/loom/examples/websocket/wsapp"
	_ "github.com/loomrt/loom/web/nbio" // LOOM_ENGINE=nbio serves on the event loop
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "websocket:", err)
		os.Exit(1)
	}
}

// run serves the app until ctx ends.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("websocket", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8080", "`address` to listen on")
	origins := flags.String("allow-origin", "", "comma-separated host `patterns` of other origins allowed to connect (same origin always is)")
	queue := flags.Int("queue", wsapp.DefaultQueue, "chat events a client may have waiting before it is dropped as too slow")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	if *queue <= 0 {
		return fmt.Errorf("-queue %d: want a positive number", *queue)
	}
	var allowed []string
	for _, pattern := range strings.Split(*origins, ",") {
		if pattern = strings.TrimSpace(pattern); pattern != "" {
			allowed = append(allowed, pattern)
		}
	}

	hub := wsapp.NewHub(*queue)
	app, err := wsapp.NewApp(hub, allowed)
	if err != nil {
		return errors.Join(err, hub.Close())
	}
	// ListenAndServe returns after every socket handler has ended, so the
	// hub has no members left to serve when it closes.
	err = app.ListenAndServe(ctx, *addr)
	return errors.Join(err, hub.Close())
}
