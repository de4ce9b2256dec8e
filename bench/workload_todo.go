package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/loomrt/loom/examples/todo/todoapp"
	"github.com/loomrt/loom/web"
)

// todoSeed is how many todos the database starts with; the second half
// starts completed (see todoTargets).
const todoSeed = 20

// serveTodo opens a fresh SQLite database in dir, seeds it and mounts the
// todo app's routes.
func serveTodo(ctx context.Context, app *web.App, _ Plan, dir string) (func() error, error) {
	store, err := todoapp.OpenSQLite(ctx, filepath.Join(dir, "todo.db"))
	if err != nil {
		return nil, fmt.Errorf("open todo database: %w", err)
	}
	fail := func(err error) (func() error, error) {
		return nil, errors.Join(fmt.Errorf("seed todo database: %w", err), store.Close())
	}
	for i := 1; i <= todoSeed; i++ {
		t, err := store.Create(ctx, fmt.Sprintf("seeded todo %d", i))
		if err != nil {
			return fail(err)
		}
		if i > todoSeed/2 {
			if _, err := store.Toggle(ctx, t.ID); err != nil {
				return fail(err)
			}
		}
	}
	todoapp.Register(app, store)
	return store.Close, nil
}
