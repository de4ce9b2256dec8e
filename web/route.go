package web

import (
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
}

var callPool = sync.Pool{New: func() any {
	c := new(call)
	c.task = c.run
	return c
}}

// ServeHTTP hands the request to the route's executor and waits for the
// handler. A rejection is answered at once with 503 and Retry-After; a
// client that has gone before the handler starts is not served.
func (rt *route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if ctx.Err() != nil {
		markClientClosed(w)
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
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("server busy, retry later\n"))
	case ctx.Err() != nil:
		markClientClosed(w)
	default:
		rt.app.renderError(w, r, err)
	}
}

// run is the task: it runs on whatever goroutine the executor chose. The
// handler sees the request's context, not the executor's: rewrapping the
// request would cost an allocation per request, and the request's context
// already ends when the client goes or the server closes the connection.
func (c *call) run(context.Context) {
	r := c.r
	if r.Context().Err() != nil {
		markClientClosed(c.w)
		return
	}
	c.ran = true
	defer c.recover(r)
	defer removeMultipart(r)
	if c.rt.handlerFunc != nil {
		if err := c.rt.handlerFunc(c.w, r); err != nil {
			c.rt.app.renderError(c.w, r, err)
		}
		return
	}
	c.rt.handler.ServeHTTP(c.w, r)
}

// removeMultipart removes the temporary files of a multipart form parsed on
// r. net/http does it only for the request it made, and a decorator that
// called r.WithContext handed the handler a copy whose form it never sees.
func removeMultipart(r *http.Request) {
	if r.MultipartForm != nil {
		_ = r.MultipartForm.RemoveAll() // net/http ignores this error too
	}
}

// recover turns a handler's panic into a 500 and a log line with the stack,
// so that neither the executor nor the server goes down with it.
func (c *call) recover(r *http.Request) {
	v := recover()
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
