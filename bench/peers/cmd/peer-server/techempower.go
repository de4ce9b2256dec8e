package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomrt/loom/internal/harness/techempower"
)

// TechEmpower Framework Benchmarks' test types, served as loom bench's own
// servers serve them: the queries and bodies of package techempower, which
// both use, and a pgxpool of the same size, opened before the first
// request. Each framework only routes, reads the queries parameter and
// writes the bytes built here with its own API.

// databaseEnv is the variable loom bench sets to the run's database: a
// PostgreSQL URL whose search_path is the run's schema.
const databaseEnv = "LOOM_BENCH_DATABASE_URL"

const (
	jsonType = "application/json"
	textType = "text/plain"
	htmlType = "text/html; charset=utf-8"
)

// teApp does the work of the TechEmpower tests; pool is nil for json and
// plaintext.
type teApp struct {
	pool *pgxpool.Pool
}

// newTEApp opens a pool of size connections to the database databaseEnv
// names when the workload queries.
func newTEApp(ctx context.Context, wl workload, size int) (*teApp, error) {
	if wl == teJSON || wl == tePlaintext {
		return &teApp{}, nil
	}
	u := os.Getenv(databaseEnv)
	if u == "" {
		return nil, fmt.Errorf("-workload %s: %s is not set (loom bench sets it for each run)", wl, databaseEnv)
	}
	pool, err := techempower.OpenPool(ctx, u, size)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return &teApp{pool: pool}, nil
}

func (a *teApp) close() error {
	if a.pool != nil {
		a.pool.Close()
	}
	return nil
}

// serve answers one request of the workload: its body and content type.
// query is the raw queries parameter of queries and updates.
func (a *teApp) serve(ctx context.Context, wl workload, query string) ([]byte, string, error) {
	switch wl {
	case teJSON:
		b, err := techempower.JSONBody()
		return b, jsonType, err
	case tePlaintext:
		return []byte(techempower.HelloWorld), textType, nil
	case teDB:
		w, err := techempower.ReadWorld(ctx, a.pool)
		return techempower.AppendWorld(nil, w), jsonType, err
	case teQueries, teUpdates:
		worlds, err := a.worlds(ctx, techempower.Queries(query), wl == teUpdates)
		return techempower.AppendWorlds(worlds), jsonType, err
	case teFortunes:
		page, err := techempower.FortunesPage(ctx, a.pool)
		return page, htmlType, err
	}
	return nil, "", errors.New("not a TechEmpower workload")
}

// worlds reads n random rows on one connection, updating them with update.
func (a *teApp) worlds(ctx context.Context, n int, update bool) ([]techempower.World, error) {
	c, err := a.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	if update {
		return techempower.UpdateWorlds(ctx, c, n)
	}
	return techempower.ReadWorlds(ctx, c, n)
}
