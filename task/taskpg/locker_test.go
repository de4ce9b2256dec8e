package taskpg_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
	"github.com/loomrt/loom/task/taskpg"
	"github.com/loomrt/loom/task/tasktest"
)

// databaseURL is the test server: LOOM_TEST_DATABASE_URL, else the local
// one CI starts.
func databaseURL() string {
	if u := os.Getenv("LOOM_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// testSchema creates an empty schema, dropped when the test ends, and a pool
// whose connections use it.
func testSchema(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "taskpg_test_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, databaseURL())
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL unreachable and CI is set: %v", err)
		}
		t.Skipf("PostgreSQL unreachable (set LOOM_TEST_DATABASE_URL to a reachable database): %v", err)
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		admin.Close(ctx)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		admin.Close(ctx)
	})
	pool := newPool(t, schema)
	return schema, pool
}

func newPool(t testing.TB, schema string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(databaseURL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func newLocker(t *testing.T, pool *pgxpool.Pool, cfg taskpg.Config) *taskpg.Locker {
	t.Helper()
	l, err := taskpg.New(context.Background(), pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// at0 is near the database's clock, so that pruning leaves it alone.
var at0 = time.Now().Truncate(time.Second).UTC()

func TestClaimOnce(t *testing.T) {
	_, pool := testSchema(t)
	ctx := context.Background()
	a := newLocker(t, pool, taskpg.Config{Owner: "a"})
	b := newLocker(t, pool, taskpg.Config{Owner: "b"})
	claim, err := a.Claim(ctx, "tick", at0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim(ctx, "tick", at0); !errors.Is(err, task.ErrClaimed) {
		t.Errorf("second claim: got %v; want ErrClaimed", err)
	}
	if err := claim.Done(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Finished is still claimed: at most once.
	if _, err := b.Claim(ctx, "tick", at0); !errors.Is(err, task.ErrClaimed) {
		t.Errorf("claim after done: got %v; want ErrClaimed", err)
	}
	// Another time, another job: free.
	for _, occ := range []struct {
		job string
		at  time.Time
	}{{"tick", at0.Add(time.Second)}, {"tock", at0}} {
		c, err := b.Claim(ctx, occ.job, occ.at)
		if err != nil {
			t.Errorf("claim %s at %v: %v", occ.job, occ.at, err)
			continue
		}
		c.Done(ctx, errors.New("boom"))
	}
	var owner, text string
	if err := pool.QueryRow(ctx, "SELECT owner, error FROM loom_task_claims WHERE job = 'tock'").Scan(&owner, &text); err != nil {
		t.Fatal(err)
	}
	if owner != "b" || text != "boom" {
		t.Errorf("row: got owner %q, error %q; want b, boom", owner, text)
	}
}

// TestConcurrentClaims: eight lockers race for the same 50 occurrences;
// each is won exactly once.
func TestConcurrentClaims(t *testing.T) {
	_, pool := testSchema(t)
	ctx := context.Background()
	var lockers []*taskpg.Locker
	for i := range 8 {
		lockers = append(lockers, newLocker(t, pool, taskpg.Config{Owner: fmt.Sprint(i)}))
	}
	wins := make([]int, 50)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, l := range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range wins {
				c, err := l.Claim(ctx, "race", at0.Add(time.Duration(i)*time.Second))
				if errors.Is(err, task.ErrClaimed) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				c.Done(ctx, nil)
				mu.Lock()
				wins[i]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, n := range wins {
		if n != 1 {
			t.Errorf("occurrence %d: won %d times; want 1", i, n)
		}
	}
}

// TestConfigurableTablePrunedAndCreatedOnce: the table lands in the
// schema and under the name given; several instances create it at once;
// claims older than the retention go.
func TestConfigurableTablePrunedAndCreatedOnce(t *testing.T) {
	schema, _ := testSchema(t)
	pool := newPool(t, "public") // the schema comes from Config, not the search path
	ctx := context.Background()
	cfg := taskpg.Config{Schema: schema, Table: "my claims", Retention: time.Hour}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := taskpg.New(ctx, pool, cfg)
			if err != nil {
				errs <- err
				return
			}
			l.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent New: %v", err)
	}
	table := pgx.Identifier{schema, "my claims"}.Sanitize()
	// An old claim, 2 hours before the database's now, and one within the hour.
	if _, err := pool.Exec(ctx, "INSERT INTO "+table+" (job, scheduled_at, owner) VALUES ('old', now() - interval '2 hours', 'x'), ('recent', now() - interval '59 minutes', 'x')"); err != nil {
		t.Fatal(err)
	}
	l := newLocker(t, pool, cfg)
	if _, err := l.Claim(ctx, "new", time.Now()); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, "SELECT job FROM "+table+" ORDER BY job")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(jobs) != "[new recent]" {
		t.Errorf("after pruning: got %v; want [new recent]", jobs)
	}
}

// TestSkewedInstances runs two schedulers sharing the table, their clocks
// 2 s ahead and 2 s behind, each triggering a one-second job: each second
// runs once (gocron #841 runs it on every instance in turn).
func TestSkewedInstances(t *testing.T) {
	_, pool := testSchema(t)
	type run struct {
		at       time.Time
		instance string
	}
	var mu sync.Mutex
	var runs []run
	base := at0
	var clocks []*tasktest.Clock
	var schedulers []*task.Scheduler
	for _, skew := range []time.Duration{2 * time.Second, -2 * time.Second} {
		name := fmt.Sprintf("skew%+v", skew)
		clock := tasktest.NewClock(base.Add(skew))
		exec := loom.Virtual()
		s, err := task.NewScheduler(task.WithClock(clock), task.WithExecutor(exec), task.WithLocker(newLocker(t, pool, taskpg.Config{Owner: name})))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			s.Shutdown(context.Background())
			exec.Shutdown(context.Background())
		})
		err = s.Add("tick", task.Every(time.Second), func(ctx context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			runs = append(runs, run{task.ScheduledAt(ctx).UTC(), name})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		clocks = append(clocks, clock)
		schedulers = append(schedulers, s)
	}
	for _, c := range clocks {
		tasktest.WaitFor(t, "the loops", func() bool { return c.Pending() == 1 })
	}
	const seconds = 20
	for range seconds {
		for i, c := range clocks {
			c.Advance(time.Second)
			tasktest.Settle(t, c, schedulers[i], 1)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	count := map[time.Time]int{}
	for _, r := range runs {
		count[r.at]++
	}
	// The behind instance reached base+18 s; every second up to it was run,
	// by one instance.
	for at := base.Add(time.Second); !at.After(base.Add(seconds*time.Second - 2*time.Second)); at = at.Add(time.Second) {
		if count[at] != 1 {
			t.Errorf("%v ran %d times; want 1", at, count[at])
		}
	}
	for at, n := range count {
		if n > 1 {
			t.Errorf("%v ran %d times", at, n)
		}
	}
	elsewhere := schedulers[1].Jobs()[0].Elsewhere
	if elsewhere == 0 {
		t.Error("the instance behind never found an occurrence claimed: the locker was not consulted")
	}
}

const childEnv = "TASKPG_TEST_CHILD"

// child claims an occurrence in the schema named by its environment, says
// so on stdout, and hangs as a job that never ends: its parent kills it.
func child() {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(databaseURL())
	if err != nil {
		panic(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = os.Getenv(childEnv)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		panic(err)
	}
	lease, _ := time.ParseDuration(os.Getenv("TASKPG_TEST_LEASE"))
	l, err := taskpg.New(ctx, pool, taskpg.Config{Owner: "child", Lease: lease})
	if err != nil {
		panic(err)
	}
	at, err := time.Parse(time.RFC3339, os.Getenv("TASKPG_TEST_AT"))
	if err != nil {
		panic(err)
	}
	if _, err := l.Claim(ctx, "report", at); err != nil {
		panic(err)
	}
	fmt.Println("claimed")
	time.Sleep(time.Minute) // killed long before
	os.Exit(3)
}

// claimAndDie starts a child process that claims (report, at0) and kills it
// with SIGKILL while its "job" runs.
func claimAndDie(t *testing.T, schema string, lease time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+schema, "TASKPG_TEST_LEASE="+lease.String(), "TASKPG_TEST_AT="+at0.Format(time.RFC3339))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "claimed\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: got %q, %v; want claimed", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// TestInstanceDiesAtMostOnce: without a lease, the occurrence a dead
// instance claimed is never run again.
func TestInstanceDiesAtMostOnce(t *testing.T) {
	schema, pool := testSchema(t)
	claimAndDie(t, schema, 0)
	l := newLocker(t, pool, taskpg.Config{Owner: "survivor"})
	ctx := context.Background()
	if _, _, ok, err := l.TakeOver(ctx, "report"); ok || err != nil {
		t.Errorf("take over: got %v, %v; want nothing", ok, err)
	}
	if _, err := l.Claim(ctx, "report", at0); !errors.Is(err, task.ErrClaimed) {
		t.Errorf("claim: got %v; want ErrClaimed", err)
	}
}

// TestInstanceDiesLeaseTakenOver: with a lease, another instance takes the
// occurrence over once the dead one's lease runs out (the database's clock),
// and only one instance does.
func TestInstanceDiesLeaseTakenOver(t *testing.T) {
	schema, pool := testSchema(t)
	const lease = time.Second
	claimAndDie(t, schema, lease)
	a := newLocker(t, pool, taskpg.Config{Owner: "a", Lease: lease})
	b := newLocker(t, pool, taskpg.Config{Owner: "b", Lease: lease})
	ctx := context.Background()
	var got time.Time
	var claim task.Claim
	var winner string
	tasktest.WaitFor(t, "the lease to run out", func() bool {
		for _, l := range []struct {
			name string
			l    *taskpg.Locker
		}{{"a", a}, {"b", b}} {
			at, c, ok, err := l.l.TakeOver(ctx, "report")
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				got, claim, winner = at, c, l.name
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
		return false
	})
	if !got.Equal(at0) {
		t.Errorf("taken over: got %v; want %v", got, at0)
	}
	// The winner holds a live lease now: the other cannot take it too.
	other := map[string]*taskpg.Locker{"a": b, "b": a}[winner]
	if _, _, ok, err := other.TakeOver(ctx, "report"); ok || err != nil {
		t.Errorf("second take over: got %v, %v; want nothing", ok, err)
	}
	if err := claim.Done(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var attempts int
	var owner string
	if err := pool.QueryRow(ctx, "SELECT attempts, owner FROM loom_task_claims WHERE job = 'report'").Scan(&attempts, &owner); err != nil {
		t.Fatal(err)
	}
	if attempts != 2 || owner != winner {
		t.Errorf("row: got %d attempts by %q; want 2 by %q", attempts, owner, winner)
	}
	// A finished occurrence is not taken over again.
	if _, _, ok, _ := other.TakeOver(ctx, "report"); ok {
		t.Error("a finished occurrence was taken over")
	}
}

// TestLeaseRenewed: a job that runs for three leases keeps its claim.
func TestLeaseRenewed(t *testing.T) {
	_, pool := testSchema(t)
	ctx := context.Background()
	const lease = 300 * time.Millisecond
	a := newLocker(t, pool, taskpg.Config{Owner: "a", Lease: lease})
	b := newLocker(t, pool, taskpg.Config{Owner: "b", Lease: lease})
	claim, err := a.Claim(ctx, "long", at0)
	if err != nil {
		t.Fatal(err)
	}
	// Compare with the database's clock: the lease ends in the future
	// after three lease lengths have passed.
	var first time.Time
	pool.QueryRow(ctx, "SELECT lease_until FROM loom_task_claims").Scan(&first)
	tasktest.WaitFor(t, "three lease lengths", func() bool {
		var ok bool
		pool.QueryRow(ctx, "SELECT now() > $1::timestamptz + $2::interval", first, 2*lease).Scan(&ok)
		return ok
	})
	if _, _, ok, err := b.TakeOver(ctx, "long"); ok || err != nil {
		t.Errorf("take over of a renewed claim: got %v, %v; want nothing", ok, err)
	}
	claim.Done(ctx, nil)
}

// TestLostClaim: a holder that stops renewing (here, Close) loses its
// occurrence to another instance, and its Done says so.
func TestLostClaim(t *testing.T) {
	_, pool := testSchema(t)
	ctx := context.Background()
	const lease = 200 * time.Millisecond
	a, err := taskpg.New(ctx, pool, taskpg.Config{Owner: "a", Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	b := newLocker(t, pool, taskpg.Config{Owner: "b", Lease: lease})
	claim, err := a.Claim(ctx, "job", at0)
	if err != nil {
		t.Fatal(err)
	}
	a.Close() // renewals stop
	var taken task.Claim
	tasktest.WaitFor(t, "b to take over", func() bool {
		_, c, ok, err := b.TakeOver(ctx, "job")
		if err != nil {
			t.Fatal(err)
		}
		taken = c
		return ok
	})
	if err := claim.Done(ctx, nil); !errors.Is(err, taskpg.ErrLost) {
		t.Errorf("a's Done: got %v; want ErrLost", err)
	}
	if err := taken.Done(ctx, nil); err != nil {
		t.Errorf("b's Done: %v", err)
	}
}
