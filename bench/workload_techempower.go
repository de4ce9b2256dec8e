package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomrt/loom/internal/harness/techempower"
	"github.com/loomrt/loom/web"
)

// TechEmpower Framework Benchmarks' test types, as their rules define
// them: the same paths, bodies, headers and database work, so that loom's
// figures and its peers' can be set beside the suite's.

// serverName is the Server header every TechEmpower response carries.
const serverName = "loom"

// fortunes are TechEmpower's standard Fortune rows.
var fortunes = []techempower.Fortune{
	{ID: 1, Message: "fortune: No such file or directory"},
	{ID: 2, Message: "A computer scientist is someone who fixes things that aren't broken."},
	{ID: 3, Message: "After enough decimal places, nobody gives a damn."},
	{ID: 4, Message: "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"},
	{ID: 5, Message: "A computer program does what you tell it to do, not what you want it to do."},
	{ID: 6, Message: "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen"},
	{ID: 7, Message: "Any program that runs right is obsolete."},
	{ID: 8, Message: "A list is only as strong as its weakest link. — Donald Knuth"},
	{ID: 9, Message: "Feature: A bug with seniority."},
	{ID: 10, Message: "Computers make very fast, very accurate mistakes."},
	{ID: 11, Message: `<script>alert("This should not be displayed in a browser alert box.");</script>`},
	{ID: 12, Message: "フレームワークのベンチマーク"},
}

// queriesParam is r's queries parameter, parsed as the rules say.
func queriesParam(r *http.Request) int {
	return techempower.Queries(r.URL.Query().Get("queries"))
}

// respond writes body with the headers every test requires: Server and
// Content-Type here, Date and Content-Length by the engine.
func respond(w http.ResponseWriter, contentType string, body []byte) error {
	h := w.Header()
	h["Server"] = []string{serverName}
	h["Content-Type"] = []string{contentType}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	_, err := w.Write(body)
	return err
}

// dbPool is a server's connection pool, counting the handlers waiting for a
// connection and the most that ever waited at once.
type dbPool struct {
	*pgxpool.Pool
	waiting, peak atomic.Int64
}

// openPool connects to the database DatabaseEnv names with size
// connections, all opened before the first request.
func openPool(ctx context.Context, size int) (*dbPool, error) {
	u := os.Getenv(DatabaseEnv)
	if u == "" {
		return nil, fmt.Errorf("%w: %s is not set: the runner sets it for each run", ErrDatabase, DatabaseEnv)
	}
	pool, err := techempower.OpenPool(ctx, u, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDatabase, err)
	}
	return &dbPool{Pool: pool}, nil
}

// acquire takes a connection, counting the wait.
func (p *dbPool) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	n := p.waiting.Add(1)
	for {
		peak := p.peak.Load()
		if n <= peak || p.peak.CompareAndSwap(peak, n) {
			break
		}
	}
	c, err := p.Acquire(ctx)
	p.waiting.Add(-1)
	return c, err
}

// close closes the pool and writes its report into dir for the runner.
func (p *dbPool) close(dir string) error {
	p.Close()
	b, err := json.Marshal(poolReport{PeakWaiting: int(p.peak.Load())})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, poolReportFile), b, 0o644)
}

// serveTechEmpower mounts the routes of one test type ("json", "db", ...),
// with a pool of poolSize connections for those that query.
func serveTechEmpower(test string, poolSize int) ServeFunc {
	return func(ctx context.Context, app *web.App, _ Plan, dir string) (func() error, error) {
		switch test {
		case "json":
			app.Get("/json", func(w http.ResponseWriter, _ *http.Request) error {
				b, err := techempower.JSONBody()
				if err != nil {
					return err
				}
				return respond(w, "application/json", b)
			})
			return nil, nil
		case "plaintext":
			body := []byte(techempower.HelloWorld)
			app.Get("/plaintext", func(w http.ResponseWriter, _ *http.Request) error {
				return respond(w, "text/plain", body)
			})
			return nil, nil
		}
		pool, err := openPool(ctx, poolSize)
		if err != nil {
			return nil, err
		}
		cleanup := func() error { return pool.close(dir) }
		switch test {
		case "db":
			app.Get("/db", func(w http.ResponseWriter, r *http.Request) error {
				c, err := pool.acquire(r.Context())
				if err != nil {
					return err
				}
				defer c.Release()
				row, err := techempower.ReadWorld(r.Context(), c)
				if err != nil {
					return err
				}
				return respond(w, "application/json", techempower.AppendWorld(nil, row))
			})
		case "queries", "updates":
			update := test == "updates"
			app.Get("/"+test, func(w http.ResponseWriter, r *http.Request) error {
				worlds, err := readWorlds(r.Context(), pool, queriesParam(r), update)
				if err != nil {
					return err
				}
				return respond(w, "application/json", techempower.AppendWorlds(worlds))
			})
		case "fortunes":
			app.Get("/fortunes", func(w http.ResponseWriter, r *http.Request) error {
				page, err := fortunesPage(r.Context(), pool)
				if err != nil {
					return err
				}
				return respond(w, "text/html; charset=utf-8", page)
			})
		case "db-pool":
			app.Get("/db-pool", func(w http.ResponseWriter, r *http.Request) error {
				c, err := pool.acquire(r.Context())
				if err != nil {
					return err
				}
				defer c.Release()
				if _, err := c.Exec(r.Context(), "SELECT pg_sleep(0.005)"); err != nil {
					return err
				}
				return respond(w, "text/plain", []byte(dbPoolBody))
			})
		default:
			return nil, errors.Join(fmt.Errorf("no TechEmpower test %q", test), cleanup())
		}
		return cleanup, nil
	}
}

// readWorlds reads n random rows on one connection, updating them with update.
func readWorlds(ctx context.Context, pool *dbPool, n int, update bool) ([]techempower.World, error) {
	c, err := pool.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	if update {
		return techempower.UpdateWorlds(ctx, c, n)
	}
	return techempower.ReadWorlds(ctx, c, n)
}

// fortunesPage is the fortunes test's page, read on one connection.
func fortunesPage(ctx context.Context, pool *dbPool) ([]byte, error) {
	c, err := pool.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	return techempower.FortunesPage(ctx, c)
}

// dbPoolBody is db-pool's answer.
const dbPoolBody = "slept 5 ms on a pooled connection"
