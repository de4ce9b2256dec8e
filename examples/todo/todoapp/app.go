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
func NewApp(store *Store, opts ...web.AppOption) (*web.App, error) {
	app, err := web.New(opts...)
	if err != nil {
		return nil, err
	}
	Register(app, store)
	return app, nil
}

// Register mounts on app:
//
//	GET    /api/todos[?state=…&limit=…&after=…]      list a page, oldest first
//	POST   /api/todos {"text": "…"}                  create: 201 and the todo
//	GET    /api/todos/{id}                           one todo
//	PUT    /api/todos/{id} {"text": "…"}             change its text
//	POST   /api/todos/{id}/toggle                    flip completed
//	DELETE /api/todos/{id}                           remove: 204
//	POST   /api/todos/clear-completed                remove completed: {"removed": n}
//	GET    /                                         the page that uses them
//	GET    /static/…                                 its script, style and icon
//
// The list is a JSON array of todos in id order: state is all (the
// default), active or completed; limit is the most todos to send, 1 to
// MaxPageLimit, DefaultPageLimit by default; after is an id, and only todos
// with greater ids are sent. When more todos follow, the response has a
// Link header with rel="next" whose URL fetches the next page (the same
// query with after set to the last id sent); its absence means the list is
// complete. Paging this way neither repeats nor skips todos while others
// are created and deleted: see Page.
//
// Errors are JSON {"error": "…"} for clients that send or accept JSON: 400
// for bad JSON, a missing, empty, over-long or non-string text, an unknown
// field, a non-integer id, a bad state, or a limit or after that is empty,
// repeated, not an integer or out of range; 404 for an unknown id; 413 for a
// body over app's body limit; 415 for a non-JSON content type.
//
// The handlers share store and are safe for concurrent use; each runs on
// the App's executor. Register panics, as web does, if app already has one
// of these routes.
func Register(app *web.App, store *Store) {
	a := &handlers{store: store}
	api := app.Group("/api")
	api.Get("/todos", a.list)
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

// page serves index.html, which loads /static/app.js, /static/style.css
// and /static/favicon.svg.
func page(assets fs.FS) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		http.ServeFileFS(w, r, assets, "index.html")
		return nil
	}
}
