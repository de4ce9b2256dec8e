package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/loomrt/loom"
)

// A Group registers routes under a common path prefix with common
// decorators, executor and body timeout. The App is itself the root group.
// Groups are for setting up an App and are not safe for concurrent use.
type Group struct {
	app         *App
	prefix      string
	decorators  []func(http.Handler) http.Handler
	executor    loom.Executor  // nil: the parent's
	bodyTimeout *time.Duration // nil: the parent's
}

// A RouteOption adjusts one route, or every route of a group.
type RouteOption func(*route)

// Use adds decorators to a route or group; the first one given is the
// outermost. Route decorators run inside the group's, which run inside the
// App's. All of them run on the connection's goroutine, before the executor
// admits the handler, so a decorator can refuse a request cheaply.
func Use(decorators ...func(http.Handler) http.Handler) RouteOption {
	return func(rt *route) { rt.decorators = append(rt.decorators, decorators...) }
}

// Executor runs the route's (or group's) handlers on e instead of the App's
// default executor. The caller owns e, unless it came from App.NewExecutor.
func Executor(e loom.Executor) RouteOption {
	return func(rt *route) { rt.executor = e }
}

// RouteBodyTimeout gives the route's (or group's) requests d to deliver
// their body instead of the App's BodyTimeout, counted from when the request
// reaches the route; d == 0 removes the deadline. It does not apply to a
// body that a decorator of the App (App.Use) has already read to its end or
// replaced: the App's timeout has governed that one. Use it for a route that
// takes large uploads from slow clients:
//
//	app.Post("/upload", upload, web.RouteBodyTimeout(10*time.Minute))
//
// A negative d panics: it is a setup mistake.
func RouteBodyTimeout(d time.Duration) RouteOption {
	if d < 0 {
		panic(fmt.Sprintf("web: RouteBodyTimeout(%v): negative duration (0 removes the timeout)", d))
	}
	return func(rt *route) { rt.bodyTimeout = &d }
}

// Group returns a group for routes under prefix (e.g. "/api"), inheriting
// this group's decorators, executor and body timeout; opts add to them.
func (g *Group) Group(prefix string, opts ...RouteOption) *Group {
	if prefix != "" && (!strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/")) {
		panic(fmt.Sprintf("web: group prefix %q must start with / and not end with /", prefix))
	}
	var rt route
	for _, opt := range opts {
		opt(&rt)
	}
	child := &Group{
		app:         g.app,
		prefix:      g.prefix + prefix,
		decorators:  append(append([]func(http.Handler) http.Handler(nil), g.decorators...), rt.decorators...),
		executor:    g.executor,
		bodyTimeout: g.bodyTimeout,
	}
	if rt.executor != nil {
		child.executor = rt.executor
	}
	if rt.bodyTimeout != nil {
		child.bodyTimeout = rt.bodyTimeout
	}
	return child
}

// Use adds decorators to the routes registered on g from now on.
func (g *Group) Use(decorators ...func(http.Handler) http.Handler) {
	g.decorators = append(g.decorators, decorators...)
}

// Get registers h for GET (and HEAD) requests to path.
func (g *Group) Get(path string, h HandlerFunc, opts ...RouteOption) {
	g.Handle(http.MethodGet, path, h, opts...)
}

// Post registers h for POST requests to path.
func (g *Group) Post(path string, h HandlerFunc, opts ...RouteOption) {
	g.Handle(http.MethodPost, path, h, opts...)
}

// Put registers h for PUT requests to path.
func (g *Group) Put(path string, h HandlerFunc, opts ...RouteOption) {
	g.Handle(http.MethodPut, path, h, opts...)
}

// Patch registers h for PATCH requests to path.
func (g *Group) Patch(path string, h HandlerFunc, opts ...RouteOption) {
	g.Handle(http.MethodPatch, path, h, opts...)
}

// Delete registers h for DELETE requests to path.
func (g *Group) Delete(path string, h HandlerFunc, opts ...RouteOption) {
	g.Handle(http.MethodDelete, path, h, opts...)
}

// Options registers h for OPTIONS requests to path.
func (g *Group) Options(path string, h HandlerFunc, opts ...RouteOption) {
	g.Handle(http.MethodOptions, path, h, opts...)
}

// Handle registers any http.Handler — a HandlerFunc, an http.HandlerFunc, a
// file server — for method (any method if "") at path, below the group's
// prefix.
//
// Paths use net/http's patterns: "/users/{id}" binds a segment and
// "/files/{path...}" binds the remaining path. Unlike http.ServeMux, a path
// ending in "/" matches only itself ("/" is the root page, not every page):
// name a "{path...}" wildcard to serve a subtree. The most specific pattern
// wins, so static segments beat parameters. A request for a known path with
// another method gets 405 with an Allow header; an unknown path gets 404.
//
// Handle panics with a "web:" message when the pattern is malformed or
// conflicts with one already registered: that is a setup mistake.
func (g *Group) Handle(method, path string, h http.Handler, opts ...RouteOption) {
	if h == nil {
		panic(fmt.Sprintf("web: nil handler for %s %s", method, path))
	}
	if !strings.HasPrefix(path, "/") {
		panic(fmt.Sprintf("web: path %q must start with /", path))
	}
	if strings.ContainsAny(method, " \t/{}") {
		panic(fmt.Sprintf("web: bad method %q", method))
	}
	rt := &route{app: g.app, executor: g.executor, bodyTimeout: g.bodyTimeout}
	rt.decorators = append(rt.decorators, g.decorators...)
	for _, opt := range opts {
		opt(rt)
	}
	if rt.executor == nil {
		rt.executor = g.app.executor
	}
	g.app.track(rt.executor)
	rt.neverWaits = rt.executor.Stats().Kind == loom.KindVirtual
	if hf, ok := h.(HandlerFunc); ok {
		rt.handlerFunc = hf
	} else {
		rt.handler = h
	}
	pattern := g.prefix + path
	if strings.HasSuffix(pattern, "/") {
		pattern += "{$}"
	}
	if method != "" {
		pattern = method + " " + pattern
	}
	var routed http.Handler = decorate(rt, rt.decorators)
	if rt.bodyTimeout != nil {
		routed = &bodyTimeoutRoute{timeout: *rt.bodyTimeout, next: routed}
		g.app.routeBodyTimeouts = true
	}
	g.app.register(pattern, routed)
}

// register adds a pattern to the mux, turning net/http's panics on bad or
// conflicting patterns into "web:" panics.
func (a *App) register(pattern string, h http.Handler) {
	defer func() {
		if v := recover(); v != nil {
			panic(fmt.Sprintf("web: route %q: %v", pattern, v))
		}
	}()
	a.mux.Handle(pattern, h)
}

// decorate wraps h so that decorators[0] is the outermost.
func decorate(h http.Handler, decorators []func(http.Handler) http.Handler) http.Handler {
	for i := len(decorators) - 1; i >= 0; i-- {
		h = decorators[i](h)
	}
	return h
}
