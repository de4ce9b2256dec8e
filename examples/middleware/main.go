// Command middleware serves a small API behind middleware from the Go
// ecosystem, used unchanged as loom decorators: request IDs and security
// headers from chi's middleware package, CORS from rs/cors, and a rate
// limit from go-chi/httprate on a group of routes that has an executor of
// its own.
//
//	go run ./examples/middleware -addr 127.0.0.1:8080
//	LOOM_ENGINE=nbio go run ./examples/middleware
//	curl -i -H 'Origin: https://app.example' 127.0.0.1:8080/api/hello
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httprate"
	"github.com/rs/cors"

	"github.com/loomrt/loom/web"
	_ "github.com/loomrt/loom/web/nbio" // LOOM_ENGINE=nbio serves on the event loop
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "middleware:", err)
		os.Exit(1)
	}
}

// run serves the app until ctx ends.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("middleware", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8080", "listen address")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	app, err := newApp(perMinute)
	if err != nil {
		return err
	}
	return app.ListenAndServe(ctx, *addr)
}

// perMinute is how many requests a client may make to /api/reports a
// minute.
const perMinute = 60

// newApp builds the app: the App's decorators give every response a
// request ID and security headers and answer CORS preflights; /api/reports
// runs on an executor of its own (LOOM_EXECUTOR_REPORTS, else limit:8)
// behind a rate limit of reportsPerMinute per client address.
func newApp(reportsPerMinute int, opts ...web.AppOption) (*web.App, error) {
	crossOrigin := cors.New(cors.Options{
		AllowedOrigins: []string{"https://app.example"},
		AllowedMethods: []string{http.MethodGet, http.MethodPost},
		AllowedHeaders: []string{"Content-Type"},
		MaxAge:         600,
	})
	opts = append([]web.AppOption{web.WithDecorators(
		middleware.ClientIPFromRemoteAddr, // no proxy in front; behind one, ClientIPFromXFF(its prefixes)
		middleware.RequestID,
		middleware.SetHeader("X-Content-Type-Options", "nosniff"),
		middleware.SetHeader("X-Frame-Options", "DENY"),
		crossOrigin.Handler,
	)}, opts...)
	app, err := web.New(opts...)
	if err != nil {
		return nil, err
	}
	app.Get("/api/hello", hello)
	app.Post("/api/hello", hello)
	reports := app.Group("/api/reports",
		web.WithExecutorFromEnv("reports", "limit:8"),
		web.WithDecorators(httprate.LimitBy(reportsPerMinute, time.Minute, clientIP)))
	reports.Get("/{id}", report)
	return app, app.Err()
}

// clientIP keys the rate limit by the address middleware.ClientIPFrom*
// found.
func clientIP(r *http.Request) (string, error) {
	return httprate.CanonicalizeIP(middleware.GetClientIP(r.Context())), nil
}

// hello answers with the request's ID, which middleware.RequestID made or
// took from the client's X-Request-Id.
func hello(w http.ResponseWriter, r *http.Request) error {
	_, err := fmt.Fprintf(w, "hello, request %s\n", middleware.GetReqID(r.Context()))
	return err
}

func report(w http.ResponseWriter, r *http.Request) error {
	id, err := web.Param(r, "id").Int()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "report %d, request %s\n", id, middleware.GetReqID(r.Context()))
	return err
}
