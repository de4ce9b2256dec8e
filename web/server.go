package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/loomrt/loom"
)

// Server defaults, chosen so that a slow or hostile client cannot hold
// resources for long (with WithBodyTimeout and WithWriteTimeout). WithServerConfig
// changes them.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 1 << 20
)

// Run serves the App on addr until SIGINT or SIGTERM, then shuts down
// gracefully (see Serve). It is the one call a main needs.
func (a *App) Run(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return a.ListenAndServe(ctx, addr)
}

// ListenAndServe listens on addr and serves the App until ctx ends (see
// Serve). When it cannot listen, it shuts the App down and says why.
func (a *App) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errors.Join(fmt.Errorf("web: listen: %w", err), a.Shutdown(context.WithoutCancel(ctx)))
	}
	return a.Serve(ctx, ln)
}

// Serve serves the App on ln until ctx ends; then App.Ready fails (so
// /readyz answers 503), it keeps serving for the shutdown delay
// (WithShutdownDelay; none by default), stops accepting,
// lets in-flight requests finish within the shutdown grace (WithShutdownGrace),
// closes what is left, and shuts the App down (App.Shutdown). It blocks
// until all of that is done and returns nil after a clean shutdown. A
// configuration error (App.Err) is returned at once, before serving, after
// shutting the App down; ln is closed either way. An App is served once.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	if err := a.Err(); err != nil {
		return errors.Join(err, ln.Close(), a.Shutdown(context.WithoutCancel(ctx)))
	}
	if !a.settings.noWatch {
		// Process-wide: while threads run short, every loom executor,
		// this App's included, refuses new work (503) until they recover.
		watch := &loom.ThreadWatch{Logger: a.logger}
		if err := watch.Start(); err != nil {
			return errors.Join(err, ln.Close(), a.Shutdown(context.WithoutCancel(ctx)))
		}
		defer watch.Close()
	}
	srv := a.newServer()
	var server EngineServer = srv
	if e := a.settings.engine; e != nil {
		es, err := e.NewServer(srv, a.engineSettings())
		if err != nil {
			return errors.Join(fmt.Errorf("web: engine %s: %w", e.Name(), err), ln.Close(), a.Shutdown(context.WithoutCancel(ctx)))
		}
		server = es
	} else {
		if d := a.settings.writeTimeout; d > 0 && srv.WriteTimeout <= 0 {
			// Under TLS too: the listener's connections are the TCP ones
			// that tls.Conn writes to.
			ln = writeTimeoutListener{Listener: ln, clock: newWriteClock(d)}
			if servesHTTP2(srv) {
				srv.Handler = streamWriteTimeout{next: srv.Handler, timeout: d}
			}
		}
		if srv.TLSConfig != nil {
			// net/http must see a *tls.Conn to negotiate HTTP/2 and fill
			// r.TLS, so the framing notes, which read the plain bytes,
			// are not taken under TLS.
			server = tlsServer{srv}
		} else {
			ln = serveFraming(srv, ln)
		}
	}
	a.logger.LogAttrs(ctx, slog.LevelInfo, "serving", slog.String("addr", ln.Addr().String()), slog.String("engine", a.EngineName()),
		slog.Bool("tls", srv.TLSConfig != nil))
	served := make(chan error, 1)
	go func() { served <- server.Serve(ln) }()

	var errs []error
	select {
	case err := <-served:
		// The listener failed before we were asked to stop.
		errs = append(errs, fmt.Errorf("web: serve: %w", err))
	case <-ctx.Done():
		a.stopping.Store(true) // /readyz fails from here on
		if d := a.settings.shutdownDelay; d > 0 {
			a.logger.LogAttrs(ctx, slog.LevelInfo, "not ready, stopping after the shutdown delay", slog.Duration("delay", d))
			delay := time.NewTimer(d)
			select {
			case <-delay.C:
			case err := <-served:
				delay.Stop()
				served <- err // for the receive below
			}
		}
		grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.settings.grace)
		defer cancel()
		if err := server.Shutdown(grace); err != nil {
			errs = append(errs, fmt.Errorf("web: graceful shutdown: %w", err))
			_ = server.Close()
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("web: serve: %w", err))
		}
	}
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.settings.grace)
	defer cancel()
	if err := a.Shutdown(grace); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (a *App) newServer() *http.Server {
	srv := &http.Server{
		Handler:           a,
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		IdleTimeout:       DefaultIdleTimeout,
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn),
		TLSConfig:         a.tls,
		Protocols:         a.protocols(),
	}
	// Hijacked connections (WebSockets) are invisible to Shutdown; end them.
	srv.RegisterOnShutdown(a.closeHeld)
	if a.settings.server != nil {
		a.settings.server(srv)
	}
	return srv
}

// engineSettings are the App's settings an engine other than net/http's
// needs.
func (a *App) engineSettings() EngineSettings {
	s := EngineSettings{WriteTimeout: a.settings.writeTimeout, BodyTimeout: a.bodyTimeoutCeiling,
		Logger: a.logger, OnShutdown: a.closeHeld}
	if a.bodyCeiling > 0 {
		s.BodyLimit = a.bodyCeiling
	}
	return s
}
