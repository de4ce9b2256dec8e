// Command scheduled runs a job named tick every second with package task.
// With LOOM_DATABASE_URL set it records each run as (job, scheduled_at,
// instance) in the table loom_runs, and claims each second in PostgreSQL
// first, so that several instances run each second once between them; an
// instance that dies mid-run has its second run again by another once its
// lease runs out. Without it, each run is a log line.
//
//	go run ./examples/scheduled
//	LOOM_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test go run ./examples/scheduled -instance a &
//	LOOM_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test go run ./examples/scheduled -instance b
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomrt/loom/task"
	"github.com/loomrt/loom/task/taskpg"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "scheduled:", err)
		os.Exit(1)
	}
}

// run schedules tick and runs it until ctx ends.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("scheduled", flag.ContinueOnError)
	host, _ := os.Hostname()
	instance := flags.String("instance", fmt.Sprintf("%s:%d", host, os.Getpid()), "this instance's name, recorded with each run")
	lease := flags.Duration("lease", 2*time.Second, "with a database: how long a dead instance's second waits before another runs it (0: never, at most once)")
	work := flags.Duration("work", 0, "how long each tick works before it records its run")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("instance", *instance)

	var opts []task.Option
	tick := func(ctx context.Context) error {
		log.Info("tick", "scheduled_at", task.ScheduledAt(ctx).Format(time.RFC3339))
		return nil
	}
	if url := os.Getenv("LOOM_DATABASE_URL"); url != "" {
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return fmt.Errorf("LOOM_DATABASE_URL: %w", err)
		}
		defer pool.Close()
		if err := createRuns(ctx, pool); err != nil {
			return err
		}
		locker, err := taskpg.New(ctx, pool, taskpg.Config{Owner: *instance, Lease: *lease})
		if err != nil {
			return err
		}
		defer locker.Close()
		opts = append(opts, task.WithLocker(locker))
		tick = func(ctx context.Context) error {
			select {
			case <-time.After(*work):
			case <-ctx.Done():
				return ctx.Err()
			}
			return record(ctx, pool, *instance)
		}
	}

	s, err := task.NewScheduler(append(opts, task.WithLogger(log))...)
	if err != nil {
		return err
	}
	if err := s.Add("tick", task.Every(time.Second), tick); err != nil {
		return err
	}
	log.Info("running tick every second; stop with SIGINT or SIGTERM")
	<-ctx.Done()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return s.Shutdown(shutdownCtx)
}

// createRuns creates loom_runs in the first schema of the search path.
func createRuns(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Instances starting together would race on CREATE TABLE IF NOT EXISTS.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('loom examples/scheduled'))"); err != nil {
			return fmt.Errorf("create loom_runs: %w", err)
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS loom_runs (
			job          text        NOT NULL,
			scheduled_at timestamptz NOT NULL,
			instance     text        NOT NULL,
			ran_at       timestamptz NOT NULL DEFAULT now()
		)`)
		if err != nil {
			return fmt.Errorf("create loom_runs: %w", err)
		}
		return nil
	})
}

// record inserts the run. A second taken over from a dead instance may have
// been recorded before it died: at least once asks jobs to be idempotent,
// so the insert is skipped if the row is there.
func record(ctx context.Context, pool *pgxpool.Pool, instance string) error {
	_, err := pool.Exec(ctx, `INSERT INTO loom_runs (job, scheduled_at, instance)
		SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM loom_runs WHERE job = $1 AND scheduled_at = $2)`,
		task.JobName(ctx), task.ScheduledAt(ctx), instance)
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("record run: %w", err)
	}
	return err
}
