// Command todo serves a todo list: a JSON API at /api/todos and a
// TodoMVC-style page at / that uses it.
//
//	go run ./examples/todo                       # SQLite file todo.db, 127.0.0.1:8080
//	go run ./examples/todo -db /tmp/t.db -addr :9000
//	LOOM_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test go run ./examples/todo
//	LOOM_EXECUTOR=pool:16 go run ./examples/todo # every route on 16 workers
//	go run ./examples/todo -tls-cert cert.pem -tls-key key.pem -probes -shutdown-delay 5s
//	go run ./examples/todo -otel                 # every request's span to stdout
//
// With -tls-cert and -tls-key it serves HTTPS, and HTTP/2 to clients that
// offer it. With -probes it serves /livez and /readyz, whose readiness
// includes a ping of the database; -shutdown-delay keeps serving that long
// after SIGTERM with /readyz failing, before the graceful shutdown. With
// -otel every request is traced with OpenTelemetry (web/otelweb), a server
// span named by its route, and the spans are written to stdout as JSON, one
// object each (a real deployment exports them with OTLP instead).
//
// The routes are listed in package todoapp's documentation. The list comes a
// page at a time, with a Link header to the next page while there is one:
//
//	curl -i 'http://127.0.0.1:8080/api/todos?limit=50'
//
// It stops gracefully on SIGINT or SIGTERM: requests in flight finish, then
// the database is closed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/loomrt/loom/examples/todo/todoapp"
	"github.com/loomrt/loom/web"
	_ "github.com/loomrt/loom/web/nbio" // LOOM_ENGINE=nbio serves on the event loop
	"github.com/loomrt/loom/web/otelweb"
)

// spansOut is where -otel writes spans; tests replace it.
var spansOut io.Writer = os.Stdout

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "todo:", err)
		os.Exit(1)
	}
}

// run serves the app until ctx ends. getenv is os.Getenv outside tests.
func run(ctx context.Context, args []string, getenv func(string) string) error {
	flags := flag.NewFlagSet("todo", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8080", "`address` to listen on")
	db := flags.String("db", "todo.db", "SQLite database `file`; ignored when LOOM_DATABASE_URL is set")
	accessLog := flags.Bool("access-log", false, "log every request")
	certFile := flags.String("tls-cert", "", "serve HTTPS with the PEM certificate chain in `file` (with -tls-key)")
	keyFile := flags.String("tls-key", "", "the PEM private key `file` of -tls-cert")
	probes := flags.Bool("probes", false, "serve /livez and /readyz (readiness pings the database)")
	shutdownDelay := flags.Duration("shutdown-delay", 0, "after SIGTERM, keep serving this `long` with /readyz failing")
	traced := flags.Bool("otel", false, "trace every request with OpenTelemetry, writing the spans to stdout as JSON")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}

	var store *todoapp.Store
	var err error
	if url := getenv("LOOM_DATABASE_URL"); url != "" {
		store, err = todoapp.OpenPostgres(ctx, url)
	} else {
		store, err = todoapp.OpenSQLite(ctx, *db)
	}
	if err != nil {
		return err
	}

	opts := []web.AppOption{web.WithShutdownDelay(*shutdownDelay)}
	if *accessLog {
		opts = append(opts, web.WithAccessLog())
	}
	if *certFile != "" || *keyFile != "" {
		opts = append(opts, web.WithTLS(*certFile, *keyFile))
	}
	if *probes {
		opts = append(opts, web.WithReadyCheck("database", store.Ping))
	}
	app, err := todoapp.NewApp(store, opts...)
	if err != nil {
		return errors.Join(err, store.Close())
	}
	flush := func() error { return nil }
	if *traced {
		if flush, err = traceRequests(app); err != nil {
			return errors.Join(err, app.Shutdown(ctx), store.Close())
		}
	}
	// ListenAndServe returns once in-flight requests are done, so the store
	// is closed only when nothing uses it any more, and the last spans are
	// written after the last request.
	err = app.ListenAndServe(ctx, *addr)
	return errors.Join(err, flush(), store.Close())
}

// traceRequests has app trace every request into a tracer provider that writes the
// spans to spansOut; flush writes those still batched and stops it.
func traceRequests(app *web.App) (flush func() error, err error) {
	exporter, err := stdouttrace.New(stdouttrace.WithWriter(spansOut))
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
	flush = func() error { return tp.Shutdown(context.Background()) }
	if _, err := otelweb.Instrument(app, otelweb.WithTracerProvider(tp)); err != nil {
		return nil, errors.Join(err, flush())
	}
	return flush, nil
}
