package loom

import (
	"context"
	"errors"
	"time"
)

// A Task is a unit of work handed to an Executor. The context it receives
// carries the values and the cancellation of the context it was submitted
// with, and also ends when Shutdown gives up waiting for it; its
// context.Cause is then ErrAbandoned.
type Task func(ctx context.Context)

// An Executor decides when, and on which goroutine or OS thread, a Task runs:
// how many run at once, how many may wait, and which are rejected.
//
// Every implementation in this package is safe for concurrent use and keeps
// these rules:
//   - a panic in a task is recovered, counted in Stats.Panicked and reported;
//     the process lives. A nil Task panics when it runs, like any call of a
//     nil function, and is reported the same way;
//   - Go and Run return an error only before the task runs, never after:
//     ErrRejected, ErrClosed, or the submitting context's error if it ended
//     while the caller waited for room;
//   - Shutdown loses nothing it admitted: queued tasks run, or are reported as
//     abandoned when Shutdown's context ends first;
//   - the goroutines it starts are gone when Shutdown returns nil; when it
//     gives up, a goroutine whose task ignores the cancellation of its context
//     ends when that task returns.
type Executor interface {
	// Go admits t to run asynchronously and returns without waiting for it.
	// It blocks only under FullWait while there is no room, until there is
	// or ctx ends. It returns nil once t is admitted, or ErrRejected,
	// ErrClosed or ctx.Err() without running t.
	Go(ctx context.Context, t Task) error
	// Run admits t like Go and waits for it to return, running it on the
	// caller's goroutine where the execution model allows it. It returns nil
	// once t has returned (or panicked), or an error as Go does.
	Run(ctx context.Context, t Task) error
	// Shutdown stops admitting tasks and waits for admitted ones to finish.
	// When ctx ends first, it cancels the running tasks' contexts and returns
	// an error, wrapping ErrAbandoned and ctx.Err(), that says how many tasks
	// were abandoned. It may be called more than once, and concurrently.
	Shutdown(ctx context.Context) error
	// Stats returns a snapshot of the executor's counters.
	Stats() Stats
}

var (
	// ErrRejected is returned by Go and Run when the executor is full and
	// its policy is to reject rather than wait.
	ErrRejected = errors.New("loom: executor full: task rejected")
	// ErrClosed is returned by Go and Run after Shutdown has begun.
	ErrClosed = errors.New("loom: executor shut down")
	// ErrAbandoned is wrapped by the error Shutdown returns when its context
	// ends before the admitted tasks finish; it is also the cause
	// (context.Cause) of the cancelled tasks' contexts, and what Run returns
	// for a queued task that Shutdown abandoned before it started.
	ErrAbandoned = errors.New("loom: task abandoned by shutdown")
)

// Stats is a snapshot of an executor's counters. The counters are read one
// after another, not all at one instant: while tasks move, Running and Queued
// may be off by the tasks in motion. Once the executor is idle, Submitted =
// Completed + Abandoned + Expired.
type Stats struct {
	Name string // the executor's name (WithName); "" if unnamed
	Kind Kind   // the execution model: KindVirtual, KindPool, …, KindAdaptive

	Workers       int // the most tasks that run at once; 0 means no bound
	QueueCapacity int // the most admitted tasks that wait to start; 0 means none wait

	Submitted uint64 // tasks admitted by Go or Run
	Completed uint64 // tasks that returned (including those that panicked)
	Rejected  uint64 // calls refused with ErrRejected
	Panicked  uint64 // tasks that panicked
	Abandoned uint64 // admitted tasks Shutdown gave up on before they started
	Expired   uint64 // queued tasks dropped, never run, because their context ended before their turn

	Running int // tasks running now (Virtual, ThreadPerTask: admitted and not yet returned)
	Queued  int // tasks admitted and waiting to run
	// PeakRunning is the most tasks ever running at once. For Pool and
	// Threads it is the most workers busy at once, where a worker is busy
	// from taking a task until it next finds the queue empty; a worker
	// between two tasks may count, so it can exceed the tasks that truly
	// overlapped, but never the number of workers.
	PeakRunning int

	QueueWait Percentiles // time from admission to start
	RunTime   Percentiles // time from start to return

	// Limit is an Adaptive executor's current limit (Workers is its
	// maximum), and TargetLatency the run time at which the limit stops
	// growing (0 while unknown); both are 0 for the other kinds.
	Limit         int
	TargetLatency time.Duration

	// RejectedByWatch counts the calls of Rejected refused by the thread
	// watch (see ThreadWatch), and Threads is the process's thread watch
	// as WatchedThreads reports it (the same for every executor; zero
	// while no watch has run).
	RejectedByWatch uint64
	Threads         ThreadWatchStats
}

// Percentiles summarises a latency distribution. The figures come from a
// sample of one task in 32 (see the package documentation; every task of a
// Limit with WithMaxQueueWait), each within 12.5% of the true value; they are
// zero until a sampled task has been seen.
type Percentiles struct {
	P50, P99 time.Duration
}
