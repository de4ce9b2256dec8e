package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomrt/loom/web"
)

// TechEmpower Framework Benchmarks' test types, as their rules define
// them: the same paths, bodies, headers and database work, so that loom's
// figures and its peers' can be set beside the suite's.

// serverName is the Server header every TechEmpower response carries.
const serverName = "loom"

// helloWorld is the json and plaintext tests' message.
const helloWorld = "Hello, World!"

// fortune is one row of the Fortune table.
type fortune struct {
	ID      int32
	Message string
}

// fortunes are TechEmpower's standard Fortune rows.
var fortunes = []fortune{
	{1, "fortune: No such file or directory"},
	{2, "A computer scientist is someone who fixes things that aren't broken."},
	{3, "After enough decimal places, nobody gives a damn."},
	{4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"},
	{5, "A computer program does what you tell it to do, not what you want it to do."},
	{6, "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen"},
	{7, "Any program that runs right is obsolete."},
	{8, "A list is only as strong as its weakest link. — Donald Knuth"},
	{9, "Feature: A bug with seniority."},
	{10, "Computers make very fast, very accurate mistakes."},
	{11, `<script>alert("This should not be displayed in a browser alert box.");</script>`},
	{12, "フレームワークのベンチマーク"},
}

// extraFortune is the row the fortunes test adds at request time.
const extraFortune = "Additional fortune added at request time."

// maxQueries is the most rows a queries or updates request reads.
const maxQueries = 500

// queriesParam reads the queries parameter as the rules say: missing, not
// an integer or below 1 means 1; above 500 means 500.
func queriesParam(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("queries"))
	if err != nil || n < 1 {
		return 1
	}
	return min(n, maxQueries)
}

// randomWorld is a random World id, 1 to 10,000.
func randomWorld() int32 { return int32(rand.IntN(worldRows)) + 1 }

// appendWorld appends a World row as the tests' JSON object.
func appendWorld(b []byte, id, randomNumber int32) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"randomNumber":`...)
	b = strconv.AppendInt(b, int64(randomNumber), 10)
	return append(b, '}')
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
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDatabase, DatabaseEnv, err)
	}
	cfg.MaxConns, cfg.MinConns = int32(size), int32(size)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDatabase, err)
	}
	// Open every connection now: connecting is not the work measured.
	conns := make([]*pgxpool.Conn, 0, size)
	for range size {
		c, err := pool.Acquire(ctx)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
	if len(conns) < size {
		pool.Close()
		return nil, fmt.Errorf("%w: opened %d of %d connections", ErrDatabase, len(conns), size)
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

const (
	selectWorld   = "SELECT id, randomnumber FROM world WHERE id = $1"
	updateWorld   = "UPDATE world SET randomnumber = $1 WHERE id = $2"
	selectFortune = "SELECT id, message FROM fortune"
)

// serveTechEmpower mounts the routes of one test type ("json", "db", ...),
// with a pool of poolSize connections for those that query.
func serveTechEmpower(test string, poolSize int) ServeFunc {
	return func(ctx context.Context, app *web.App, _ Plan, dir string) (func() error, error) {
		switch test {
		case "json":
			app.Get("/json", func(w http.ResponseWriter, _ *http.Request) error {
				b, err := json.Marshal(struct {
					Message string `json:"message"`
				}{helloWorld})
				if err != nil {
					return err
				}
				return respond(w, "application/json", b)
			})
			return nil, nil
		case "plaintext":
			body := []byte(helloWorld)
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
				var id, n int32
				if err := c.QueryRow(r.Context(), selectWorld, randomWorld()).Scan(&id, &n); err != nil {
					return err
				}
				return respond(w, "application/json", appendWorld(nil, id, n))
			})
		case "queries":
			app.Get("/queries", func(w http.ResponseWriter, r *http.Request) error {
				worlds, err := readWorlds(r.Context(), pool, queriesParam(r))
				if err != nil {
					return err
				}
				return respond(w, "application/json", appendWorlds(worlds))
			})
		case "updates":
			app.Get("/updates", func(w http.ResponseWriter, r *http.Request) error {
				worlds, err := updateWorlds(r.Context(), pool, queriesParam(r))
				if err != nil {
					return err
				}
				return respond(w, "application/json", appendWorlds(worlds))
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

// world is one World row.
type world struct{ id, randomNumber int32 }

// readWorlds reads n random rows, one query each, on one connection.
func readWorlds(ctx context.Context, pool *dbPool, n int) ([]world, error) {
	c, err := pool.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	worlds := make([]world, n)
	for i := range worlds {
		if err := c.QueryRow(ctx, selectWorld, randomWorld()).Scan(&worlds[i].id, &worlds[i].randomNumber); err != nil {
			return nil, err
		}
	}
	return worlds, nil
}

// updateWorlds reads n random rows, one query each, gives each a new
// random number and writes them back, one statement per row, sent as one
// batch in id order (so that concurrent batches cannot deadlock).
func updateWorlds(ctx context.Context, pool *dbPool, n int) ([]world, error) {
	c, err := pool.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	worlds := make([]world, n)
	for i := range worlds {
		if err := c.QueryRow(ctx, selectWorld, randomWorld()).Scan(&worlds[i].id, &worlds[i].randomNumber); err != nil {
			return nil, err
		}
		worlds[i].randomNumber = randomWorld()
	}
	sorted := slices.Clone(worlds)
	slices.SortStableFunc(sorted, func(a, b world) int { return cmp.Compare(a.id, b.id) })
	var batch pgx.Batch
	for _, w := range sorted {
		batch.Queue(updateWorld, w.randomNumber, w.id)
	}
	if err := c.SendBatch(ctx, &batch).Close(); err != nil {
		return nil, err
	}
	// A row drawn twice holds, in the database, the value written last.
	last := map[int32]int32{}
	for _, w := range sorted {
		last[w.id] = w.randomNumber
	}
	for i := range worlds {
		worlds[i].randomNumber = last[worlds[i].id]
	}
	return worlds, nil
}

func appendWorlds(worlds []world) []byte {
	b := make([]byte, 0, 32*len(worlds)+2)
	b = append(b, '[')
	for i, w := range worlds {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendWorld(b, w.id, w.randomNumber)
	}
	return append(b, ']')
}

// fortunesPage reads every fortune, adds one, sorts them by message and
// renders the HTML table, escaped.
func fortunesPage(ctx context.Context, pool *dbPool) ([]byte, error) {
	c, err := pool.acquire(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.Query(ctx, selectFortune)
	if err != nil {
		c.Release()
		return nil, err
	}
	list := make([]fortune, 0, 16)
	for rows.Next() {
		var f fortune
		if err := rows.Scan(&f.ID, &f.Message); err != nil {
			rows.Close()
			c.Release()
			return nil, err
		}
		list = append(list, f)
	}
	rows.Close()
	c.Release()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	list = append(list, fortune{0, extraFortune})
	slices.SortFunc(list, func(a, b fortune) int { return cmp.Compare(a.Message, b.Message) })
	return renderFortunes(list), nil
}

// renderFortunes writes the fortunes test's page.
func renderFortunes(list []fortune) []byte {
	b := make([]byte, 0, 1536)
	b = append(b, "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>"...)
	for _, f := range list {
		b = append(b, "<tr><td>"...)
		b = strconv.AppendInt(b, int64(f.ID), 10)
		b = append(b, "</td><td>"...)
		b = append(b, html.EscapeString(f.Message)...)
		b = append(b, "</td></tr>"...)
	}
	return append(b, "</table></body></html>"...)
}

// dbPoolBody is db-pool's answer.
const dbPoolBody = "slept 5 ms on a pooled connection"
