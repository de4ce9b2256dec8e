package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomrt/loom"
)

// App is a set of routes and the executors they run on. It is an
// http.Handler, so it can be served by any http.Server, httptest.Server or
// mounted under another mux; Run, ListenAndServe and Serve add a server with
// sensible limits and graceful shutdown.
//
// Register routes and observers before serving; after that, an App is safe
// for concurrent use. A panic in a handler or decorator is recovered: the
// client gets a 500 (if nothing was sent yet), the logger gets the stack,
// and the server lives.
type App struct {
	root *Group // routes registered on the App itself

	mux       *http.ServeMux
	handler   http.Handler // mux wrapped by the App's decorators
	settings  appSettings
	defaults  routeSettings // the App's route settings, executor resolved
	logger    *slog.Logger
	observers []Observer
	tls       *tls.Config // WithTLS, WithTLSConfig; nil: cleartext
	probe     probeState
	stopping  atomic.Bool // Serve was told to stop, or Shutdown began: not ready
	starters  []Starter   // the observers that are Starters

	plainObservers bool // an observer is no Starter: every request is observed

	// wrapBodies is set when some level has a body limit or timeout: then
	// every request body is wrapped in a requestBody. bodyCeiling is the
	// largest limit of any level (0: some level has none), checked against
	// the declared length before routing. bodyTimeoutCeiling is the
	// longest body timeout of any level, for engines that read a body
	// before routing.
	wrapBodies         bool
	bodyCeiling        int64
	bodyTimeoutCeiling time.Duration

	// decorated is set once a decorator (of the App or of a route) or an
	// WithErrorHandler may run outside a handler's own recovery: then serve
	// recovers their panics. Without them only web and net/http run there,
	// and a request saves serve's deferred call.
	decorated bool

	mu        sync.Mutex
	owned     []loom.Executor          // executors the App made and must shut down
	known     []loom.Executor          // every executor routes use, the default first
	named     map[string]namedExecutor // WithExecutorFromEnv executors, by name
	configErr error                    // WithExecutorFromEnv failures of groups and routes

	shutdown   bool
	closingCtx context.Context // ends when the App shuts down: long-lived handlers end
	closeHeld  context.CancelFunc
	held       int           // long-lived handlers running (Hold)
	heldDone   chan struct{} // closed when shutdown is set and held is 0
}

type namedExecutor struct {
	fallback string
	executor loom.Executor
	err      error
}

// New returns an App configured by opts. Unless WithExecutor or
// WithExecutorFromEnv is given, the default executor is
// WithExecutorFromEnv("http", ""): the spec in LOOM_EXECUTOR_HTTP, else
// LOOM_EXECUTOR, else "virtual". A bad spec, a negative WithShutdownGrace or
// WithWriteTimeout, and a WithTLS file that cannot be read are errors. Executors the App makes are shut down by
// App.Shutdown (Serve and Run call it); executors passed in stay the
// caller's.
func New(opts ...AppOption) (*App, error) {
	c := config{
		app:   appSettings{grace: 10 * time.Second, writeTimeout: DefaultWriteTimeout},
		route: routeSettings{bodyLimit: DefaultBodyLimit, bodyTimeout: DefaultBodyTimeout},
	}
	applyApp(&c, opts)
	if d := c.app.grace; d < 0 {
		return nil, fmt.Errorf("web: shutdown grace %v is negative (0 means the default, 10s)", d)
	}
	if d := c.app.writeTimeout; d < 0 {
		return nil, fmt.Errorf("web: write timeout %v is negative (0 removes it)", d)
	}
	if d := c.app.shutdownDelay; d < 0 {
		return nil, fmt.Errorf("web: shutdown delay %v is negative (0 means none)", d)
	}
	tlsConfig, err := serverTLS(c.app)
	if err != nil {
		return nil, err
	}
	if c.app.engine == nil {
		e, err := engineFromEnv()
		if err != nil {
			return nil, err
		}
		c.app.engine = e
	}
	a := &App{mux: http.NewServeMux(), settings: c.app, logger: c.app.logger, tls: tlsConfig}
	if a.logger == nil {
		a.logger = slog.Default()
	}
	a.closingCtx, a.closeHeld = context.WithCancel(context.Background())
	a.heldDone = make(chan struct{})
	a.defaults = c.route
	a.defaults.decorators = nil // they wrap the whole App, not each route
	if a.defaults.executor == nil {
		env := a.defaults.envExecutor
		if env == nil {
			env = &envExecutor{name: "http"}
		}
		e, err := a.executorFromEnv(env)
		if err != nil {
			return nil, err
		}
		a.defaults.executor = e
	}
	a.defaults.envExecutor = nil
	a.known = append(a.known, a.defaults.executor)
	a.noteBody(a.defaults)
	a.root = &Group{app: a, settings: a.defaults}
	a.handler = decorate(a.mux, c.route.decorators)
	a.decorated = len(c.route.decorators) > 0 || a.settings.errorHandler != nil
	if a.settings.accessLog {
		a.observers = append(a.observers, accessLog{a.logger})
	}
	if a.settings.pprof {
		a.registerPprof()
	}
	return a, nil
}

// MustNew is New for programs and tests that treat a bad executor spec as
// fatal: it panics with New's error.
func MustNew(opts ...AppOption) *App {
	a, err := New(opts...)
	if err != nil {
		panic(err)
	}
	return a
}

// executorFromEnv returns the App's executor named env.name, building it
// with loom.FromEnv the first time.
func (a *App) executorFromEnv(env *envExecutor) (loom.Executor, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n, ok := a.named[env.name]; ok {
		if n.fallback != env.fallback {
			panic(fmt.Sprintf("web: executor %q declared with fallback %q and %q", env.name, n.fallback, env.fallback))
		}
		return n.executor, n.err
	}
	e, err := loom.FromEnv(env.name, env.fallback)
	if err != nil {
		err = fmt.Errorf("web: executor %q: %w", env.name, err)
	} else {
		a.owned = append(a.owned, e)
	}
	if a.named == nil {
		a.named = map[string]namedExecutor{}
	}
	a.named[env.name] = namedExecutor{fallback: env.fallback, executor: e, err: err}
	return e, err
}

// resolveExecutor returns the executor of a group or route with settings s,
// building it from the environment if s asks for that. A spec that does not
// parse is kept for Err, and the routes get an executor that refuses with
// that error.
func (a *App) resolveExecutor(s *routeSettings) {
	if s.envExecutor == nil {
		return
	}
	e, err := a.executorFromEnv(s.envExecutor)
	if err != nil {
		a.mu.Lock()
		if a.configErr == nil {
			a.configErr = err
		}
		a.mu.Unlock()
		e = failedExecutor{err}
	}
	s.executor, s.envExecutor = e, nil
}

// Err returns the first configuration error found while registering groups
// and routes — a WithExecutorFromEnv spec that does not parse — or nil. Serve,
// ListenAndServe and Run return it without serving; a program that serves
// the App with a server of its own should check it first.
func (a *App) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.configErr
}

// noteBody records that requests need their bodies wrapped for the limit
// and timeout of s.
func (a *App) noteBody(s routeSettings) {
	if s.bodyLimit > 0 || s.bodyTimeout > 0 {
		a.wrapBodies = true
	}
	switch {
	case s.bodyLimit <= 0:
		a.bodyCeiling = -1 // no ceiling: a level has no limit
	case a.bodyCeiling >= 0 && s.bodyLimit > a.bodyCeiling:
		a.bodyCeiling = s.bodyLimit
	}
	a.bodyTimeoutCeiling = max(a.bodyTimeoutCeiling, s.bodyTimeout)
}

// track remembers an executor for Executors.
func (a *App) track(e loom.Executor) {
	if _, failed := e.(failedExecutor); failed {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range a.known {
		if k == e {
			return
		}
	}
	a.known = append(a.known, e)
}

// Executors returns every executor the App's routes run on, the default
// first, for reports such as web/metrics' collector.
func (a *App) Executors() []loom.Executor {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]loom.Executor(nil), a.known...)
}

// ServeHTTP serves r: it enforces the body limit and body timeout, routes,
// and tells the observers (the access log, metrics) about the response.
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.settings.probes && a.serveProbe(w, r) {
		return
	}
	observed := a.observers != nil
	if a.starters != nil {
		r, observed = a.start(r)
	}
	if a.wrapBodies && r.Body != nil && r.Body != http.NoBody {
		if a.bodyCeiling > 0 && r.ContentLength > a.bodyCeiling {
			a.serveTooLarge(w, r, a.bodyCeiling, observed)
			return
		}
		// Wrapped here, before decorators and routing, so that a decorator
		// reading the body and net/http discarding an unread one are bounded
		// too; a route with settings of its own re-arms it.
		wrapBody(w, r, a.defaults.bodyLimit, a.defaults.bodyTimeout)
	}
	if !observed {
		if !a.decorated {
			a.handler.ServeHTTP(w, r)
			return
		}
		a.serve(w, r)
		return
	}
	start := time.Now()
	rw := getWriter(w, a)
	a.serve(rw, r)
	a.observe(rw, r, start)
	putWriter(rw)
}

// serve runs the App's decorators and routes, turning a panic in a
// decorator (handlers' panics are recovered closer to them) into a 500 and
// a log line, as for handlers.
func (a *App) serve(w http.ResponseWriter, r *http.Request) {
	defer a.recoverDecorator(w, r)
	a.handler.ServeHTTP(w, r)
}

func (a *App) recoverDecorator(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	a.logPanic(w, r, "decorator panic", v)
}

// serveTooLarge refuses a body whose declared length is over the limit,
// without reading it.
func (a *App) serveTooLarge(w http.ResponseWriter, r *http.Request, limit int64, observed bool) {
	start := time.Now()
	rw := getWriter(w, a)
	defer putWriter(rw)
	a.renderError(rw, r, tooLarge(limit))
	if observed {
		a.observe(rw, r, start)
	}
}

func (a *App) observe(rw *responseWriter, r *http.Request, start time.Time) {
	resp := Response{Status: rw.status, Bytes: rw.written, Duration: time.Since(start), Panicked: rw.panicked}
	if resp.Status == 0 {
		resp.Status = http.StatusOK // a handler that wrote nothing sent an empty 200
	}
	for _, o := range a.observers {
		o.Observe(r, resp)
	}
}

func tooLarge(limit int64) error {
	return &Error{Status: http.StatusRequestEntityTooLarge,
		Message: fmt.Sprintf("request body larger than %d bytes", limit)}
}

// Shutdown ends long-lived handlers (Hold: WebSockets, streams) and shuts
// down the executors the App made, waiting for their admitted tasks until
// ctx ends. Serve and Run call it on the way out; call it yourself when you
// serve the App with your own server. It is safe to call more than once.
func (a *App) Shutdown(ctx context.Context) error {
	a.stopping.Store(true)
	a.mu.Lock()
	if a.shutdown {
		a.mu.Unlock()
		return nil
	}
	a.shutdown = true
	if a.held == 0 {
		close(a.heldDone)
	}
	owned := a.owned
	a.mu.Unlock()
	a.closeHeld()

	// No goroutine waits here for the handlers: one left behind when ctx
	// ends would outlive Shutdown.
	var errs []error
	select {
	case <-a.heldDone:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("web: long-lived handlers still running: %w", ctx.Err()))
	}
	for _, e := range owned {
		if err := e.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Hold registers a long-lived handler — a WebSocket, a stream of
// server-sent events — with the App serving w, so that App.Shutdown (and so
// Serve and Run, whose graceful shutdown does not wait for hijacked
// connections) tells it to stop and waits for it. It returns stop, a context
// that ends when the App shuts down, and release, which the handler must
// call once it is done. When the App is already shutting down, err is a 503
// *Error to return instead. Outside an App (a HandlerFunc on another mux)
// stop never ends and release does nothing.
func Hold(w http.ResponseWriter) (stop context.Context, release func(), err error) {
	rw := recorded(w)
	if rw == nil || rw.app == nil {
		return context.Background(), func() {}, nil
	}
	a := rw.app
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shutdown {
		return nil, nil, &Error{Status: http.StatusServiceUnavailable, Message: "server shutting down"}
	}
	a.held++
	var once sync.Once
	return a.closingCtx, func() { once.Do(a.release) }, nil
}

// release counts a long-lived handler out, and tells a waiting Shutdown
// when it was the last.
func (a *App) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held--
	if a.held == 0 && a.shutdown {
		close(a.heldDone)
	}
}

// failedExecutor stands in for a WithExecutorFromEnv executor whose spec did
// not parse: it refuses every task with that error, so the route answers
// 500 and logs it.
type failedExecutor struct{ err error }

var _ loom.Executor = failedExecutor{}

func (f failedExecutor) Go(context.Context, loom.Task) error  { return f.err }
func (f failedExecutor) Run(context.Context, loom.Task) error { return f.err }
func (f failedExecutor) Shutdown(context.Context) error       { return nil }
func (f failedExecutor) Stats() loom.Stats                    { return loom.Stats{} }
