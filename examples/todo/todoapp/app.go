package todoapp

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/loomrt/loom/web"
)

//go:embed static
var static embed.FS

// NewApp returns a web.App, configured by opts, serving the todo API and
// page of Register from store. The App's default executor comes from
// LOOM_EXECUTOR unless opts say otherwise. The caller keeps store and
// closes it after the App has shut down.
func NewApp(store *Store, opts ...web.Option) (*web.App, error) {
	app, err := web.New(opts...)
	if err != nil {
		return nil, err
	}
	Register(app, store)
	return app, nil
}

// Register mounts on app:
//
//	GET    /api/todos[?state=all|active|completed]   list, oldest first
//	POST   /api/todos {"text": "…"}                  create: 201 and the todo
//	GET    /api/todos/{id}                           one todo
//	PUT    /api/todos/{id} {"text": "…"}             change its text
//	POST   /api/todos/{id}/toggle                    flip completed
//	DELETE /api/todos/{id}                           remove: 204
//	POST   /api/todos/clear-completed                remove completed: {"removed": n}
//	GET    /                                         the page that uses them
//	GET    /static/…                                 its script and style
//
// Errors are JSON {"error": "…"} for clients that send or accept JSON: 400
// for bad JSON, a missing, empty, over-long or non-string text, an unknown
// field, a non-integer id or a bad state; 404 for an unknown id; 413 for a
// body over app's body limit; 415 for a non-JSON content type.
//
// The handlers share store and are safe for concurrent use; each runs on
// the App's executor. Register panics, as web does, if app already has one
// of these routes.
func Register(app *web.App, store *Store) {
	a := &handlers{store: store}
	api := app.Group("/api")
	api.Get("/todos", web.JSON(a.list))
	api.Post("/todos", web.JSON(a.create))
	api.Post("/todos/clear-completed", web.JSON(a.clearCompleted))
	api.Get("/todos/{id}", web.JSON(a.get))
	api.Put("/todos/{id}", web.JSON(a.update))
	api.Delete("/todos/{id}", a.delete)
	api.Post("/todos/{id}/toggle", web.JSON(a.toggle))

	assets, err := fs.Sub(static, "static")
	if err != nil {
		panic("todoapp: embedded assets: " + err.Error()) // the embed directive guarantees it exists
	}
	app.Get("/{$}", page(assets))
	app.Static("/static/", assets)
}

// page serves index.html, which loads /static/app.js and /static/style.css.
func page(assets fs.FS) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		http.ServeFileFS(w, r, assets, "index.html")
		return nil
	}
}
