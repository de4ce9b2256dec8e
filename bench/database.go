package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/loomrt/loom/internal/harness/techempower"
)

// DatabaseEnv names the variable that gives a server under test its
// database: a PostgreSQL URL whose search_path is the run's own schema and
// whose application_name tags its connections. The runner sets it for
// loom's servers and the peers alike.
const DatabaseEnv = "LOOM_BENCH_DATABASE_URL"

// PostgresEnv names the variable that overrides the PostgreSQL server the
// database scenarios use, DefaultPostgres.
const PostgresEnv = "LOOM_BENCH_POSTGRES"

// DefaultPostgres is the database the database scenarios use when
// PostgresEnv is not set.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// ErrDatabase reports that a database scenario's check failed: the database
// saw less work than the requests served claim, or its schema could not be
// made.
var ErrDatabase = errors.New("database check failed")

// Database says what a database scenario needs of PostgreSQL: a schema of
// its own per run, seeded before the server starts and dropped after the
// run, and what each served request claims the database did.
type Database struct {
	// PerRequest is the work one served request claims; after the run the
	// database's own counters must show at least that much per request.
	PerRequest Work
	// Pool is the size of the server's connection pool (pgxpool MaxConns).
	Pool int
}

// Work counts what the database did, by its own statistics
// (pg_stat_user_tables), or what requests claim it did.
type Work struct {
	// WorldReads counts index scans of World: one per row read or updated
	// by primary key.
	WorldReads int64 `json:"world_reads"`
	// WorldUpdates counts World rows updated.
	WorldUpdates int64 `json:"world_updates"`
	// FortuneScans counts full reads of the Fortune table.
	FortuneScans int64 `json:"fortune_scans"`
}

func (w Work) times(n int64) Work {
	return Work{WorldReads: w.WorldReads * n, WorldUpdates: w.WorldUpdates * n, FortuneScans: w.FortuneScans * n}
}

func (w Work) plus(o Work) Work {
	return Work{WorldReads: w.WorldReads + o.WorldReads, WorldUpdates: w.WorldUpdates + o.WorldUpdates, FortuneScans: w.FortuneScans + o.FortuneScans}
}

// DatabaseStats is what a database scenario's run did to PostgreSQL.
type DatabaseStats struct {
	// Claimed is what the requests served (warm-up, verification and the
	// measured window) claim; Seen what the database counted.
	Claimed Work `json:"claimed"`
	Seen    Work `json:"seen"`
	// PeakConnections is the most connections the server held open to the
	// database at once, by the database's own count (pg_stat_activity).
	PeakConnections int `json:"peak_connections"`
	// PeakWaiting is the most handlers waiting at once for a connection
	// from the server's pool; -1 when the server does not report it (the
	// peers).
	PeakWaiting int `json:"peak_waiting"`
}

// postgresURL is the database server of the database scenarios.
func postgresURL() string {
	if u := os.Getenv(PostgresEnv); u != "" {
		return u
	}
	return DefaultPostgres
}

// testHookSchema, when set, is told the name of each run's schema before
// it is created.
var testHookSchema func(name string)

// runDatabase is one run's schema, from creation to drop.
type runDatabase struct {
	conn   *pgx.Conn
	schema string // also the application_name of the server's connections
	url    string // for the server: search_path and application_name set
}

// openDatabase creates a schema of its own for one run and seeds it with
// TechEmpower's tables: World's 10,000 rows and the standard fortunes.
func openDatabase(ctx context.Context) (*runDatabase, error) {
	base := postgresURL()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("%w: connect to %s: %w", ErrDatabase, redact(base), err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	d := &runDatabase{conn: conn, schema: "loom_bench_" + hex.EncodeToString(b[:])}
	if h := testHookSchema; h != nil {
		h(d.schema)
	}
	u, err := url.Parse(base)
	if err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("%w: %s: %w", ErrDatabase, PostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", d.schema)
	q.Set("application_name", d.schema)
	u.RawQuery = q.Encode()
	d.url = u.String()
	if err := d.seed(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("%w: seed schema %s: %w", ErrDatabase, d.schema, err), d.drop(context.WithoutCancel(ctx)))
	}
	return d, nil
}

func (d *runDatabase) seed(ctx context.Context) error {
	stmts := []string{
		"CREATE SCHEMA " + d.schema,
		"CREATE TABLE " + d.schema + ".world (id integer PRIMARY KEY, randomnumber integer NOT NULL DEFAULT 0)",
		fmt.Sprintf("INSERT INTO %s.world (id, randomnumber) SELECT i, 1 + floor(random() * %d)::integer FROM generate_series(1, %d) AS i",
			d.schema, techempower.WorldRows, techempower.WorldRows),
		"CREATE TABLE " + d.schema + ".fortune (id integer PRIMARY KEY, message varchar(2048) NOT NULL)",
	}
	for _, s := range stmts {
		if _, err := d.conn.Exec(ctx, s); err != nil {
			return err
		}
	}
	rows := make([][]any, len(fortunes))
	for i, f := range fortunes {
		rows[i] = []any{f.ID, f.Message}
	}
	if _, err := d.conn.CopyFrom(ctx, pgx.Identifier{d.schema, "fortune"}, []string{"id", "message"}, pgx.CopyFromRows(rows)); err != nil {
		return err
	}
	_, err := d.conn.Exec(ctx, "ANALYZE "+d.schema+".world, "+d.schema+".fortune")
	return err
}

// drop removes the schema and everything in it, and closes the connection.
// testHookDrop, when set, is called as a run's schema is about to be
// dropped.
var testHookDrop func(d *runDatabase)

func (d *runDatabase) drop(ctx context.Context) error {
	if h := testHookDrop; h != nil {
		h(d)
	}
	_, err := d.conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+d.schema+" CASCADE")
	return errors.Join(err, d.conn.Close(ctx))
}

// connections counts the server's connections to the database now.
func (d *runDatabase) connections(ctx context.Context) (int, error) {
	var n int
	err := d.conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", d.schema).Scan(&n)
	return n, err
}

// work reads what the database counted on the schema's tables. A backend
// reports its counts when it goes idle, at most once a second, and when it
// exits: call it after the server's connections have closed (settle).
func (d *runDatabase) work(ctx context.Context) (Work, error) {
	if _, err := d.conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return Work{}, err
	}
	rows, err := d.conn.Query(ctx, `SELECT relname, coalesce(seq_scan, 0), coalesce(idx_scan, 0), n_tup_upd
		FROM pg_stat_user_tables WHERE schemaname = $1`, d.schema)
	if err != nil {
		return Work{}, err
	}
	var w Work
	for rows.Next() {
		var name string
		var seq, idx, upd int64
		if err := rows.Scan(&name, &seq, &idx, &upd); err != nil {
			return Work{}, err
		}
		switch name {
		case "world":
			w.WorldReads, w.WorldUpdates = idx, upd
		case "fortune":
			w.FortuneScans = seq
		}
	}
	return w, rows.Err()
}

// settle waits, up to limit, until the server's connections have closed,
// so that every backend has reported its counts.
func (d *runDatabase) settle(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		n, err := d.connections(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d connections of the server still open %s after it stopped", n, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// watchConnections samples the server's connection count every interval
// until stop is called, which returns the peak. It uses a connection of its
// own, so that it can run beside the runner's.
func (d *runDatabase) watchConnections(ctx context.Context, interval time.Duration) (stop func() int) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	peak := 0
	wg.Go(func() {
		conn, err := pgx.Connect(ctx, postgresURL())
		if err != nil {
			return
		}
		defer conn.Close(context.WithoutCancel(ctx))
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			var n int
			if conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", d.schema).Scan(&n) == nil {
				peak = max(peak, n)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return func() int {
		cancel()
		wg.Wait()
		return peak
	}
}

// check compares what the database saw with what the requests claimed: a
// server that caches rows or batches queries did less than it claims.
func (s DatabaseStats) check() error {
	c, seen := s.Claimed, s.Seen
	var short []string
	if reads := c.WorldReads + c.WorldUpdates; seen.WorldReads < reads {
		short = append(short, fmt.Sprintf("%s World reads by id, %s claimed", count(seen.WorldReads), count(reads)))
	}
	if seen.WorldUpdates < c.WorldUpdates {
		short = append(short, fmt.Sprintf("%s World rows updated, %s claimed", count(seen.WorldUpdates), count(c.WorldUpdates)))
	}
	if seen.FortuneScans < c.FortuneScans {
		short = append(short, fmt.Sprintf("%s Fortune reads, %s claimed", count(seen.FortuneScans), count(c.FortuneScans)))
	}
	if len(short) > 0 {
		return fmt.Errorf("%w: the database saw %s", ErrDatabase, strings.Join(short, "; "))
	}
	return nil
}

// poolReportFile is the file, in the run's directory, where a loom server
// under test writes what its connection pool saw (poolReport) when it stops.
const poolReportFile = "database-pool.json"

// poolReport is what a server's connection pool saw.
type poolReport struct {
	PeakWaiting int `json:"peak_waiting"`
}

// readPoolReport reads the server's pool report from dir; -1 when there is
// none (a peer, or a server that died).
func readPoolReport(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, poolReportFile))
	if err != nil {
		return -1
	}
	var r poolReport
	if json.Unmarshal(b, &r) != nil {
		return -1
	}
	return r.PeakWaiting
}

// redact hides a password in a database URL.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the database"
	}
	return u.Redacted()
}

// databaseTable is the database scenarios' table of what each model's
// median round did to PostgreSQL; nil when no run has figures.
func databaseTable(runs []ModelRun) [][]string {
	var rows [][]string
	for _, r := range runs {
		d := r.Database
		if d == nil {
			continue
		}
		waiting := "–"
		if d.PeakWaiting >= 0 {
			waiting = count(int64(d.PeakWaiting))
		}
		rows = append(rows, []string{
			r.Model, count(int64(d.PeakConnections)), waiting,
			workCell(d.Seen.WorldReads, d.Claimed.WorldReads+d.Claimed.WorldUpdates),
			workCell(d.Seen.WorldUpdates, d.Claimed.WorldUpdates),
			workCell(d.Seen.FortuneScans, d.Claimed.FortuneScans),
		})
	}
	if rows == nil {
		return nil
	}
	header := []string{"model", "DB connections (peak)", "waiting in pool (peak)", "World reads seen / claimed", "World updates seen / claimed", "Fortune reads seen / claimed"}
	return append([][]string{header}, rows...)
}

func workCell(seen, claimed int64) string {
	if claimed == 0 {
		return "–" // nothing claimed: what the seeding's ANALYZE read is no request's
	}
	return count(seen) + " / " + count(claimed)
}
