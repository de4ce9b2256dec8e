// Command static serves the files in public/ at /static/: from the copy
// embedded in the binary, so it works from any directory, or from a
// directory on disk with -dir. GET / redirects to /static/.
//
//	go run ./examples/static
//	go run ./examples/static -dir examples/static/public
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/loomrt/loom/web"
	_ "github.com/loomrt/loom/web/nbio" // LOOM_ENGINE=nbio serves on the event loop
)

//go:embed public
var embedded embed.FS

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "static:", err)
		os.Exit(1)
	}
}

// run serves the app until ctx ends.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("static", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8080", "listen address")
	dir := flags.String("dir", "", "serve this directory instead of the embedded files")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	files, err := fs.Sub(embedded, "public")
	if err != nil {
		return err
	}
	if *dir != "" {
		// os.Root confines every open, symlinks included, to the directory.
		root, err := os.OpenRoot(*dir)
		if err != nil {
			return fmt.Errorf("-dir: %w", err)
		}
		defer root.Close()
		files = root.FS()
	}
	app, err := newApp(files)
	if err != nil {
		return err
	}
	return app.ListenAndServe(ctx, *addr)
}

// newApp builds the app serving files at /static/.
func newApp(files fs.FS, opts ...web.AppOption) (*web.App, error) {
	if files == nil {
		return nil, errors.New("no files to serve")
	}
	app, err := web.New(append([]web.AppOption{web.WithDecorators(web.Compress)}, opts...)...)
	if err != nil {
		return nil, err
	}
	app.Static("/static/", files)
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		return web.Redirect(w, r, "/static/", http.StatusFound)
	})
	return app, nil
}
