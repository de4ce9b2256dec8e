// Package task runs functions asynchronously with futures, and runs jobs on a
// schedule (cron expressions, fixed rate, fixed delay, one-shot) on loom
// executors: Spring's @Async and @Scheduled for Go services.
//
// Go starts a function on an executor and returns its Future; All and Any
// combine futures. A Scheduler triggers jobs and runs each occurrence on its
// executor; with a Locker (see the taskpg sub-package for PostgreSQL) each
// occurrence runs once across several instances of a service.
//
//	f := task.Go(ctx, nil, func(ctx context.Context) (int, error) { return 42, nil })
//	v, err := f.Wait(ctx)
//
// The default executors follow loom's one switch: LOOM_EXECUTOR_TASKS for
// futures and LOOM_EXECUTOR_SCHEDULER for jobs, else LOOM_EXECUTOR, else
// "virtual". docs/task.md maps Spring's and gocron's features onto this
// package and states its guarantees.
package task
