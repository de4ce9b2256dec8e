// Command sleepy is the seeds' minimal application: GET / sleeps (-sleep,
// default 100ms), standing in for a slow database or service, then answers
// "Hello World! Hello World! Hello World!". Its limit is connections ÷ sleep
// requests per second; how close an executor gets to it is what
// `loom bench` measures.
//
//	go run ./examples/sleepy -sleep 1s
//	LOOM_EXECUTOR=pool:200 go run ./examples/sleepy
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/loomrt/loom/web"
	_ "github.com/loomrt/loom/web/nbio" // LOOM_ENGINE=nbio serves on the event loop
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sleepy:", err)
		os.Exit(1)
	}
}

// run serves the app until ctx ends.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("sleepy", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8080", "listen address")
	sleep := flags.Duration("sleep", 100*time.Millisecond, "how long each request sleeps")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	if *sleep < 0 {
		return fmt.Errorf("-sleep %v: must not be negative", *sleep)
	}
	app, err := newApp(*sleep)
	if err != nil {
		return err
	}
	return app.ListenAndServe(ctx, *addr)
}

// newApp builds the app; its executor comes from the environment.
func newApp(sleep time.Duration, opts ...web.AppOption) (*web.App, error) {
	app, err := web.New(opts...)
	if err != nil {
		return nil, err
	}
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		// A plain sleep, as in the seeds: it holds whatever the executor gave
		// the handler (a goroutine, a pool worker, an OS thread) for its length.
		time.Sleep(sleep)
		_, err := io.WriteString(w, "Hello World! Hello World! Hello World!")
		return err
	})
	return app, nil
}
