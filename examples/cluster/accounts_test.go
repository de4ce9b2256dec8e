package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomrt/loom/internal/harness/cmdtest"
)

// databaseURL is the test server: LOOM_TEST_DATABASE_URL, else the local
// one CI starts.
func databaseURL() string {
	if u := os.Getenv("LOOM_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// Accounts are sharded entities whose balances are in PostgreSQL: a node
// holding some is killed with SIGKILL, and each of its accounts answers
// again from a survivor with every acknowledged deposit.
func TestKilledNodeAccountsKeepTheirBalances(t *testing.T) {
	if testing.Short() {
		t.Skip("three node processes, a lease TTL to wait")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, databaseURL())
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL unreachable and CI is set: %v", err)
		}
		t.Skipf("PostgreSQL unreachable (set LOOM_TEST_DATABASE_URL to a reachable database): %v", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "cluster_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		admin.Close(ctx)
	})
	u, err := url.Parse(databaseURL())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	t.Setenv("LOOM_DATABASE_URL", u.String()) // the node processes inherit it

	ns, err := startNATS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	c, err := start(ns.ClientURL(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	base := cmdtest.Serve(t, c.front.app)

	// deposit retries until the account answers: its shard may have no
	// owner yet (the first lease waits one TTL), or may be moving.
	deposit := func(id string, want int) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			status, body := get(t, fmt.Sprintf("%s/deposit?account=%s&amount=1", base, id))
			if status == 200 {
				if !strings.HasPrefix(body, fmt.Sprintf("%s=%d on counter-", id, want)) {
					t.Fatalf("deposit to %s: %q; want balance %d", id, body, want)
				}
				return body[strings.LastIndex(body, " ")+1:]
			}
			if time.Now().After(deadline) {
				t.Fatalf("deposit to %s: %d %q; the front sees members %v and the accounts' shards owned by %v",
					id, status, body, c.front.node.Members(), c.front.shards.Owners("account"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// A worker hosts shards once the others have heard from it: until
	// then the first to start may take them all. Deposit once every worker
	// owns some, so the accounts spread over the three.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		owning := map[string]bool{}
		for _, owner := range c.front.shards.Owners("account") {
			owning[owner] = true
		}
		all := true
		for _, w := range c.workers {
			all = all && owning[w.name]
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the accounts' shards not spread over the three workers in 60 s: owners %v", c.front.shards.Owners("account"))
		}
	}
	accounts := make([]string, 30)
	on := map[string]string{}
	for i := range accounts {
		accounts[i] = fmt.Sprintf("acct%d", i)
		on[accounts[i]] = deposit(accounts[i], 1)
	}
	victim := c.workers[1]
	held := 0
	for _, node := range on {
		if node == victim.name {
			held++
		}
	}
	if held == 0 {
		t.Fatalf("no account on %s: %v", victim.name, on)
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for _, id := range accounts {
		if node := deposit(id, 2); node == victim.name {
			t.Errorf("%s answered from the killed node", id)
		}
	}
	t.Logf("%d of %d accounts were on %s; all answered again with their balances %v after the kill",
		held, len(accounts), victim.name, time.Since(killed).Round(time.Millisecond))
	var total int
	if err := admin.QueryRow(ctx, "SELECT coalesce(sum(balance), 0) FROM "+schema+".cluster_accounts").Scan(&total); err != nil {
		t.Fatal(err)
	}
	if total != 2*len(accounts) {
		t.Errorf("balances in PostgreSQL sum to %d; want %d", total, 2*len(accounts))
	}
}
