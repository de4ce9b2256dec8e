package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TechEmpower Framework Benchmarks' test types, served the way loom bench's
// own servers serve them (bench/workload_techempower.go): the same queries,
// the same bodies, a pgxpool of the same size, opened before the first
// request. Each framework only routes, reads the queries parameter and
// writes the bytes built here with its own API.

// databaseEnv is the variable loom bench sets to the run's database: a
// PostgreSQL URL whose search_path is the run's schema.
const databaseEnv = "LOOM_BENCH_DATABASE_URL"

const (
	helloWorld   = "Hello, World!"
	worldRows    = 10000
	maxQueries   = 500
	extraFortune = "Additional fortune added at request time."

	selectWorld   = "SELECT id, randomnumber FROM world WHERE id = $1"
	updateWorld   = "UPDATE world SET randomnumber = $1 WHERE id = $2"
	selectFortune = "SELECT id, message FROM fortune"

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
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", databaseEnv, err)
	}
	cfg.MaxConns, cfg.MinConns = int32(size), int32(size)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
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
		return nil, fmt.Errorf("database: opened %d of %d connections", len(conns), size)
	}
	return &teApp{pool: pool}, nil
}

func (a *teApp) close() error {
	if a.pool != nil {
		a.pool.Close()
	}
	return nil
}

// queriesParam parses the queries parameter as the rules say: missing, not
// an integer or below 1 means 1; above 500 means 500.
func queriesParam(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 1
	}
	return min(n, maxQueries)
}

func randomWorld() int32 { return int32(rand.IntN(worldRows)) + 1 }

type world struct{ id, randomNumber int32 }

func appendWorld(b []byte, w world) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(w.id), 10)
	b = append(b, `,"randomNumber":`...)
	b = strconv.AppendInt(b, int64(w.randomNumber), 10)
	return append(b, '}')
}

func appendWorlds(worlds []world) []byte {
	b := make([]byte, 0, 32*len(worlds)+2)
	b = append(b, '[')
	for i, w := range worlds {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendWorld(b, w)
	}
	return append(b, ']')
}

// serve answers one request of the workload: its body and content type.
// query is the raw queries parameter of queries and updates.
func (a *teApp) serve(ctx context.Context, wl workload, query string) ([]byte, string, error) {
	switch wl {
	case teJSON:
		b, err := json.Marshal(struct {
			Message string `json:"message"`
		}{helloWorld})
		return b, jsonType, err
	case tePlaintext:
		return []byte(helloWorld), textType, nil
	case teDB:
		var w world
		err := a.pool.QueryRow(ctx, selectWorld, randomWorld()).Scan(&w.id, &w.randomNumber)
		return appendWorld(nil, w), jsonType, err
	case teQueries:
		worlds, err := a.read(ctx, queriesParam(query), false)
		return appendWorlds(worlds), jsonType, err
	case teUpdates:
		worlds, err := a.read(ctx, queriesParam(query), true)
		return appendWorlds(worlds), jsonType, err
	case teFortunes:
		page, err := a.fortunes(ctx)
		return page, htmlType, err
	}
	return nil, "", errors.New("not a TechEmpower workload")
}

// read reads n random rows, one query each, on one connection; with update
// it gives each a new number and writes them back, one statement a row, in
// one batch in id order.
func (a *teApp) read(ctx context.Context, n int, update bool) ([]world, error) {
	c, err := a.pool.Acquire(ctx)
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
	if !update {
		return worlds, nil
	}
	for i := range worlds {
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
	last := map[int32]int32{}
	for _, w := range sorted {
		last[w.id] = w.randomNumber
	}
	for i := range worlds {
		worlds[i].randomNumber = last[worlds[i].id]
	}
	return worlds, nil
}

type fortune struct {
	id      int32
	message string
}

func (a *teApp) fortunes(ctx context.Context) ([]byte, error) {
	rows, err := a.pool.Query(ctx, selectFortune)
	if err != nil {
		return nil, err
	}
	list := make([]fortune, 0, 16)
	for rows.Next() {
		var f fortune
		if err := rows.Scan(&f.id, &f.message); err != nil {
			rows.Close()
			return nil, err
		}
		list = append(list, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	list = append(list, fortune{0, extraFortune})
	slices.SortFunc(list, func(a, b fortune) int { return cmp.Compare(a.message, b.message) })
	b := make([]byte, 0, 1536)
	b = append(b, "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>"...)
	for _, f := range list {
		b = append(b, "<tr><td>"...)
		b = strconv.AppendInt(b, int64(f.id), 10)
		b = append(b, "</td><td>"...)
		b = append(b, html.EscapeString(f.message)...)
		b = append(b, "</td></tr>"...)
	}
	return append(b, "</table></body></html>"...), nil
}
