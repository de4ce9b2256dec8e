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
// Register lists the routes. A Store is safe for concurrent use and runs
// every write in a transaction; with SQLite, writes queue for the single
// writer connection instead of failing with "database is locked".
package todoapp
