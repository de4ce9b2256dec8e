package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/loomrt/loom"
)

// A Group registers routes under a common path prefix with common
// settings: decorators, executor, body limit and timeout (see Option). The
// App is itself the root group. Groups are for setting up an App and are not
// safe for concurrent use.
type Group struct {
	app      *App
	prefix   string
	settings routeSettings // executor resolved
}

// Group returns a group for routes under prefix (e.g. "/api"), inheriting
// this group's settings; opts add decorators and override the rest. It
// panics when prefix does not start with "/" or ends with "/".
func (g *Group) Group(prefix string, opts ...RouteOption) *Group {
	if prefix != "" && (!strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/")) {
		panic(fmt.Sprintf("web: group prefix %q must start with / and not end with /", prefix))
	}
	return &Group{app: g.app, prefix: g.prefix + prefix, settings: g.derive(opts)}
}

// derive returns g's settings with opts applied and the executor resolved.
func (g *Group) derive(opts []RouteOption) routeSettings {
	s := g.settings
	s.decorators = append([]func(http.Handler) http.Handler(nil), g.settings.decorators...)
	applyRoute(&s, opts)
	g.app.resolveExecutor(&s)
	g.app.noteBody(s)
	return s
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
	s := g.derive(opts)
	g.handle(method, path, h, s)
}

// handle registers h with settings s.
func (g *Group) handle(method, path string, h http.Handler, s routeSettings) {
	rt := &route{app: g.app, executor: s.executor, bodyLimit: s.bodyLimit, blocking: s.blocking}
	g.app.track(rt.executor)
	if s.critical {
		g.app.markCritical(rt.executor)
	}
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
	routed := decorate(rt, s.decorators)
	if len(s.decorators) > 0 {
		g.app.decorated = true
	}
	if d := g.app.defaults; s.bodyLimit != d.bodyLimit || s.bodyTimeout != d.bodyTimeout {
		routed = &bodyRoute{app: g.app, limit: s.bodyLimit, timeout: s.bodyTimeout, next: routed}
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
