package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/loomrt/loom/internal/harness/cmdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func databaseURL() string {
	if u := os.Getenv("LOOM_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

func TestRunWithoutDatabase(t *testing.T) {
	t.Setenv("LOOM_DATABASE_URL", "")
	cmdtest.StopsCleanly(t, run)
	cmdtest.RejectsStrayArgument(t, run)
}

// TestThreeInstances builds the command, runs three instances on one new
// schema, kills one with SIGKILL while the others run, and checks loom_runs:
// no second recorded twice, and none missing from the first to the last.
// It waits on counts in the table, never on durations of its own: about
// 8 s of wall time.
func TestThreeInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three processes")
	}
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "scheduled")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	admin, err := pgx.Connect(ctx, databaseURL())
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL unreachable and CI is set: %v", err)
		}
		t.Skipf("PostgreSQL unreachable (set LOOM_TEST_DATABASE_URL to a reachable database): %v", err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "scheduled_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	}()
	u, err := url.Parse(databaseURL())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()

	var cmds []*exec.Cmd
	var logs []*bytes.Buffer
	for _, name := range []string{"a", "b", "c"} {
		// a's runs last until it is killed: the claim it holds when killed
		// is one it has not finished, however late the kill comes.
		work := "300ms"
		if name == "a" {
			work = "1h"
		}
		cmd := exec.Command(bin, "-instance", name, "-lease", "1s", "-work", work)
		cmd.Env = append(os.Environ(), "LOOM_DATABASE_URL="+u.String(), "LOOM_EXECUTOR=")
		var log bytes.Buffer
		cmd.Stderr = &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, logs = append(cmds, cmd), append(logs, &log)
	}
	defer func() {
		for _, cmd := range cmds {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
				cmd.Wait()
			}
		}
		if t.Failed() {
			for i, l := range logs {
				t.Logf("instance %d:\n%s", i, l)
			}
		}
	}()

	// seconds returns how many distinct seconds are recorded, the last one,
	// and how many of its seconds instance a recorded.
	seconds := func() (n int, last time.Time, byA int) {
		admin.QueryRow(ctx, "SELECT count(DISTINCT scheduled_at), coalesce(max(scheduled_at), 'epoch'), count(*) FILTER (WHERE instance = 'a') FROM "+schema+".loom_runs").Scan(&n, &last, &byA)
		return n, last, byA
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("three seconds recorded", func() bool { n, _, _ := seconds(); return n >= 3 })

	// Kill a in the middle of a run: it holds the claim of a second it has
	// not recorded yet.
	var held time.Time
	waitFor("a to hold a claim", func() bool {
		err := admin.QueryRow(ctx, "SELECT scheduled_at FROM "+schema+".loom_task_claims WHERE owner = 'a' AND finished_at IS NULL").Scan(&held)
		return err == nil
	})
	if err := cmds[0].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmds[0].Wait()
	var killedAt time.Time
	admin.QueryRow(ctx, "SELECT now()").Scan(&killedAt)
	// Long enough after the kill for a's lease (1 s) to run out and its
	// second, if any, to be taken over.
	waitFor("four seconds past the kill", func() bool { _, last, _ := seconds(); return last.After(killedAt.Add(4 * time.Second)) })

	for _, cmd := range cmds[1:] {
		cmd.Process.Signal(syscall.SIGTERM)
	}
	for i, cmd := range cmds[1:] {
		if err := cmd.Wait(); err != nil {
			t.Errorf("instance %d after SIGTERM: %v", i+1, err)
		}
	}

	var dups int
	admin.QueryRow(ctx, "SELECT count(*) FROM (SELECT 1 FROM "+schema+".loom_runs GROUP BY job, scheduled_at HAVING count(*) > 1) d").Scan(&dups)
	if dups != 0 {
		t.Errorf("%d seconds recorded more than once", dups)
	}
	var first, last time.Time
	var distinct int
	admin.QueryRow(ctx, "SELECT min(scheduled_at), max(scheduled_at), count(DISTINCT scheduled_at) FROM "+schema+".loom_runs").Scan(&first, &last, &distinct)
	if want := int(last.Sub(first)/time.Second) + 1; distinct != want {
		t.Errorf("from %v to %v: %d seconds recorded; want %d, none missing", first, last, distinct, want)
	}
	// a's second was run again by another instance.
	var attempts int
	var owner string
	admin.QueryRow(ctx, "SELECT attempts, owner FROM "+schema+".loom_task_claims WHERE job = 'tick' AND scheduled_at = $1", held).Scan(&attempts, &owner)
	if attempts != 2 || owner == "a" {
		t.Errorf("the second a held when killed (%v): %d attempts, last by %q; want 2, by b or c", held, attempts, owner)
	}
	var instances int
	admin.QueryRow(ctx, "SELECT count(DISTINCT instance) FROM "+schema+".loom_runs").Scan(&instances)
	t.Logf("%d seconds from %s to %s, by %d instances", distinct, first.Format(time.TimeOnly), last.Format(time.TimeOnly), instances)
}
