// Package techempower does the framework-independent work of TechEmpower
// Framework Benchmarks' test types for loom bench's servers and its peers':
// the rules' queries parameter, the World and Fortune queries and updates
// on PostgreSQL through pgx, and the response bodies. Each server keeps its
// own routing and writes these bytes with its own API, so that every
// server runs the same SQL and answers the same bytes.
package techempower

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	// HelloWorld is the json and plaintext tests' message.
	HelloWorld = "Hello, World!"
	// WorldRows is the size of the World table.
	WorldRows = 10000
	// MaxQueries is the most rows a queries or updates request reads.
	MaxQueries = 500
	// ExtraFortune is the row the fortunes test adds at request time.
	ExtraFortune = "Additional fortune added at request time."
)

// The tests' statements, against the world and fortune tables of the
// connection's search_path.
const (
	SelectWorld   = "SELECT id, randomnumber FROM world WHERE id = $1"
	UpdateWorld   = "UPDATE world SET randomnumber = $1 WHERE id = $2"
	SelectFortune = "SELECT id, message FROM fortune"
)

// Querier is what the tests query through: a *pgxpool.Pool, a
// *pgxpool.Conn or a *pgx.Conn.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// OpenPool connects to the database url names with size connections, all
// opened before it returns: connecting is not the work measured.
func OpenPool(ctx context.Context, url string, size int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
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
		return nil, fmt.Errorf("opened %d of %d connections", len(conns), size)
	}
	return pool, nil
}

// Queries parses the queries parameter as the rules say: missing, not an
// integer or below 1 means 1; above MaxQueries means MaxQueries.
func Queries(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 1
	}
	return min(n, MaxQueries)
}

// RandomWorld is a random World id, 1 to WorldRows.
func RandomWorld() int32 { return int32(rand.IntN(WorldRows)) + 1 }

// JSONBody is the json test's body: {"message":"Hello, World!"}, encoded
// for each request as the rules require.
func JSONBody() ([]byte, error) {
	return json.Marshal(struct {
		Message string `json:"message"`
	}{HelloWorld})
}

// World is one World row.
type World struct{ ID, RandomNumber int32 }

// AppendWorld appends w as the tests' JSON object.
func AppendWorld(b []byte, w World) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(w.ID), 10)
	b = append(b, `,"randomNumber":`...)
	b = strconv.AppendInt(b, int64(w.RandomNumber), 10)
	return append(b, '}')
}

// AppendWorlds encodes worlds as a JSON array of the tests' objects.
func AppendWorlds(worlds []World) []byte {
	b := make([]byte, 0, 32*len(worlds)+2)
	b = append(b, '[')
	for i, w := range worlds {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendWorld(b, w)
	}
	return append(b, ']')
}

// ReadWorld reads one random row: the db test.
func ReadWorld(ctx context.Context, q Querier) (World, error) {
	var w World
	err := q.QueryRow(ctx, SelectWorld, RandomWorld()).Scan(&w.ID, &w.RandomNumber)
	return w, err
}

// ReadWorlds reads n random rows, one query each: the queries test. Pass
// one connection, not a pool, so that a request holds one connection.
func ReadWorlds(ctx context.Context, q Querier, n int) ([]World, error) {
	worlds := make([]World, n)
	for i := range worlds {
		if err := q.QueryRow(ctx, SelectWorld, RandomWorld()).Scan(&worlds[i].ID, &worlds[i].RandomNumber); err != nil {
			return nil, err
		}
	}
	return worlds, nil
}

// UpdateWorlds reads n random rows, one query each, gives each a new
// random number and writes them back, one statement per row, sent as one
// batch in id order (so that concurrent batches cannot deadlock): the
// updates test. Pass one connection, not a pool.
func UpdateWorlds(ctx context.Context, q Querier, n int) ([]World, error) {
	worlds, err := ReadWorlds(ctx, q, n)
	if err != nil {
		return nil, err
	}
	for i := range worlds {
		worlds[i].RandomNumber = RandomWorld()
	}
	sorted := slices.Clone(worlds)
	slices.SortStableFunc(sorted, func(a, b World) int { return cmp.Compare(a.ID, b.ID) })
	var batch pgx.Batch
	for _, w := range sorted {
		batch.Queue(UpdateWorld, w.RandomNumber, w.ID)
	}
	if err := q.SendBatch(ctx, &batch).Close(); err != nil {
		return nil, err
	}
	// A row drawn twice holds, in the database, the value written last.
	last := make(map[int32]int32, len(sorted))
	for _, w := range sorted {
		last[w.ID] = w.RandomNumber
	}
	for i := range worlds {
		worlds[i].RandomNumber = last[worlds[i].ID]
	}
	return worlds, nil
}

// Fortune is one row of the Fortune table.
type Fortune struct {
	ID      int32
	Message string
}

// FortunesPage reads every fortune, adds ExtraFortune with id 0, sorts
// them by message and renders the HTML page: the fortunes test.
func FortunesPage(ctx context.Context, q Querier) ([]byte, error) {
	rows, err := q.Query(ctx, SelectFortune)
	if err != nil {
		return nil, err
	}
	list := make([]Fortune, 0, 16)
	for rows.Next() {
		var f Fortune
		if err := rows.Scan(&f.ID, &f.Message); err != nil {
			rows.Close()
			return nil, err
		}
		list = append(list, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	list = append(list, Fortune{0, ExtraFortune})
	slices.SortFunc(list, func(a, b Fortune) int { return cmp.Compare(a.Message, b.Message) })
	return RenderFortunes(list), nil
}

// RenderFortunes renders list, in its order, as the fortunes test's page,
// each message HTML-escaped.
func RenderFortunes(list []Fortune) []byte {
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
