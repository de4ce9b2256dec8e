// Package todoapp is the todo list of examples/todo: a store for todos in
// SQLite or PostgreSQL, the JSON API over it and a TodoMVC-style page, all
// mounted on a web.App. Routes run on the App's executors, so LOOM_EXECUTOR
// chooses the execution model of the whole app.
//
// Open a store, build the App and serve it:
//
//	store, err := todoapp.OpenSQLite(ctx, "todo.db") // or OpenPostgres(ctx, url)
//	if err != nil {
//		return err
//	}
//	defer store.Close()
//	app, err := todoapp.NewApp(store)
//	if err != nil {
//		return err
//	}
//	return app.ListenAndServe(ctx, "127.0.0.1:8080")
//
// Register lists the routes. GET /api/todos sends the list a page at a
// time, as a JSON array in id order: ?limit= sets the page size (1 to
// MaxPageLimit, DefaultPageLimit when absent) and, while more todos follow,
// a Link header with rel="next" gives the URL of the next page, which
// starts after the last id sent (?after=):
//
//	GET /api/todos?limit=2         → [{"id":1,…},{"id":2,…}]
//	                                 Link: </api/todos?after=2&limit=2>; rel="next"
//	GET /api/todos?after=2&limit=2 → [{"id":3,…}]  (no Link: the list is complete)
//
// A client that sends no paging parameters gets the array it always got,
// but of at most DefaultPageLimit todos; it reads the rest by following the
// links, as the page's script does. Because a page is keyed by id, not
// counted by offset, a walk through the list lists each todo once even as
// todos are created and deleted meanwhile, missing only those deleted
// before their page is read (see Page). An empty, repeated, non-integer or
// out-of-range limit or after is a 400 that names the parameter and what
// was wrong.
//
// A Store is safe for concurrent use and runs every write in a transaction;
// with SQLite, writes queue for the single writer connection instead of
// failing with "database is locked".
package todoapp
