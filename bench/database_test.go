package bench

import (
	"context"
	"errors"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomrt/loom/internal/harness/techempower"
	"github.com/loomrt/loom/web"
)

// needPostgres skips t when the database scenarios' server is unreachable.
func needPostgres(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, postgresURL())
	if err != nil {
		t.Skipf("PostgreSQL unreachable (set %s to a reachable database): %v", PostgresEnv, err)
	}
	conn.Close(ctx)
}

func countRows(t *testing.T, conn *pgx.Conn, query string, args ...any) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestDatabaseSchemaIsCreatedAndDropped: each run's schema holds the
// seeded rows and nothing of an earlier run's, and is gone after drop.
func TestDatabaseSchemaIsCreatedAndDropped(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	first, err := openDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, first.conn, "SELECT count(*) FROM "+first.schema+".world WHERE randomnumber BETWEEN 1 AND 10000"); n != techempower.WorldRows {
		t.Errorf("World rows in range: %d; want %d", n, techempower.WorldRows)
	}
	if n := countRows(t, first.conn, "SELECT count(*) FROM "+first.schema+".fortune"); n != len(fortunes) {
		t.Errorf("Fortune rows: %d; want %d", n, len(fortunes))
	}
	if _, err := first.conn.Exec(ctx, "INSERT INTO "+first.schema+".fortune VALUES (13, 'left by the first run')"); err != nil {
		t.Fatal(err)
	}
	if err := first.drop(ctx); err != nil {
		t.Fatal(err)
	}

	second, err := openDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.drop(ctx)
	if second.schema == first.schema {
		t.Fatalf("both runs used schema %s", first.schema)
	}
	if n := countRows(t, second.conn, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", first.schema); n != 0 {
		t.Errorf("schema %s still exists after drop", first.schema)
	}
	if n := countRows(t, second.conn, "SELECT count(*) FROM "+second.schema+".fortune"); n != len(fortunes) {
		t.Errorf("the second run's Fortune rows: %d; want %d (nothing of the first's)", n, len(fortunes))
	}
	if !strings.Contains(second.url, "search_path="+second.schema) || !strings.Contains(second.url, "application_name="+second.schema) {
		t.Errorf("server URL %q; want the schema as search_path and application_name", second.url)
	}
}

func TestDatabaseStatsCheck(t *testing.T) {
	for _, tc := range []struct {
		name          string
		claimed, seen Work
		mention       string
	}{
		{"exact", Work{WorldReads: 100}, Work{WorldReads: 100}, ""},
		{"more seen", Work{WorldReads: 100, FortuneScans: 3}, Work{WorldReads: 120, FortuneScans: 4}, ""},
		{"reads skipped", Work{WorldReads: 100}, Work{WorldReads: 99}, "99 World reads"},
		{"updates need their own reads", Work{WorldReads: 10, WorldUpdates: 10}, Work{WorldReads: 10, WorldUpdates: 10}, "20 claimed"},
		{"updates skipped", Work{WorldReads: 10, WorldUpdates: 10}, Work{WorldReads: 20, WorldUpdates: 5}, "5 World rows updated"},
		{"fortunes cached", Work{FortuneScans: 50}, Work{FortuneScans: 1}, "1 Fortune reads"},
	} {
		err := DatabaseStats{Claimed: tc.claimed, Seen: tc.seen}.check()
		switch {
		case tc.mention == "" && err != nil:
			t.Errorf("%s: %v; want none", tc.name, err)
		case tc.mention != "" && (!errors.Is(err, ErrDatabase) || !strings.Contains(err.Error(), tc.mention)):
			t.Errorf("%s: %v; want ErrDatabase mentioning %q", tc.name, err, tc.mention)
		}
	}
}

// dbTestScenarios are the test catalogue's database scenarios: the real
// db, queries, updates and fortunes routes on a tiny plan, and servers that
// break the rules the verifier or the database's count must catch.
func dbTestScenarios() []*Scenario {
	// 3 s: a machine busy with other tests (a throwaway PostgreSQL cluster
	// being made, a CPU hog) has held every updates commit past a 1 s
	// window, which then served nothing.
	plan := Plan{Models: []string{"virtual"}, Connections: 4, Warmup: 100 * time.Millisecond, Duration: 3 * time.Second, Timeout: 5 * time.Second}
	tiny := func(name, test, path, marker string, per Work, serve ServeFunc) *Scenario {
		return &Scenario{
			Name: name, Workload: "TechEmpower " + test + " on a tiny plan", Full: plan, Quick: plan,
			Limit: techEmpowerLimit, Targets: get(path), ExpectBody: marker, TechEmpower: test,
			Database: &Database{PerRequest: per, Pool: 2}, Serve: serve,
		}
	}
	// cached serves /db from a copy of World read once, by one scan.
	cached := func(ctx context.Context, app *web.App, _ Plan, dir string) (func() error, error) {
		pool, err := openPool(ctx, 2)
		if err != nil {
			return nil, err
		}
		rows, _ := pool.Query(ctx, "SELECT id, randomnumber FROM world")
		copied, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ ID, N int32 }])
		if err != nil {
			pool.Close()
			return nil, err
		}
		app.Get("/db", func(w http.ResponseWriter, _ *http.Request) error {
			row := copied[techempower.RandomWorld()-1]
			return respond(w, "application/json", techempower.AppendWorld(nil, techempower.World{ID: row.ID, RandomNumber: row.N}))
		})
		return func() error { return pool.close(dir) }, nil
	}
	// batched reads a queries request's rows in one query.
	batched := func(ctx context.Context, app *web.App, _ Plan, dir string) (func() error, error) {
		pool, err := openPool(ctx, 2)
		if err != nil {
			return nil, err
		}
		app.Get("/queries", func(w http.ResponseWriter, r *http.Request) error {
			ids := make([]int32, queriesParam(r))
			for i := range ids {
				ids[i] = techempower.RandomWorld()
			}
			rows, _ := pool.Query(r.Context(), "SELECT id, randomnumber FROM world WHERE id = ANY($1)", ids)
			found, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ ID, N int32 }])
			if err != nil {
				return err
			}
			byID := map[int32]int32{}
			for _, f := range found {
				byID[f.ID] = f.N
			}
			worlds := make([]techempower.World, len(ids))
			for i, id := range ids {
				worlds[i] = techempower.World{ID: id, RandomNumber: byID[id]}
			}
			return respond(w, "application/json", techempower.AppendWorlds(worlds))
		})
		return func() error { return pool.close(dir) }, nil
	}
	// serverless answers /db by the rules but without a Server header.
	serverless := func(ctx context.Context, app *web.App, p Plan, dir string) (func() error, error) {
		pool, err := openPool(ctx, 2)
		if err != nil {
			return nil, err
		}
		app.Get("/db", func(w http.ResponseWriter, r *http.Request) error {
			var id, n int32
			if err := pool.QueryRow(r.Context(), techempower.SelectWorld, techempower.RandomWorld()).Scan(&id, &n); err != nil {
				return err
			}
			w.Header().Set("Content-Type", "application/json")
			_, err := w.Write(techempower.AppendWorld(nil, techempower.World{ID: id, RandomNumber: n}))
			return err
		})
		return func() error { return pool.close(dir) }, nil
	}
	// dying answers /db by the rules once, for the verifier, then dies.
	dying := func(ctx context.Context, app *web.App, p Plan, dir string) (func() error, error) {
		var served atomic.Int64
		app.Get("/db", func(w http.ResponseWriter, r *http.Request) error {
			if served.Add(1) > 1 {
				go func() { panic("test crash: the server died") }() // not recovered: the process dies
				time.Sleep(time.Second)
			}
			return respond(w, "application/json", techempower.AppendWorld(nil, techempower.World{ID: 1, RandomNumber: 1}))
		})
		return nil, nil
	}
	return []*Scenario{
		tiny("test-db-crash", "db", "/db", `"randomNumber"`, Work{WorldReads: 1}, dying),
		tiny("test-db", "db", "/db", `"randomNumber"`, Work{WorldReads: 1}, serveTechEmpower("db", 2)),
		tiny("test-queries", "queries", "/queries?queries=5", `"randomNumber"`, Work{WorldReads: 5}, serveTechEmpower("queries", 2)),
		tiny("test-updates", "updates", "/updates?queries=5", `"randomNumber"`, Work{WorldReads: 5, WorldUpdates: 5}, serveTechEmpower("updates", 2)),
		tiny("test-fortunes", "fortunes", "/fortunes", techempower.ExtraFortune, Work{FortuneScans: 1}, serveTechEmpower("fortunes", 2)),
		tiny("test-db-cached", "db", "/db", `"randomNumber"`, Work{WorldReads: 1}, cached),
		tiny("test-queries-batched", "queries", "/queries?queries=5", `"randomNumber"`, Work{WorldReads: 5}, batched),
		tiny("test-db-no-server-header", "db", "/db", `"randomNumber"`, Work{WorldReads: 1}, serverless),
	}
}

// TestRunDatabaseScenarios runs the database routes in real servers against
// PostgreSQL: the honest ones pass the verifier and the database's count;
// a server that caches rows or batches queries fails the count, one that
// leaves out a required header fails the verifier and is not loaded; no
// run leaves its schema behind.
func TestRunDatabaseScenarios(t *testing.T) {
	needPostgres(t)
	conn, err := pgx.Connect(context.Background(), postgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// Other processes may run benchmarks on the same database: only this
	// test's schemas are counted.
	var mu sync.Mutex
	var made []string
	testHookSchema = func(name string) {
		mu.Lock()
		defer mu.Unlock()
		made = append(made, name)
	}
	defer func() { testHookSchema = nil }()
	report := runTest(t, "test-db-crash", "test-db", "test-queries", "test-updates", "test-fortunes", "test-db-cached", "test-queries-batched", "test-db-no-server-header")
	mu.Lock()
	defer mu.Unlock()
	if len(made) == 0 {
		t.Fatal("no run made a schema")
	}
	if left := countRows(t, conn, "SELECT count(*) FROM pg_namespace WHERE nspname = ANY($1)", made); left != 0 {
		t.Errorf("%d of the runs' %d schemas left after the runs", left, len(made))
	}
	for _, sc := range report.Scenarios {
		run := sc.Runs[0]
		switch sc.Name {
		case "test-db", "test-queries", "test-updates", "test-fortunes":
			if run.Status != StatusOK || run.Database == nil {
				t.Errorf("%s: status %s (%s), database %+v; want ok with its figures", sc.Name, run.Status, run.Failure, run.Database)
				continue
			}
			d := run.Database
			if d.Seen.WorldReads+d.Seen.FortuneScans == 0 || d.PeakConnections == 0 || d.PeakConnections > 2 || d.PeakWaiting < 0 {
				t.Errorf("%s: database %+v; want work seen, 1 or 2 connections and a pool report", sc.Name, d)
			}
		case "test-db-cached", "test-queries-batched":
			if run.Status != StatusFailed || !strings.Contains(run.Failure, "the database saw") {
				t.Errorf("%s: status %s (%s); want failed, the database having seen less than claimed", sc.Name, run.Status, run.Failure)
			}
		case "test-db-crash":
			if run.Status != StatusCrashed || run.Database != nil {
				t.Errorf("%s: status %s (%s), database %+v; want crashed, no database figures", sc.Name, run.Status, run.Failure, run.Database)
			}
		case "test-db-no-server-header":
			if run.Status != StatusFailed || !strings.Contains(run.Failure, "no Server header") || run.Requests != 0 {
				t.Errorf("%s: status %s (%s), %d served; want failed by the verifier, unloaded", sc.Name, run.Status, run.Failure, run.Requests)
			}
		}
	}
}

// TestFailedRunKeepsItsFailureWhenItsDropFails: a run that failed and
// then could not drop its schema reports why it failed, not the drop.
func TestFailedRunKeepsItsFailureWhenItsDropFails(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, postgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var made []string
	testHookSchema = func(name string) { made = append(made, name) }
	// The run's own connection is cut just before its drop.
	testHookDrop = func(d *runDatabase) {
		if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend($1)", d.conn.PgConn().PID()); err != nil {
			t.Errorf("terminate the run's connection: %v", err)
		}
	}
	defer func() { testHookSchema, testHookDrop = nil, nil }()
	report := runTest(t, "test-db-cached")
	if len(made) != 1 {
		t.Fatalf("%d schemas made; want 1", len(made))
	}
	if left := countRows(t, conn, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", made[0]); left != 1 {
		t.Errorf("the schema was dropped: the drop did not fail, and the test shows nothing")
	}
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+made[0]+" CASCADE"); err != nil {
		t.Errorf("drop %s: %v", made[0], err)
	}
	run := report.Scenarios[0].Runs[0]
	if run.Status != StatusFailed || !strings.Contains(run.Failure, "the database saw") {
		t.Errorf("status %s (%s); want failed, the database having seen less than claimed", run.Status, run.Failure)
	}
}

// TestReportsShowTheDatabase: the text and Markdown reports give each
// database run's connections, pool waits and work seen beside claimed, and
// no such table where no run has them.
func TestReportsShowTheDatabase(t *testing.T) {
	r := &Report{Scenarios: []ScenarioResult{{Name: "db-pool", Runs: []ModelRun{
		{Model: "virtual", Status: StatusOK, Database: &DatabaseStats{PeakConnections: 10, PeakWaiting: 391}},
		{Model: "peer:chi", Status: StatusOK, Database: &DatabaseStats{PeakConnections: 16, PeakWaiting: -1,
			Claimed: Work{WorldReads: 1000}, Seen: Work{WorldReads: 1004}}},
	}}, {Name: "hello", Runs: []ModelRun{{Model: "virtual", Status: StatusOK}}}}}
	for name, write := range map[string]func(*strings.Builder) error{
		"text":     func(b *strings.Builder) error { return WriteText(b, r) },
		"markdown": func(b *strings.Builder) error { return WriteMarkdown(b, r) },
	} {
		var b strings.Builder
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"waiting in pool (peak)", "391", "1,004 / 1,000"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q:\n%s", name, want, out)
			}
		}
		if n := strings.Count(out, "waiting in pool (peak)"); n != 1 {
			t.Errorf("%s report has %d database tables; want 1 (hello has none)", name, n)
		}
	}
}

// TestPeerArgsForTechEmpower: a peer serves a TechEmpower scenario's test
// type with the pool size loom's servers use.
func TestPeerArgsForTechEmpower(t *testing.T) {
	for _, s := range Catalogue() {
		if s.TechEmpower == "" {
			continue
		}
		args := strings.Join(peerArgs(job{scenario: s, plan: s.Full, model: "peer:fasthttp"}), " ")
		want := "-framework fasthttp -workload " + s.TechEmpower
		if !strings.Contains(args, want) {
			t.Errorf("%s: peer args %q; want %q", s.Name, args, want)
		}
		if hasDB := strings.Contains(args, "-db-pool 16"); hasDB != (s.Database != nil) {
			t.Errorf("%s: peer args %q; want -db-pool 16 exactly when the scenario has a database", s.Name, args)
		}
	}
	// A database without a pool size leaves the peer's own.
	s := &Scenario{Name: "db", TechEmpower: "db", Database: &Database{}}
	if args := strings.Join(peerArgs(job{scenario: s, model: "peer:fasthttp"}), " "); strings.Contains(args, "-db-pool") {
		t.Errorf("peer args %q for a database of no pool size; want no -db-pool", args)
	}
}

// TestPoolPeakWaiting: the pool's report keeps the most requests that ever
// waited at once, not the last count: four wait behind a held connection,
// then one takes a free one.
func TestPoolPeakWaiting(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	db, err := openDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.drop(ctx)
	t.Setenv(DatabaseEnv, db.url)
	pool, err := openPool(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	defer pool.close(dir)
	held, err := pool.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 4
	done := make(chan error, waiters)
	for range waiters {
		go func() {
			c, err := pool.acquire(ctx)
			if err == nil {
				c.Release()
			}
			done <- err
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); pool.waiting.Load() < waiters; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting after 10 s; want %d", pool.waiting.Load(), waiters)
		}
	}
	held.Release()
	for range waiters {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	c, err := pool.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if got := pool.peak.Load(); got != waiters {
		t.Errorf("peak waiting %d; want %d, the four that waited together", got, waiters)
	}
}

// cancelOnServed is a terminal for Options.Progress that cancels a run once
// its bar shows a request served: the load is under way.
type cancelOnServed struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	seen   bool
}

var servedOnBar = regexp.MustCompile(`\s[1-9][0-9,]* req`)

func (c *cancelOnServed) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seen && servedOnBar.Match(p) {
		c.seen = true
		c.cancel()
	}
	return len(p), nil
}

// TestDatabaseRunInterruptedMidLoad cancels Run while a database
// scenario's load runs: the run is failed as interrupted, and the
// database's count is not taken on the cancelled context, which would fail
// it with a database error instead (runner.go, the check's ctx.Err() == nil).
func TestDatabaseRunInterruptedMidLoad(t *testing.T) {
	needPostgres(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	term := &cancelOnServed{cancel: cancel}
	report, err := Run(ctx, Options{
		Scenarios: []string{"test-db"}, Quick: true, Executable: exe, Env: []string{serveEnv + "=1"},
		Catalogue: testCatalogue(), Command: "go test", Rounds: 1, Progress: term, Terminal: true,
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v; want context.Canceled", err)
	}
	term.mu.Lock()
	seen := term.seen
	term.mu.Unlock()
	if !seen {
		t.Fatal("the progress bar never showed a request served: the run was not cancelled mid-load")
	}
	if len(report.Scenarios) != 1 || len(report.Scenarios[0].Runs) != 1 {
		t.Fatalf("report %+v; want the one run", report.Scenarios)
	}
	run := report.Scenarios[0].Runs[0]
	if run.Status != StatusFailed || !strings.HasPrefix(run.Failure, "interrupted") || run.Database != nil {
		t.Errorf("status %s (%s), database %+v; want failed as interrupted, no database figures", run.Status, run.Failure, run.Database)
	}
}
