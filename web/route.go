package web

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/loomrt/loom"
)

// route runs one registered handler on its executor.
type route struct {
	app         *App
	executor    loom.Executor
	handlerFunc HandlerFunc  // set for the package's own handler form
	handler     http.Handler // set for any other http.Handler
	bodyLimit   int64        // the route's body limit; 0: none

	// neverWaits is set for executors that run at once or refuse (virtual):
	// they get context.Background(), since the request's context would only
	// make them derive a cancellable one per request; the handler reads
	// r.Context() either way.
	neverWaits bool
	blocking   bool // Blocking: the handler runs inside loom.Blocking
}

// call carries one request into an executor. Calls are pooled and their
// task func is bound once, so that handing a request to an executor
// allocates nothing.
type call struct {
	rt       *route
	rw       responseWriter // records what the handler sent, for errors and panics
	w        http.ResponseWriter
	r        *http.Request
	ran      bool
	panicked any
	task     loom.Task
	serveFn  func() // c.serve, for loom.Blocking
}

var callPool = sync.Pool{New: func() any {
	c := new(call)
	c.task = c.run
	c.serveFn = c.serve
	return c
}}

// ServeHTTP hands the request to the route's executor and waits for the
// handler. A rejection is answered at once with 503 and Retry-After; a
// client that has gone before the handler starts is not served, and a
// request whose deadline passes before it starts is answered 503.
func (rt *route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := ctx.Err(); err != nil {
		unserved(w, err)
		return
	}
	if r.ContentLength > rt.bodyLimit && rt.bodyLimit > 0 {
		// Checked here too, not only before routing: there the App can
		// only hold a body to the largest limit of any route.
		rt.app.renderError(w, r, tooLarge(rt.bodyLimit))
		return
	}
	c := callPool.Get().(*call)
	c.rt, c.r = rt, r
	c.rw.ResponseWriter, c.rw.app = w, rt.app
	c.w = &c.rw
	runCtx := ctx
	if rt.neverWaits {
		runCtx = context.Background()
	}
	err := rt.executor.Run(runCtx, c.task)
	ran, panicked := c.ran, c.panicked
	c.rt, c.w, c.r, c.ran, c.panicked = nil, nil, nil, false, nil
	c.rw = responseWriter{}
	callPool.Put(c)

	if panicked == http.ErrAbortHandler {
		panic(http.ErrAbortHandler) // on the connection's goroutine, where net/http expects it
	}
	if err == nil || ran {
		return
	}
	switch {
	case errors.Is(err, loom.ErrRejected), errors.Is(err, loom.ErrClosed), errors.Is(err, loom.ErrAbandoned):
		serviceUnavailable(w)
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		// Its context ended while it waited its turn, or its deadline
		// passed, which an executor may tell before the context's timer
		// fires: the executor dropped it unrun (loom's Stats.Expired).
		unserved(w, cmp.Or(ctx.Err(), err))
	default:
		rt.app.renderError(w, r, err)
	}
}

// serviceUnavailable answers a request refused for want of room: 503, and
// Retry-After so that well-behaved clients back off.
func serviceUnavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte("server busy, retry later\n"))
}

// unserved answers a request whose context ended before its handler ran:
// nothing if the client has gone (recorded as 499), 503 if its deadline
// passed while it waited (a decorator's timeout): the client is still there
// and may retry.
func unserved(w http.ResponseWriter, err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		serviceUnavailable(w)
		return
	}
	markClientClosed(w)
}

// run is the task: it runs on whatever goroutine the executor chose. The
// handler sees the request's context, not the executor's: rewrapping the
// request would cost an allocation per request, and the request's context
// already ends when the client goes or the server closes the connection.
func (c *call) run(context.Context) {
	r := c.r
	if err := r.Context().Err(); err != nil {
		unserved(c.w, err)
		return
	}
	if c.rt.blocking {
		if err := loom.Blocking(r.Context(), c.serveFn); err != nil {
			if errors.Is(err, loom.ErrRejected) {
				serviceUnavailable(c.w)
			} else {
				unserved(c.w, err)
			}
		}
		return
	}
	c.serve()
}

// serve runs the handler.
func (c *call) serve() {
	r := c.r
	c.ran = true
	defer c.finish(r)
	if c.rt.handlerFunc != nil {
		if err := c.rt.handlerFunc(c.w, r); err != nil {
			c.rt.app.renderError(c.w, r, err)
		}
		return
	}
	c.rt.handler.ServeHTTP(c.w, r)
}

// finish runs after the handler, however it ended: one deferred call, as a
// second one costs a measurable share of a hello request. It removes the
// temporary files of a multipart form parsed on r (net/http does it only for
// the request it made, and a decorator that called r.WithContext handed the
// handler a copy whose form it never sees), and turns a handler's panic into
// a 500 and a log line with the stack, so that neither the executor nor the
// server goes down with it.
func (c *call) finish(r *http.Request) {
	v := recover()
	if r.MultipartForm != nil {
		_ = r.MultipartForm.RemoveAll() // net/http ignores this error too
	}
	if v == nil {
		return
	}
	c.panicked = v
	if v == http.ErrAbortHandler {
		return
	}
	c.rt.app.logPanic(c.w, r, "handler panic", v)
}

// markClientClosed records 499 on every recording writer in w's chain, so
// that the access log and metrics see it.
func markClientClosed(w http.ResponseWriter) {
	for w != nil {
		rw := recorded(w)
		if rw == nil {
			return
		}
		if !rw.wrote {
			rw.status = StatusClientClosed
		}
		w = rw.ResponseWriter
	}
}
