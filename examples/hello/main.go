// Command hello is the smallest loom web app: GET / answers "Hello World!".
// It runs its handler on the executor LOOM_EXECUTOR names (default virtual).
//
//	go run ./examples/hello -addr 127.0.0.1:8080
//	LOOM_EXECUTOR=pool:16 go run ./examples/hello
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

	"github.com/loomrt/loom/web"
	_ "github.com/loomrt/loom/web/nbio" // LOOM_ENGINE=nbio serves on the event loop
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
}

// run serves the app until ctx ends.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("hello", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8080", "listen address")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	app, err := newApp()
	if err != nil {
		return err
	}
	return app.ListenAndServe(ctx, *addr)
}

// newApp builds the app; its executor comes from the environment.
func newApp(opts ...web.AppOption) (*web.App, error) {
	app, err := web.New(opts...)
	if err != nil {
		return nil, err
	}
	app.Get("/", hello)
	return app, nil
}

func hello(w http.ResponseWriter, r *http.Request) error {
	_, err := io.WriteString(w, "Hello World!")
	return err
}
