package web

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// StatusClientClosed is the status observed (never sent) for a request
// whose client went away before its response was sent: before its handler
// started, or while the handler worked and then failed with the request's
// context error. nginx uses the same number.
const StatusClientClosed = 499

// An Observer is told about every request an App serves, once its handler
// has returned, on the connection's goroutine: the access log is one, the
// Prometheus collector of package web/metrics another. Observe must be safe
// for concurrent use and quick; it must not keep r.
//
// It is how web reports without linking a metrics library: a package that
// exports metrics implements Observer (and reads App.Executors at scrape
// time), and only programs that import it link it.
type Observer interface {
	Observe(r *http.Request, resp Response)
}

// Response is what an Observer learns about a served request.
type Response struct {
	Status   int           // the status sent; StatusClientClosed when the client left first
	Bytes    int64         // body bytes written
	Duration time.Duration // from the request reaching the App to its handler's return
	Panicked bool          // a handler or decorator panicked (the client got a 500 if nothing was sent)
}

// A Starter is an Observer that is also told as each request begins: a
// tracing package (web/otelweb) starts the request's span there and ends it
// in Observe. Start is called on the connection's goroutine as the request
// reaches the App, before the body limit, decorators and routing; the
// request goes on with the context Start returns (copied only if the
// context is another), and Observe gets that request, routed (r.Pattern
// set). Start reports whether it needs Observe for this request: when no
// observer does, the App records nothing about the response, so a request
// a tracer leaves out costs only Start. Start must be safe for concurrent
// use and must not keep r.
type Starter interface {
	Observer
	Start(r *http.Request) (ctx context.Context, observe bool)
}

// Observe adds o to the observers of the App, and to its starters if it is
// a Starter. Call it before serving.
func (a *App) Observe(o Observer) {
	a.observers = append(a.observers, o)
	if s, ok := o.(Starter); ok {
		a.starters = append(a.starters, s)
	} else {
		a.plainObservers = true
	}
}

// start calls the starters and returns r with the context they made, and
// whether the observers must hear about it: every request when one of them
// is no Starter.
func (a *App) start(r *http.Request) (*http.Request, bool) {
	observe := a.plainObservers
	for _, s := range a.starters {
		ctx, wants := s.Start(r)
		if ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		observe = observe || wants
	}
	return r, observe
}

// accessLog is the Observer behind WithAccessLog.
type accessLog struct{ logger *slog.Logger }

func (l accessLog) Observe(r *http.Request, resp Response) {
	l.logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("route", r.Pattern),
		slog.Int("status", resp.Status),
		slog.Int64("bytes", resp.Bytes),
		slog.Duration("duration", resp.Duration),
		slog.String("remote", r.RemoteAddr),
	)
}
