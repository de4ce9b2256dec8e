package web

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/loomrt/loom"
)

// An Option configures an App; pass options to New.
type Option func(*settings)

type settings struct {
	executor     loom.Executor
	executorSpec string
	logger       *slog.Logger
	debug        bool
	accessLog    bool
	bodyLimit    int64
	bodyTimeout  time.Duration
	metricsPath  string
	pprof        bool
	grace        time.Duration
	errorHandler func(http.ResponseWriter, *http.Request, error)
	server       func(*http.Server)
}

// WithExecutor sets the App's default executor instead of taking it from
// the environment. The executor stays the caller's: App.Shutdown leaves it
// running.
func WithExecutor(e loom.Executor) Option {
	return func(s *settings) { s.executor = e }
}

// ExecutorSpec sets the App's default executor from a spec as loom.Parse
// reads it ("virtual", "pool:64,queue=1000", "limit:500"), ignoring the
// environment. The App owns the executor and shuts it down. A bad spec makes
// New return an error. It is how a program that picks the model itself (a
// benchmark, a test) builds an App.
func ExecutorSpec(spec string) Option {
	return func(s *settings) { s.executorSpec = spec }
}

// Logger sets the logger for errors, panics and the access log.
// Without it the App uses slog.Default().
func Logger(l *slog.Logger) Option {
	return func(s *settings) { s.logger = l }
}

// Debug makes error responses show the error's text, internals included.
// Never turn it on where clients are not trusted.
func Debug() Option {
	return func(s *settings) { s.debug = true }
}

// AccessLog logs one line per request at Info level: method, path, route,
// status, bytes, duration and remote address. A request whose client left
// before its handler started is logged with status 499.
func AccessLog() Option {
	return func(s *settings) { s.accessLog = true }
}

// BodyLimit caps request bodies at n bytes; a larger body is refused with
// 413. Without it the limit is DefaultBodyLimit; n <= 0 removes the limit.
func BodyLimit(n int64) Option {
	return func(s *settings) { s.bodyLimit = n }
}

// BodyTimeout gives each request d to deliver its body, counted from when
// its headers have been read. A read of the body after that fails with an
// error matching ErrBodyTimeout, which JSON, ReadJSON, the form helpers and
// the App's error rendering turn into 408 Request Timeout; the connection is
// then closed. Without it the timeout is DefaultBodyTimeout; d == 0 removes
// it; a negative d makes New return an error. RouteBodyTimeout sets it for a
// route or group (a large upload).
//
// It bounds how long a client that sends its headers and then trickles or
// withholds the body can hold a handler and its executor slot, which
// ReadHeaderTimeout does not. Unlike http.Server.ReadTimeout it covers only
// the body and can differ by route: once the body has been read to its end,
// net/http clears the deadline, so the handler may then take as long as it
// needs. WebSockets are not affected: an upgrade has no body, and net/http
// clears deadlines when the connection is taken over.
//
// It needs a writer that can set read deadlines (http.ResponseController),
// as any net/http server's can. Under a server that has a ReadTimeout of its
// own, and with a writer that cannot, requests are served without it.
func BodyTimeout(d time.Duration) Option {
	return func(s *settings) { s.bodyTimeout = d }
}

// Metrics serves Prometheus metrics at path (e.g. "/metrics"): requests by
// route, method and status, a latency histogram by route, and the counters
// of every executor the routes run on. A path that does not start with "/"
// makes New return an error.
func Metrics(path string) Option {
	return func(s *settings) { s.metricsPath = path }
}

// Pprof serves net/http/pprof at /debug/pprof/. Profiles reveal internals:
// keep it off, or behind a decorator that checks who is asking, in production.
func Pprof() Option {
	return func(s *settings) { s.pprof = true }
}

// ShutdownGrace sets how long Serve and Run wait for in-flight requests
// after the stop signal before closing connections. Zero means the default,
// 10 seconds; a negative d makes New return an error.
func ShutdownGrace(d time.Duration) Option {
	return func(s *settings) {
		if d != 0 {
			s.grace = d
		}
	}
}

// ErrorHandler replaces the rendering of errors returned by handlers. f is
// called only while no response has been sent; it must write one.
func ErrorHandler(f func(w http.ResponseWriter, r *http.Request, err error)) Option {
	return func(s *settings) { s.errorHandler = f }
}

// ConfigureServer lets f adjust the http.Server that Serve and Run create,
// after the defaults are set and before it starts.
func ConfigureServer(f func(*http.Server)) Option {
	return func(s *settings) { s.server = f }
}
