package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/sharding"
	"github.com/loomrt/loom/web"
)

// Account messages, in JSON on the wire.
type (
	// deposit adds Amount to the account's balance.
	deposit struct{ Amount int }
	// balance is an account's balance after a deposit, and the node its
	// activation runs on; Error says why the deposit failed.
	balance struct {
		Account string
		Balance int
		Node    string
		Error   string `json:",omitempty"`
	}
)

// openAccounts connects to LOOM_DATABASE_URL and makes the accounts
// table; nil when the variable is empty (the balances then live in the
// activations only).
func openAccounts(ctx context.Context) (*pgxpool.Pool, error) {
	url := os.Getenv("LOOM_DATABASE_URL")
	if url == "" {
		return nil, nil
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("LOOM_DATABASE_URL: %w", err)
	}
	// Every node creates the table if it is missing; the advisory lock
	// keeps two from racing in PostgreSQL's catalog.
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('cluster_accounts'))`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS cluster_accounts (id text PRIMARY KEY, balance bigint NOT NULL)`)
		return err
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("create cluster_accounts: %w", err)
	}
	return pool, nil
}

// accountKind is the account entities a node hosts: each one an actor
// with its balance, loaded from pool when it activates.
func accountKind(node string, pool *pgxpool.Pool) sharding.Kind {
	return sharding.Kind{
		Name:           "account",
		New:            func(id string) actor.Actor { return &account{pool: pool, node: node, id: id} },
		PassivateAfter: 10 * time.Minute,
	}
}

// account is one account's activation.
type account struct {
	pool     *pgxpool.Pool
	node, id string
	balance  int
}

var _ sharding.Persistent = (*account)(nil)

// Load reads the balance: an account never written has 0.
func (a *account) Load(ctx context.Context, id string) error {
	if a.pool == nil {
		return nil
	}
	err := a.pool.QueryRow(ctx, `SELECT balance FROM cluster_accounts WHERE id = $1`, id).Scan(&a.balance)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}

// Save has nothing to write: each deposit was written before it was
// acknowledged.
func (a *account) Save(context.Context, string) error { return nil }

func (a *account) Receive(c *actor.Context, msg any) {
	d, ok := msg.(deposit)
	if !ok {
		return
	}
	next := a.balance + d.Amount
	if a.pool != nil {
		ctx, cancel := context.WithTimeout(c.Context(), 5*time.Second)
		defer cancel()
		if _, err := a.pool.Exec(ctx, `INSERT INTO cluster_accounts (id, balance) VALUES ($1, $2)
			ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance`, a.id, next); err != nil {
			c.Respond(balance{Account: a.id, Balance: a.balance, Node: a.node, Error: err.Error()})
			return
		}
	}
	a.balance = next
	c.Respond(balance{Account: a.id, Balance: a.balance, Node: a.node})
}

// deposit serves /deposit?account=…&amount=…: it asks the account's
// entity, wherever it is active, and prints its new balance.
func (f *front) deposit(w http.ResponseWriter, r *http.Request) error {
	id, err := web.Query(r, "account").Required()
	if err != nil {
		return err
	}
	text, err := web.Query(r, "amount").Required()
	if err != nil {
		return err
	}
	amount, err := strconv.Atoi(text)
	if err != nil {
		return web.Errorf(http.StatusBadRequest, "amount %q: not an integer", text)
	}
	ref, err := f.shards.Entity("account", id)
	if err != nil {
		return web.Errorf(http.StatusServiceUnavailable, "%v", err)
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	b, err := actor.Ask[balance](ctx, ref, deposit{Amount: amount})
	switch {
	case err != nil:
		return web.Errorf(http.StatusServiceUnavailable, "%v", err)
	case b.Error != "":
		return web.Errorf(http.StatusServiceUnavailable, "account %s: %s", id, b.Error)
	}
	_, err = fmt.Fprintf(w, "%s=%d on %s\n", b.Account, b.Balance, b.Node)
	return err
}
