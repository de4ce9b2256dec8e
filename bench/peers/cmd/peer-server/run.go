package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"

	"github.com/loomrt/loom/bench/peers/internal/echo"
	"github.com/loomrt/loom/internal/harness/runtimestats"
)

// run serves the workload until ctx ends, then shuts both listeners down
// gracefully, letting requests in flight finish. Once both listeners are up
// it writes exactly one line to stdout,
//
//	listening http=HOST:PORT metrics=HOST:PORT
//
// which loom bench parses to find the server. It returns nil after a clean
// shutdown and after -h.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, err := parseConfig(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if cfg.maxThreads > 0 {
		debug.SetMaxThreads(cfg.maxThreads)
	}

	appListener, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen -addr: %w", err)
	}
	metricsListener, err := net.Listen("tcp", cfg.metricsAddr)
	if err != nil {
		appListener.Close()
		return fmt.Errorf("listen -metrics-addr: %w", err)
	}
	var app appServer
	closeWorkload := func() error { return nil }
	switch {
	case cfg.workload == actorEcho:
		pairs, err := echo.New(cfg.framework.String(), cfg.pairs)
		if err != nil {
			appListener.Close()
			metricsListener.Close()
			return err
		}
		app, closeWorkload = newServer(actorEchoHandler(pairs)), pairs.Close
	case cfg.workload.techEmpower() || cfg.framework.native():
		te := &teApp{}
		if cfg.workload.techEmpower() {
			if te, err = newTEApp(ctx, cfg.workload, cfg.dbPool); err != nil {
				appListener.Close()
				metricsListener.Close()
				return err
			}
			closeWorkload = te.close
		}
		if cfg.framework.native() {
			app = cfg.framework.nativeServer(cfg.workload, te)
		} else {
			app = newServer(cfg.framework.teHandler(cfg.workload, te))
		}
	default:
		app = newServer(cfg.framework.handler(cfg.workload, cfg.sleep))
	}
	metrics := newServer(runtimestats.Handler())

	// Writes to an *os.File are not buffered, so the line reaches the
	// runner as soon as it is written.
	if _, err := fmt.Fprintf(stdout, "listening http=%s metrics=%s\n", appListener.Addr(), metricsListener.Addr()); err != nil {
		appListener.Close()
		metricsListener.Close()
		return errors.Join(fmt.Errorf("announce: %w", err), closeWorkload())
	}

	served := make(chan error, 2)
	go func() { served <- serve(app, appListener, "http") }()
	go func() { served <- serve(metrics, metricsListener, "metrics") }()

	var serveErr error
	pending := 2
	select {
	case <-ctx.Done():
	case serveErr = <-served:
		pending--
	}

	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	shutdownErr := errors.Join(
		shutdown(shutdownCtx, app, "http"),
		shutdown(shutdownCtx, metrics, "metrics"),
	)
	for ; pending > 0; pending-- {
		serveErr = errors.Join(serveErr, <-served)
	}
	return errors.Join(serveErr, shutdownErr, closeWorkload())
}

// serve runs srv on l until it is shut down; a shutdown is not an error.
func serve(srv appServer, l net.Listener, name string) error {
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", name, err)
	}
	return nil
}

// shutdown stops srv gracefully, and closes it outright when ctx ends first.
func shutdown(ctx context.Context, srv appServer, name string) error {
	if err := srv.Shutdown(ctx); err != nil {
		if c, ok := srv.(interface{ Close() error }); ok {
			c.Close()
		}
		return fmt.Errorf("shut down %s: %w", name, err)
	}
	return nil
}
