package taskpg_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomrt/loom/task"
	"github.com/loomrt/loom/task/taskpg"
)

// Every instance of a service runs this; each second's report is written
// once between them, and again by another instance if its writer dies
// (the lease), so the job must be idempotent.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("LOOM_DATABASE_URL"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	locker, err := taskpg.New(ctx, pool, taskpg.Config{Lease: 30 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer locker.Close()

	s, err := task.NewScheduler(task.WithLocker(locker))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Shutdown(ctx)
	err = s.Add("report", task.Cron("0 * * * *"), func(ctx context.Context) error {
		fmt.Println("report for", task.ScheduledAt(ctx))
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
}
