package web

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/loomrt/loom"
)

// An AppOption configures an App; New and MustNew take them. A nil option
// is ignored, wherever options are taken.
type AppOption interface {
	applyApp(*config)
}

// A RouteOption configures a group or a route; App.Group, Group.Group, Get,
// Post, Put, Patch, Delete, Options, Handle and Static take them.
type RouteOption interface {
	applyRoute(*routeSettings)
}

// An Option is a route setting — WithExecutor, WithExecutorFromEnv,
// WithBodyLimit, WithBodyTimeout, WithDecorators, WithBlocking,
// WithDotfiles — which fits an App, a group and a route alike: given to New
// it is the default of the App's routes, given to a group it holds for the
// group's routes, and the narrowest level wins.
type Option interface {
	AppOption
	RouteOption
}

// A FilesOption (WithDotfiles) fits Files as well as an App, a group and a
// route.
type FilesOption interface {
	Option
	applyFiles(*routeSettings)
}

// A JSONOption (WithDisallowUnknownFields) configures the decoding of JSON
// and ReadJSON.
type JSONOption interface {
	applyJSON(*jsonDecoding)
}

// appOption sets an App-only setting.
type appOption func(*appSettings)

func (o appOption) applyApp(c *config) { o(&c.app) }

// routeOption sets a route setting, at any level.
type routeOption func(*routeSettings)

func (o routeOption) applyApp(c *config)          { o(&c.route) }
func (o routeOption) applyRoute(s *routeSettings) { o(s) }

// filesOption is a route setting that Files reads too.
type filesOption struct{ routeOption }

func (o filesOption) applyFiles(s *routeSettings) { o.routeOption(s) }

// jsonOption sets how JSON and ReadJSON decode.
type jsonOption func(*jsonDecoding)

func (o jsonOption) applyJSON(d *jsonDecoding) { o(d) }

var (
	_ AppOption   = appOption(nil)
	_ Option      = routeOption(nil)
	_ FilesOption = filesOption{}
	_ JSONOption  = jsonOption(nil)
)

// config collects what options given to New set.
type config struct {
	app   appSettings
	route routeSettings
}

// appSettings are the settings that only an App has.
type appSettings struct {
	logger       *slog.Logger
	debug        bool
	accessLog    bool
	pprof        bool
	grace        time.Duration
	writeTimeout time.Duration
	errorHandler func(http.ResponseWriter, *http.Request, error)
	server       func(*http.Server)
	noWatch      bool   // WithoutThreadWatch
	engine       Engine // WithEngine or LOOM_ENGINE; nil: net/http

	certFile, keyFile string      // WithTLS
	tlsFiles          bool        // WithTLS was given, even with empty names
	tlsConfig         *tls.Config // WithTLSConfig
	h2c               bool        // WithH2C

	probes        bool          // WithProbes, WithReadyCheck
	readyChecks   []readyCheck  // WithReadyCheck
	shutdownDelay time.Duration // WithShutdownDelay
}

// routeSettings are inherited from App to group to route; each level
// starts from its parent's and the options given to it override them.
type routeSettings struct {
	executor    loom.Executor
	envExecutor *envExecutor // WithExecutorFromEnv; built by the App
	bodyLimit   int64
	bodyTimeout time.Duration
	decorators  []func(http.Handler) http.Handler
	dotfiles    bool
	blocking    bool // WithBlocking
	critical    bool // WithCritical
}

// envExecutor is what WithExecutorFromEnv asked for.
type envExecutor struct{ name, fallback string }

// WithExecutor runs handlers on e instead of the App's default executor: given
// to New it is the default, given to a group or route it holds for those
// routes. e stays the caller's: App.Shutdown leaves it running, so shut it
// down after the App. Without WithExecutor or WithExecutorFromEnv, the App's
// default is WithExecutorFromEnv("http", ""). It applies to New, groups and routes.
func WithExecutor(e loom.Executor) Option {
	if e == nil {
		panic("web: WithExecutor(nil)")
	}
	return routeOption(func(s *routeSettings) { s.executor, s.envExecutor = e, nil })
}

// WithExecutorFromEnv runs handlers on the executor named name, which the App
// builds with loom.FromEnv(name, fallback) — the spec in
// LOOM_EXECUTOR_<NAME>, else fallback if it is not empty, else
// LOOM_EXECUTOR, else "virtual" — and shuts down in App.Shutdown. Routes
// that name the same executor share it: that is how a set of slow routes
// is isolated from the rest and sized from the environment:
//
//	app.Get("/report", report, web.WithExecutorFromEnv("reports", "limit:8"))
//
// A spec that does not parse is an error: from New when given to New; when
// given to a group or route, from App.Err, and Serve, ListenAndServe and Run
// return it without serving (the routes concerned answer 500 meanwhile).
// Naming one executor with two different fallbacks panics. It applies to
// New, groups and routes.
func WithExecutorFromEnv(name, fallback string) Option {
	if name == "" {
		panic("web: WithExecutorFromEnv with an empty name")
	}
	env := &envExecutor{name: name, fallback: fallback}
	return routeOption(func(s *routeSettings) { s.executor, s.envExecutor = nil, env })
}

// WithBodyLimit caps request bodies at n bytes; a larger body is refused with
// 413 and the connection is closed after the response. Without it the limit
// is DefaultBodyLimit; n <= 0 removes the limit. It applies to New, groups
// and routes; a route's limit governs its handler and its decorators, and
// the App's governs the App's decorators (WithDecorators given to New).
func WithBodyLimit(n int64) Option {
	if n < 0 {
		n = 0
	}
	return routeOption(func(s *routeSettings) { s.bodyLimit = n })
}

// WithBodyTimeout gives each request d to deliver its body, counted from when
// its headers have been read, or, for a route with its own WithBodyTimeout, from
// when the request reaches the route. A read of the body after that fails
// with an error matching ErrBodyTimeout, which JSON, ReadJSON, the form
// helpers and the App's error rendering turn into 408 Request Timeout; the
// connection is then closed. Without it the timeout is DefaultBodyTimeout;
// d == 0 removes it; a negative d panics. It applies to New, groups and
// routes (a route for large uploads raises it).
//
// It bounds how long a client that sends its headers and then trickles or
// withholds the body can hold a handler and its executor slot, which
// ReadHeaderTimeout does not. Unlike http.Server.ReadTimeout it covers only
// the body: once the body has been read to its end, net/http clears the
// deadline, so the handler may then take as long as it needs. A route's
// timeout does not apply to a body that a decorator given to New has
// already read to its end or replaced. WebSockets are not affected.
//
// It needs a writer that can set read deadlines (http.ResponseController),
// as any net/http server's can. Under a server that has a ReadTimeout of its
// own, and with a writer that cannot, requests are served without it.
func WithBodyTimeout(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("web: WithBodyTimeout(%v): negative duration (0 removes the timeout)", d))
	}
	return routeOption(func(s *routeSettings) { s.bodyTimeout = d })
}

// WithDecorators adds decorators; the first one given is the outermost. Given to New,
// they wrap the whole App, unknown routes and wrong methods included; given
// to a group or route, they wrap its handlers, inside the group's, which run
// inside the App's. All of them run on the connection's goroutine, before
// the executor admits the handler, so a decorator can refuse a request
// cheaply. It applies to New, groups and routes.
func WithDecorators(decorators ...func(http.Handler) http.Handler) Option {
	return routeOption(func(s *routeSettings) { s.decorators = append(s.decorators, decorators...) })
}

// WithBlocking marks handlers that hold their OS thread while they wait — a cgo
// call, a raw system call, a driver that blocks in C — so that each runs
// inside loom.Blocking, under the process-wide bound of such calls (see
// loom.SetBlockingLimit). A request that finds the bound full waits for its
// turn while its client does, and is answered 503 with Retry-After if the
// bound rejects or the request's deadline passes first. It applies to New,
// groups and routes.
func WithBlocking() Option {
	return routeOption(func(s *routeSettings) { s.blocking = true })
}

// WithDotfiles lets Static and Files serve names with an element that
// begins with "." (.env, .git/config, .well-known/…), which they refuse
// with 404 by default. It applies to Files, Static, and to New and groups
// for the Static routes below them.
func WithDotfiles() FilesOption {
	return filesOption{func(s *routeSettings) { s.dotfiles = true }}
}

// WithDisallowUnknownFields makes JSON and ReadJSON refuse a body that has an
// object field the destination has no place for, with a 400 naming it
// (unknown JSON field "colour"), as json.Decoder.DisallowUnknownFields does.
// By default such a field is ignored. It applies to JSON and ReadJSON.
//
// Use it where a misspelt or misplaced field must not pass unnoticed: a
// request that changes state, where {"dryrun": true} read as no dry run at
// all does harm. Leave it off where clients may be newer than the server
// (they add fields the server learns later) or are not yours (webhooks).
// Field names still match case-insensitively, as encoding/json matches them.
func WithDisallowUnknownFields() JSONOption {
	return jsonOption(func(d *jsonDecoding) { d.disallowUnknownFields = true })
}

// WithoutThreadWatch stops Serve, ListenAndServe and Run from running a
// loom.ThreadWatch while they serve. By default they run one with its
// default marks: while the OS threads in use pass 80% of the process's
// thread limit, every loom executor refuses new handlers, which are
// answered 503 with Retry-After, instead of the process dying of thread
// exhaustion. It applies to New.
func WithoutThreadWatch() AppOption {
	return appOption(func(a *appSettings) { a.noWatch = true })
}

// WithLogger sets the logger for errors, panics and the access log. Without it
// the App uses slog.Default(). It applies to New.
func WithLogger(l *slog.Logger) AppOption {
	return appOption(func(a *appSettings) { a.logger = l })
}

// WithDebug makes error responses show the error's text, internals included.
// Never turn it on where clients are not trusted. It applies to New.
func WithDebug() AppOption {
	return appOption(func(a *appSettings) { a.debug = true })
}

// WithAccessLog logs one line per request at Info level: method, path, route,
// status, bytes, duration and remote address. A request whose client left
// before its response was sent is logged with status 499
// (StatusClientClosed). It applies to New.
func WithAccessLog() AppOption {
	return appOption(func(a *appSettings) { a.accessLog = true })
}

// WithPprof serves net/http/pprof at /debug/pprof/. Profiles reveal internals:
// keep it off, or behind a decorator that checks who is asking, in
// production. It applies to New.
func WithPprof() AppOption {
	return appOption(func(a *appSettings) { a.pprof = true })
}

// WithShutdownGrace sets how long Serve and Run wait for in-flight requests
// after the stop signal before closing connections. Zero means the default,
// 10 seconds; a negative d makes New return an error. It applies to New.
func WithShutdownGrace(d time.Duration) AppOption {
	return appOption(func(a *appSettings) {
		if d != 0 {
			a.grace = d
		}
	})
}

// WithWriteTimeout bounds how long a write of a response may go without
// progress on a connection served by Serve, ListenAndServe or Run: a client
// that stops reading a large response makes the handler's writes fail (with
// an error matching os.ErrDeadlineExceeded) within d, instead of holding the
// handler, its executor slot and the connection for ever. The clock restarts
// whenever data moves, so a slow client that keeps reading gets all of a long
// download. Without it the timeout is DefaultWriteTimeout; d == 0 removes
// it; a negative d makes New return an error. It applies to New.
//
// An App served by a server of your own relies on that server's
// http.Server.WriteTimeout instead, and so does Serve when WithServerConfig
// sets one.
func WithWriteTimeout(d time.Duration) AppOption {
	return appOption(func(a *appSettings) { a.writeTimeout = d })
}

// WithErrorHandler replaces the rendering of errors returned by handlers. f is
// called only while no response has been sent; it must write one. It applies
// to New.
func WithErrorHandler(f func(w http.ResponseWriter, r *http.Request, err error)) AppOption {
	return appOption(func(a *appSettings) { a.errorHandler = f })
}

// WithServerConfig lets f adjust the http.Server that Serve and Run create,
// after the defaults are set and before it starts. It applies to New.
func WithServerConfig(f func(*http.Server)) AppOption {
	return appOption(func(a *appSettings) { a.server = f })
}

// applyApp applies opts, given to New, over the defaults in c.
func applyApp(c *config, opts []AppOption) {
	for _, o := range opts {
		if o != nil {
			o.applyApp(c)
		}
	}
}

// applyRoute applies opts over s.
func applyRoute(s *routeSettings, opts []RouteOption) {
	for _, o := range opts {
		if o != nil {
			o.applyRoute(s)
		}
	}
}
