package web

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/loomrt/loom"
)

// An Option configures an App (New), a Group (App.Group, Group.Group), a
// route (Get, Post, Handle, Static, …), or one of the adapters JSON,
// ReadJSON and Files. Each option's documentation says where it applies.
// Route settings — Executor, ExecutorFromEnv, BodyLimit, BodyTimeout, Use,
// ServeDotfiles — apply at every level: given to New they are the App's
// defaults, given to a group they hold for its routes, and the narrowest
// level wins. Giving an option where it does not apply (Logger to a route,
// Executor to JSON) panics with a "web:" message: it is a setup mistake.
type Option struct {
	name  string // for the panic that reports a misplaced option
	where scope
	apply func(*config)
}

// scope is where an option applies.
type scope uint8

const (
	scopeApp   scope = 1 << iota // New only
	scopeRoute                   // New, groups and routes
	scopeFiles                   // Static, Files
	scopeJSON                    // JSON, ReadJSON
)

// config collects what options set at one level.
type config struct {
	app   appSettings
	route routeSettings
	json  jsonDecoding
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
	noWatch      bool   // NoThreadWatch
	engine       Engine // WithEngine or LOOM_ENGINE; nil: net/http
}

// routeSettings are inherited from App to group to route; each level
// starts from its parent's and the options given to it override them.
type routeSettings struct {
	executor    loom.Executor
	envExecutor *envExecutor // ExecutorFromEnv; built by the App
	bodyLimit   int64
	bodyTimeout time.Duration
	decorators  []func(http.Handler) http.Handler
	dotfiles    bool
	blocking    bool // Blocking
}

// envExecutor is what ExecutorFromEnv asked for.
type envExecutor struct{ name, fallback string }

// applyOptions applies opts to c, panicking on one that does not apply to
// what (where it is given).
func applyOptions(c *config, opts []Option, allowed scope, what string) {
	for _, o := range opts {
		if o.apply == nil {
			panic(fmt.Sprintf("web: zero Option given to %s", what))
		}
		if o.where&allowed == 0 {
			panic(fmt.Sprintf("web: option %s does not apply to %s", o.name, what))
		}
		o.apply(c)
	}
}

// Executor runs handlers on e instead of the App's default executor: given
// to New it is the default, given to a group or route it holds for those
// routes. e stays the caller's: App.Shutdown leaves it running, so shut it
// down after the App. Without Executor or ExecutorFromEnv, the App's default
// is ExecutorFromEnv("http", ""). It applies to New, groups and routes.
func Executor(e loom.Executor) Option {
	if e == nil {
		panic("web: Executor(nil)")
	}
	return Option{name: "Executor", where: scopeRoute, apply: func(c *config) {
		c.route.executor, c.route.envExecutor = e, nil
	}}
}

// ExecutorFromEnv runs handlers on the executor named name, which the App
// builds with loom.FromEnv(name, fallback) — the spec in
// LOOM_EXECUTOR_<NAME>, else fallback if it is not empty, else
// LOOM_EXECUTOR, else "virtual" — and shuts down in App.Shutdown. Routes
// that name the same executor share it: that is how a set of slow routes
// is isolated from the rest and sized from the environment:
//
//	app.Get("/report", report, web.ExecutorFromEnv("reports", "limit:8"))
//
// A spec that does not parse is an error: from New when given to New; when
// given to a group or route, from App.Err, and Serve, ListenAndServe and Run
// return it without serving (the routes concerned answer 500 meanwhile).
// Naming one executor with two different fallbacks panics. It applies to
// New, groups and routes.
func ExecutorFromEnv(name, fallback string) Option {
	if name == "" {
		panic("web: ExecutorFromEnv with an empty name")
	}
	env := &envExecutor{name: name, fallback: fallback}
	return Option{name: "ExecutorFromEnv", where: scopeRoute, apply: func(c *config) {
		c.route.executor, c.route.envExecutor = nil, env
	}}
}

// BodyLimit caps request bodies at n bytes; a larger body is refused with
// 413 and the connection is closed after the response. Without it the limit
// is DefaultBodyLimit; n <= 0 removes the limit. It applies to New, groups
// and routes; a route's limit governs its handler and its decorators, and
// the App's governs the App's decorators (Use given to New).
func BodyLimit(n int64) Option {
	if n < 0 {
		n = 0
	}
	return Option{name: "BodyLimit", where: scopeRoute, apply: func(c *config) { c.route.bodyLimit = n }}
}

// BodyTimeout gives each request d to deliver its body, counted from when
// its headers have been read, or, for a route with its own BodyTimeout, from
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
func BodyTimeout(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("web: BodyTimeout(%v): negative duration (0 removes the timeout)", d))
	}
	return Option{name: "BodyTimeout", where: scopeRoute, apply: func(c *config) { c.route.bodyTimeout = d }}
}

// Use adds decorators; the first one given is the outermost. Given to New,
// they wrap the whole App, unknown routes and wrong methods included; given
// to a group or route, they wrap its handlers, inside the group's, which run
// inside the App's. All of them run on the connection's goroutine, before
// the executor admits the handler, so a decorator can refuse a request
// cheaply. It applies to New, groups and routes.
func Use(decorators ...func(http.Handler) http.Handler) Option {
	return Option{name: "Use", where: scopeRoute, apply: func(c *config) {
		c.route.decorators = append(c.route.decorators, decorators...)
	}}
}

// Blocking marks handlers that hold their OS thread while they wait — a cgo
// call, a raw system call, a driver that blocks in C — so that each runs
// inside loom.Blocking, under the process-wide bound of such calls (see
// loom.SetBlockingLimit). A request that finds the bound full waits for its
// turn while its client does, and is answered 503 with Retry-After if the
// bound rejects or the request's deadline passes first. It applies to New,
// groups and routes.
func Blocking() Option {
	return Option{name: "Blocking", where: scopeRoute, apply: func(c *config) { c.route.blocking = true }}
}

// ServeDotfiles lets Static and Files serve names with an element that
// begins with "." (.env, .git/config, .well-known/…), which they refuse
// with 404 by default. It applies to Files, Static, and to New and groups
// for the Static routes below them.
func ServeDotfiles() Option {
	return Option{name: "ServeDotfiles", where: scopeRoute | scopeFiles, apply: func(c *config) { c.route.dotfiles = true }}
}

// DisallowUnknownFields makes JSON and ReadJSON refuse a body that has an
// object field the destination has no place for, with a 400 naming it
// (unknown JSON field "colour"), as json.Decoder.DisallowUnknownFields does.
// By default such a field is ignored. It applies to JSON and ReadJSON.
//
// Use it where a misspelt or misplaced field must not pass unnoticed: a
// request that changes state, where {"dryrun": true} read as no dry run at
// all does harm. Leave it off where clients may be newer than the server
// (they add fields the server learns later) or are not yours (webhooks).
// Field names still match case-insensitively, as encoding/json matches them.
func DisallowUnknownFields() Option {
	return Option{name: "DisallowUnknownFields", where: scopeJSON, apply: func(c *config) { c.json.disallowUnknownFields = true }}
}

// NoThreadWatch stops Serve, ListenAndServe and Run from running a
// loom.ThreadWatch while they serve. By default they run one with its
// default marks: while the OS threads in use pass 80% of the process's
// thread limit, every loom executor refuses new handlers, which are
// answered 503 with Retry-After, instead of the process dying of thread
// exhaustion. It applies to New.
func NoThreadWatch() Option {
	return Option{name: "NoThreadWatch", where: scopeApp, apply: func(c *config) { c.app.noWatch = true }}
}

// Logger sets the logger for errors, panics and the access log. Without it
// the App uses slog.Default(). It applies to New.
func Logger(l *slog.Logger) Option {
	return Option{name: "Logger", where: scopeApp, apply: func(c *config) { c.app.logger = l }}
}

// Debug makes error responses show the error's text, internals included.
// Never turn it on where clients are not trusted. It applies to New.
func Debug() Option {
	return Option{name: "Debug", where: scopeApp, apply: func(c *config) { c.app.debug = true }}
}

// AccessLog logs one line per request at Info level: method, path, route,
// status, bytes, duration and remote address. A request whose client left
// before its response was sent is logged with status 499
// (StatusClientClosed). It applies to New.
func AccessLog() Option {
	return Option{name: "AccessLog", where: scopeApp, apply: func(c *config) { c.app.accessLog = true }}
}

// Pprof serves net/http/pprof at /debug/pprof/. Profiles reveal internals:
// keep it off, or behind a decorator that checks who is asking, in
// production. It applies to New.
func Pprof() Option {
	return Option{name: "Pprof", where: scopeApp, apply: func(c *config) { c.app.pprof = true }}
}

// ShutdownGrace sets how long Serve and Run wait for in-flight requests
// after the stop signal before closing connections. Zero means the default,
// 10 seconds; a negative d makes New return an error. It applies to New.
func ShutdownGrace(d time.Duration) Option {
	return Option{name: "ShutdownGrace", where: scopeApp, apply: func(c *config) {
		if d != 0 {
			c.app.grace = d
		}
	}}
}

// WriteTimeout bounds how long a write of a response may go without
// progress on a connection served by Serve, ListenAndServe or Run: a client
// that stops reading a large response makes the handler's writes fail (with
// an error matching os.ErrDeadlineExceeded) within d, instead of holding the
// handler, its executor slot and the connection for ever. The clock restarts
// whenever data moves, so a slow client that keeps reading gets all of a long
// download. Without it the timeout is DefaultWriteTimeout; d == 0 removes
// it; a negative d makes New return an error. It applies to New.
//
// An App served by a server of your own relies on that server's
// http.Server.WriteTimeout instead, and so does Serve when ConfigureServer
// sets one.
func WriteTimeout(d time.Duration) Option {
	return Option{name: "WriteTimeout", where: scopeApp, apply: func(c *config) { c.app.writeTimeout = d }}
}

// ErrorHandler replaces the rendering of errors returned by handlers. f is
// called only while no response has been sent; it must write one. It applies
// to New.
func ErrorHandler(f func(w http.ResponseWriter, r *http.Request, err error)) Option {
	return Option{name: "ErrorHandler", where: scopeApp, apply: func(c *config) { c.app.errorHandler = f }}
}

// ConfigureServer lets f adjust the http.Server that Serve and Run create,
// after the defaults are set and before it starts. It applies to New.
func ConfigureServer(f func(*http.Server)) Option {
	return Option{name: "ConfigureServer", where: scopeApp, apply: func(c *config) { c.app.server = f }}
}
