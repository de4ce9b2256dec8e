package web

import (
	"net/http"
	"net/http/pprof"
)

// registerPprof serves the runtime profiles under /debug/pprof/. The
// handlers run on the App's default executor like any route; a 30 s CPU
// profile holds one of its slots for that long.
func (a *App) registerPprof() {
	// The index also serves every named profile (heap, goroutine, allocs, …)
	// below it, so it takes the rest of the path; a route ending in "/"
	// would match the index page alone.
	a.Handle(http.MethodGet, "/debug/pprof/{profile...}", http.HandlerFunc(pprof.Index))
	a.Handle(http.MethodGet, "/debug/pprof/cmdline", http.HandlerFunc(pprof.Cmdline))
	a.Handle(http.MethodGet, "/debug/pprof/profile", http.HandlerFunc(pprof.Profile))
	a.Handle(http.MethodGet, "/debug/pprof/symbol", http.HandlerFunc(pprof.Symbol))
	a.Handle(http.MethodPost, "/debug/pprof/symbol", http.HandlerFunc(pprof.Symbol))
	a.Handle(http.MethodGet, "/debug/pprof/trace", http.HandlerFunc(pprof.Trace))
}
