// Package web is a small web framework in the spirit of Cask whose routes
// run on executors from package loom.
//
// It is net/http both ways: an *App is an http.Handler, any http.Handler is
// a route, decorators have the standard shape func(http.Handler)
// http.Handler, and routes use net/http's patterns ("/users/{id}",
// "/files/{path...}"). The package's own handler form returns an error, which
// becomes the response:
//
//	app, err := web.New() // executor from LOOM_EXECUTOR_HTTP, LOOM_EXECUTOR, else virtual
//	if err != nil {
//		return err
//	}
//	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
//		_, err := io.WriteString(w, "Hello World!")
//		return err
//	})
//	app.Get("/users/{id}", func(w http.ResponseWriter, r *http.Request) error {
//		id, err := web.Param(r, "id").Int() // a 400 naming "id" when it is not a number
//		if err != nil {
//			return err
//		}
//		return web.WriteJSON(w, http.StatusOK, lookup(id))
//	})
//	return app.Run("127.0.0.1:8080") // until SIGINT/SIGTERM, then a graceful shutdown
//
// Every route runs on an executor: the App's default, chosen by one
// environment variable (LOOM_EXECUTOR=pool:64 moves every route onto a
// pool of 64 workers), or its own (web.WithExecutorFromEnv("reports", "limit:8"),
// web.WithExecutor(e)), so that a slow route cannot starve the rest. With the
// default, virtual, a handler runs on its connection's goroutine, exactly as
// under plain net/http. When an executor is full and rejects, the client gets
// 503 with Retry-After at once; when the client has gone before its handler
// starts, the handler does not run.
//
// Options are typed by where they fit: an AppOption (WithLogger,
// WithAccessLog, …) configures the App, a RouteOption a group or a route,
// and an Option — a route setting (executor, body limit and timeout,
// decorators) — fits all three: given at a wider level it is the default of
// the narrower ones. An option given where it does not fit fails to
// compile. JSON and ReadJSON take JSONOptions, Files FilesOptions. WithTLS
// serves HTTPS, with HTTP/2 by ALPN; WithH2C adds cleartext HTTP/2;
// WithProbes serves /livez and /readyz. Prometheus metrics
// (web/metrics), WebSockets (web/websocket) and the event-loop connection
// engine (web/nbio, chosen by LOOM_ENGINE=nbio or WithEngine) are
// sub-packages, linked only by programs that import them. The guide is docs/web.md.
package web
