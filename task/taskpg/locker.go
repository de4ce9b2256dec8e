// Package taskpg is a task.Locker on PostgreSQL: several instances of a
// service that schedule the same jobs run each occurrence once.
//
// An occurrence is a row keyed by (job name, scheduled time) in one table;
// the instance whose INSERT makes the row runs it, whatever the instances'
// clock skew, since they all compute the same scheduled times. Where a clock
// is needed (leases, pruning) it is the database's.
//
//	pool, _ := pgxpool.New(ctx, os.Getenv("LOOM_DATABASE_URL"))
//	locker, err := taskpg.New(ctx, pool, taskpg.Config{Lease: 30 * time.Second})
//	s, err := task.NewScheduler(task.WithLocker(locker))
//
// Guarantee: by default at most once, an instance that dies while running an
// occurrence leaves it unrun. With a Lease, at least once: the holder renews
// its claim while the job runs, and another instance takes over an
// occurrence whose holder stopped renewing before finishing it; jobs must
// then be idempotent.
//
// A database that cannot answer makes Claim and TakeOver return errors
// wrapping task.ErrUnavailable, which the Scheduler retries; renewals and
// Done retry by themselves. That is a connection refused, dropped or timed
// out, a server shutting down or starting up (SQLSTATE 57P01 to 57P03,
// class 08), out of connections or resources (class 53), a serialization
// or deadlock failure (40001, 40P01), or a read-only standby (25006); any
// other error is the statement's and is not retried. A claim whose
// reply was lost after the server applied it is found claimed on retry
// (task.ErrClaimed): with a Lease nobody renews it, so it is taken over
// once the lease runs out; without one it does not run.
package taskpg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomrt/loom/task"
)

// ErrLost is returned by a claim's Done when another instance took the
// occurrence over because this one's lease ran out: it ran twice.
var ErrLost = errors.New("taskpg: claim lost to another instance")

// Config configures a Locker. The zero value is usable.
type Config struct {
	// Schema holds the table; "" means the first schema of the
	// connections' search_path.
	Schema string
	// Table is the claims table's name; "" means "loom_task_claims".
	Table string
	// Owner names this instance in the claims, and must differ between
	// instances; "" means host name and process id ("web-1:4242").
	Owner string
	// Lease, if positive, makes claims leases renewed every Lease/3 while
	// the job runs, and lets another instance take over an occurrence
	// whose lease ran out unfinished (at least once). Zero means a claim
	// is final (at most once).
	Lease time.Duration
	// Retention is how long claims are kept, by scheduled time; older ones
	// are pruned, at most once a minute. Zero means 7 days.
	Retention time.Duration
}

// A Locker claims occurrences in a PostgreSQL table. It is safe for
// concurrent use; Close stops the renewals of the claims it holds.
type Locker struct {
	pool      *pgxpool.Pool
	table     string // quoted, schema-qualified
	owner     string
	lease     time.Duration
	retention time.Duration

	mu        sync.Mutex
	lastPrune time.Time
	renewals  sync.WaitGroup
	stop      chan struct{}
	closed    bool
}

var _ task.Locker = (*Locker)(nil)

// New returns a Locker on pool and creates its table if it does not exist
// (see Migrate). The pool stays the caller's.
func New(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Locker, error) {
	if cfg.Table == "" {
		cfg.Table = "loom_task_claims"
	}
	if cfg.Owner == "" {
		host, _ := os.Hostname()
		cfg.Owner = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if cfg.Retention == 0 {
		cfg.Retention = 7 * 24 * time.Hour
	}
	if cfg.Lease < 0 || cfg.Retention < 0 {
		return nil, fmt.Errorf("taskpg: negative lease %v or retention %v", cfg.Lease, cfg.Retention)
	}
	table := pgx.Identifier{cfg.Table}
	if cfg.Schema != "" {
		table = pgx.Identifier{cfg.Schema, cfg.Table}
	}
	l := &Locker{pool: pool, table: table.Sanitize(), owner: cfg.Owner, lease: cfg.Lease, retention: cfg.Retention, stop: make(chan struct{})}
	if err := l.Migrate(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// Migrate creates the claims table and its index if they do not exist. It
// is safe to call from several instances at once.
func (l *Locker) Migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		// CREATE TABLE IF NOT EXISTS races with itself; serialise it.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('loom task claims ' || $1))", l.table); err != nil {
			return fmt.Errorf("taskpg: migrate %s: %w", l.table, err)
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+l.table+` (
			job          text        NOT NULL,
			scheduled_at timestamptz NOT NULL,
			owner        text        NOT NULL,
			claimed_at   timestamptz NOT NULL DEFAULT now(),
			lease_until  timestamptz,
			finished_at  timestamptz,
			error        text,
			attempts     integer     NOT NULL DEFAULT 1,
			PRIMARY KEY (job, scheduled_at)
		)`)
		if err != nil {
			return fmt.Errorf("taskpg: migrate %s: %w", l.table, err)
		}
		return nil
	})
}

// Claim claims the occurrence of job at at: it inserts the row, or returns
// task.ErrClaimed if the row exists. An error wraps task.ErrUnavailable
// when the database could not answer (see the package comment).
func (l *Locker) Claim(ctx context.Context, job string, at time.Time) (task.Claim, error) {
	l.prune(ctx)
	var lease any // NULL: no lease
	if l.lease > 0 {
		lease = l.lease
	}
	tag, err := l.pool.Exec(ctx, `INSERT INTO `+l.table+` (job, scheduled_at, owner, lease_until)
		VALUES ($1, $2, $3, now() + $4::interval)
		ON CONFLICT (job, scheduled_at) DO NOTHING`, job, at, l.owner, lease)
	if err != nil {
		return nil, fmt.Errorf("taskpg: claim %q at %s: %w", job, at.Format(time.RFC3339Nano), classify(err))
	}
	if tag.RowsAffected() == 0 {
		return nil, task.ErrClaimed
	}
	return l.hold(job, at), nil
}

// TakeOver claims the oldest occurrence of job whose lease ran out before
// it finished, if the Locker has a Lease. An error wraps
// task.ErrUnavailable when the database could not answer.
func (l *Locker) TakeOver(ctx context.Context, job string) (time.Time, task.Claim, bool, error) {
	if l.lease <= 0 {
		return time.Time{}, nil, false, nil
	}
	var at time.Time
	err := l.pool.QueryRow(ctx, `UPDATE `+l.table+` SET owner = $2, lease_until = now() + $3::interval, attempts = attempts + 1
		WHERE (job, scheduled_at) = (
			SELECT job, scheduled_at FROM `+l.table+`
			WHERE job = $1 AND finished_at IS NULL AND lease_until < now()
			ORDER BY scheduled_at LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING scheduled_at`, job, l.owner, l.lease).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil, false, nil
	}
	if err != nil {
		return time.Time{}, nil, false, fmt.Errorf("taskpg: take over %q: %w", job, classify(err))
	}
	return at, l.hold(job, at), true, nil
}

// hold returns the claim of (job, at), renewing its lease until Done.
func (l *Locker) hold(job string, at time.Time) *claim {
	c := &claim{l: l, job: job, at: at, done: make(chan struct{})}
	if l.lease <= 0 {
		return c
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return c
	}
	l.renewals.Add(1)
	go c.renew()
	return c
}

// prune deletes the claims older than the retention, at most once a minute.
// A failure is left for the next attempt: claims only take room.
func (l *Locker) prune(ctx context.Context) {
	l.mu.Lock()
	if time.Since(l.lastPrune) < time.Minute {
		l.mu.Unlock()
		return
	}
	l.lastPrune = time.Now()
	l.mu.Unlock()
	l.pool.Exec(ctx, `DELETE FROM `+l.table+` WHERE scheduled_at < now() - $1::interval`, l.retention)
}

// Close stops renewing the leases of the claims this Locker holds and waits
// for the renewals to end; those occurrences can then be taken over. It
// does not close the pool.
func (l *Locker) Close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.stop)
	}
	l.mu.Unlock()
	l.renewals.Wait()
}

type claim struct {
	l    *Locker
	job  string
	at   time.Time
	once sync.Once
	done chan struct{}
}

// renew extends the lease every Lease/3 until Done or Close. A renewal the
// database could not answer is tried again sooner, backing off from
// minRetry to maxRetry (or Lease/3 if shorter), so that the lease is
// extended within maxRetry of the server's return.
func (c *claim) renew() {
	defer c.l.renewals.Done()
	period := c.l.lease / 3
	var wait time.Duration // since the last failure; 0 after a success
	timer := time.NewTimer(period)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
		case <-c.done:
			return
		case <-c.l.stop:
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), period)
		_, err := c.l.pool.Exec(ctx, `UPDATE `+c.l.table+` SET lease_until = now() + $4::interval
			WHERE job = $1 AND scheduled_at = $2 AND owner = $3 AND finished_at IS NULL`, c.job, c.at, c.l.owner, c.l.lease)
		timedOut := ctx.Err() != nil
		cancel()
		if err != nil && (timedOut || unavailable(err)) {
			wait = backoff(wait, min(period, maxRetry))
			timer.Reset(wait)
			continue
		}
		wait = 0
		timer.Reset(period)
	}
}

// Done marks the occurrence finished, with err's text if not nil; ErrLost
// if another instance has taken it over meanwhile. With a Lease, a database
// that cannot answer is tried again, backing off, for up to one Lease
// (after which another instance may take the occurrence over anyway), or
// until ctx ends or Close; the error then wraps task.ErrUnavailable.
func (c *claim) Done(ctx context.Context, err error) error {
	c.once.Do(func() { close(c.done) })
	var text any
	if err != nil {
		text = err.Error()
	}
	finish := func() (pgconn.CommandTag, error) {
		return c.l.pool.Exec(ctx, `UPDATE `+c.l.table+` SET finished_at = now(), lease_until = NULL, error = $4
			WHERE job = $1 AND scheduled_at = $2 AND owner = $3`, c.job, c.at, c.l.owner, text)
	}
	tag, dbErr := finish()
	if unavailable(dbErr) && c.l.lease > 0 {
		giveUp := time.NewTimer(c.l.lease)
		defer giveUp.Stop()
		var wait time.Duration
	retry:
		for unavailable(dbErr) {
			wait = backoff(wait, min(c.l.lease/3, maxRetry))
			next := time.NewTimer(wait)
			select {
			case <-next.C:
				tag, dbErr = finish()
			case <-giveUp.C:
				break retry
			case <-ctx.Done():
				break retry
			case <-c.l.stop:
				break retry
			}
			next.Stop()
		}
	}
	switch {
	case dbErr != nil:
		return fmt.Errorf("taskpg: finish %q at %s: %w", c.job, c.at.Format(time.RFC3339Nano), classify(dbErr))
	case tag.RowsAffected() == 0:
		return fmt.Errorf("taskpg: finish %q at %s: %w", c.job, c.at.Format(time.RFC3339Nano), ErrLost)
	}
	return nil
}
