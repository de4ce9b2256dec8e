package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/loomrt/loom"
)

// DefaultBodyLimit is the request body limit of an App made without BodyLimit.
const DefaultBodyLimit = 10 << 20

// App is a set of routes and the executors they run on. It is an
// http.Handler, so it can be served by any http.Server, httptest.Server or
// mounted under another mux; Run, ListenAndServe and Serve add a server with
// sensible limits and graceful shutdown.
//
// Register routes and decorators before serving; after that, an App is safe
// for concurrent use. A panic in a handler is recovered: the client gets a 500
// (if nothing was sent yet), the logger gets the stack, and the server lives.
type App struct {
	root *Group // routes registered on the App itself

	mux        *http.ServeMux
	handler    http.Handler // mux wrapped by the app-wide decorators
	decorators []func(http.Handler) http.Handler
	settings   settings
	logger     *slog.Logger
	metrics    *metrics

	routeBodyTimeouts bool // some route has RouteBodyTimeout: wrap bodies even without an App timeout

	executor loom.Executor   // default executor for routes
	owned    []loom.Executor // executors the App made and must shut down
	known    []loom.Executor // every executor routes use, for metrics

	mu           sync.Mutex
	shutdown     bool
	closingCtx   context.Context // ends when the server stops: long-lived handlers (WebSockets) end
	closeSockets context.CancelFunc
	sockets      int           // WebSocket handlers running
	socketsDone  chan struct{} // closed when shutdown is set and sockets is 0
}

// New returns an App configured by opts. Unless WithExecutor or
// ExecutorSpec is given, the default executor comes from
// loom.FromEnv("HTTP"): the variable LOOM_EXECUTOR_HTTP, else LOOM_EXECUTOR,
// else "virtual". A bad spec is an error that names the variable. Executors the App makes are shut down by
// App.Shutdown (Serve and Run call it); executors passed in stay the caller's.
func New(opts ...Option) (*App, error) {
	a := &App{mux: http.NewServeMux()}
	a.closingCtx, a.closeSockets = context.WithCancel(context.Background())
	a.socketsDone = make(chan struct{})
	a.settings = settings{bodyLimit: DefaultBodyLimit, bodyTimeout: DefaultBodyTimeout, grace: 10 * time.Second}
	for _, opt := range opts {
		opt(&a.settings)
	}
	a.logger = a.settings.logger
	if a.logger == nil {
		a.logger = slog.Default()
	}
	// Checked before any executor is made, so that an error leaves nothing
	// running; registering the route would panic later.
	if p := a.settings.metricsPath; p != "" && !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("web: metrics path %q must start with /", p)
	}
	if d := a.settings.bodyTimeout; d < 0 {
		return nil, fmt.Errorf("web: body timeout %v is negative (0 removes it)", d)
	}
	if d := a.settings.grace; d < 0 {
		return nil, fmt.Errorf("web: shutdown grace %v is negative (0 means the default, 10s)", d)
	}
	a.executor = a.settings.executor
	if a.executor == nil && a.settings.executorSpec != "" {
		e, err := loom.Parse(a.settings.executorSpec, loom.Name("http"))
		if err != nil {
			return nil, fmt.Errorf("web: default executor: %w", err)
		}
		a.executor = e
		a.owned = append(a.owned, e)
	}
	if a.executor == nil {
		e, err := loom.FromEnv("HTTP", "")
		if err != nil {
			return nil, fmt.Errorf("web: default executor: %w", err)
		}
		a.executor = e
		a.owned = append(a.owned, e)
	}
	a.known = append(a.known, a.executor)
	a.root = &Group{app: a}
	a.handler = a.mux
	if a.settings.metricsPath != "" {
		a.metrics = newMetrics(a)
		a.Handle(http.MethodGet, a.settings.metricsPath, a.metrics.handler())
	}
	if a.settings.pprof {
		a.registerPprof()
	}
	return a, nil
}

// MustNew is New for programs and tests that treat a bad executor spec as
// fatal: it panics with New's error.
func MustNew(opts ...Option) *App {
	a, err := New(opts...)
	if err != nil {
		panic(err)
	}
	return a
}

// Use adds decorators around the whole App, unknown routes and wrong methods
// included; the first one given is the outermost. They run on the
// connection's goroutine, before the route's executor. Call Use before
// serving.
func (a *App) Use(decorators ...func(http.Handler) http.Handler) {
	a.decorators = append(a.decorators, decorators...)
	a.handler = decorate(a.mux, a.decorators)
}

// Executor returns the App's default executor.
func (a *App) Executor() loom.Executor { return a.executor }

// NewExecutor makes an executor named name for routes that need their own,
// owned and shut down by the App: loom.FromEnv(name, fallback), whose spec
// comes from LOOM_EXECUTOR_<NAME> if set, else fallback (a spec as
// loom.Parse reads it, e.g. "pool:4"), else LOOM_EXECUTOR.
// Use it to isolate a slow route so that it cannot starve the others:
//
//	slow, err := app.NewExecutor("reports", "pool:4")
//	...
//	app.Get("/report", report, web.Executor(slow))
func (a *App) NewExecutor(name, fallback string) (loom.Executor, error) {
	e, err := loom.FromEnv(name, fallback)
	if err != nil {
		return nil, fmt.Errorf("web: executor %q: %w", name, err)
	}
	a.mu.Lock()
	a.owned = append(a.owned, e)
	a.mu.Unlock()
	a.track(e)
	return e, nil
}

// track remembers an executor for the metrics collector.
func (a *App) track(e loom.Executor) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range a.known {
		if k == e {
			return
		}
	}
	a.known = append(a.known, e)
}

func (a *App) executors() []loom.Executor {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]loom.Executor(nil), a.known...)
}

// ServeHTTP serves r: it enforces the body limit and body timeout, routes,
// and logs and counts the response when the access log or metrics are on.
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer a.recoverDecorator(w, r)
	if r.Body != nil && r.Body != http.NoBody && a.settings.bodyLimit > 0 {
		if r.ContentLength > a.settings.bodyLimit {
			a.serveTooLarge(w, r)
			return
		}
		// The unwrapped writer lets MaxBytesReader close the connection.
		r.Body = http.MaxBytesReader(w, r.Body, a.settings.bodyLimit)
	}
	// Armed here, before decorators and routing, so that a decorator reading
	// the body and net/http discarding an unread one are bounded too. With
	// no App timeout the body is still wrapped when a route has its own.
	if a.settings.bodyTimeout > 0 || a.routeBodyTimeouts {
		timeBody(w, r, a.settings.bodyTimeout)
	}
	if a.metrics == nil && !a.settings.accessLog {
		a.handler.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	rw := getWriter(w)
	defer putWriter(rw)
	a.handler.ServeHTTP(rw, r)
	a.observe(rw, r, start)
}

// recoverDecorator turns a panic in a decorator (handlers' panics are
// recovered closer to them) into a 500 and a log line, as for handlers.
func (a *App) recoverDecorator(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	if a.metrics != nil {
		a.metrics.panics.Inc()
	}
	a.logger.LogAttrs(r.Context(), slog.LevelError, "decorator panic",
		slog.String("route", r.Pattern), slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
	if !headerSent(w) {
		a.renderError(w, r, &Error{Status: http.StatusInternalServerError})
	}
}

// serveTooLarge refuses a body whose declared length is over the limit,
// without reading it.
func (a *App) serveTooLarge(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rw := getWriter(w)
	defer putWriter(rw)
	a.renderError(rw, r, tooLarge(a.settings.bodyLimit))
	if a.metrics != nil || a.settings.accessLog {
		a.observe(rw, r, start)
	}
}

func (a *App) observe(rw *responseWriter, r *http.Request, start time.Time) {
	status := rw.status
	if status == 0 {
		status = http.StatusOK // a handler that wrote nothing sent an empty 200
	}
	elapsed := time.Since(start)
	if a.metrics != nil {
		a.metrics.observe(r, status, elapsed)
	}
	if a.settings.accessLog {
		a.logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.String("route", r.Pattern),
			slog.Int("status", status),
			slog.Int64("bytes", rw.written),
			slog.Duration("duration", elapsed),
			slog.String("remote", r.RemoteAddr),
		)
	}
}

func tooLarge(limit int64) error {
	return &Error{Status: http.StatusRequestEntityTooLarge,
		Message: fmt.Sprintf("request body larger than %d bytes", limit)}
}

// Shutdown ends long-lived handlers (WebSockets) and shuts down the
// executors the App made, waiting for their admitted tasks until ctx ends.
// Serve and Run call it on the way out; call it yourself when you serve the
// App with your own server. It is safe to call more than once.
func (a *App) Shutdown(ctx context.Context) error {
	a.mu.Lock()
	if a.shutdown {
		a.mu.Unlock()
		return nil
	}
	a.shutdown = true
	if a.sockets == 0 {
		close(a.socketsDone)
	}
	owned := a.owned
	a.mu.Unlock()
	a.closeSockets()

	// No goroutine waits here for the handlers: one left behind when ctx
	// ends would outlive Shutdown.
	var errs []error
	select {
	case <-a.socketsDone:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("web: websockets still open: %w", ctx.Err()))
	}
	for _, e := range owned {
		if err := e.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// openSocket counts a WebSocket in, unless the App is shutting down.
func (a *App) openSocket() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shutdown || a.closingCtx.Err() != nil {
		return false
	}
	a.sockets++
	return true
}

// closeSocket counts a WebSocket out, and tells a waiting Shutdown when it
// was the last.
func (a *App) closeSocket() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sockets--
	if a.sockets == 0 && a.shutdown {
		close(a.socketsDone)
	}
}

// logError logs an error that has no response left to carry it. A nil App
// logs to slog.Default().
func (a *App) logError(r *http.Request, msg string, err error) {
	logger := slog.Default()
	if a != nil {
		logger = a.logger
	}
	logger.LogAttrs(r.Context(), slog.LevelError, msg,
		slog.String("route", r.Pattern), slog.String("error", err.Error()))
}
