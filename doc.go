// Package loom decides where work runs. Every place that runs user code — an
// HTTP handler, an async task, a scheduled job, an actor's mailbox — runs on a
// named Executor, and one setting, LOOM_EXECUTOR, switches a whole
// application between execution models:
//
//   - Virtual: a new goroutine per task (Java's virtual thread per task);
//   - Pool: N long-lived workers and a queue (a fixed platform-thread pool);
//   - Threads: N workers, each locked to its own OS thread;
//   - ThreadPerTask: a new OS thread per task (the control experiment);
//   - Limit: a goroutine per task, at most N at once, the rest queued or shed;
//   - Adaptive: Limit with N following measured latency (TCP Vegas).
//
// Blocking bounds the calls that hold OS threads (cgo, raw system calls), and
// a ThreadWatch bounds the threads the executors' tasks can take, shedding
// load before the runtime's "thread exhaustion" kills the process.
//
// A short example:
//
//	exec, err := loom.FromEnv("http", "") // LOOM_EXECUTOR_HTTP, else LOOM_EXECUTOR, else "virtual"
//	if err != nil {
//		return err // names the variable and the bad part of its spec
//	}
//	defer exec.Shutdown(context.Background())
//	if err := exec.Go(ctx, func(ctx context.Context) { work(ctx) }); errors.Is(err, loom.ErrRejected) {
//		// shed: answer 503
//	}
//
// Every executor is safe for concurrent use, recovers and reports panics,
// returns errors from Go and Run only before a task runs, and leaves no
// goroutine behind after Shutdown. Goroutines an executor starts carry the
// pprof labels executor=<name> and kind=<kind>, so a CPU or goroutine profile
// shows which executor ran what.
//
// Stats reports counters and the p50/p99 of queue wait and run time. To keep
// the clock off the hot path, one task in 32 is timed (picked so that no
// period in the workload lines up with the sample); the others only
// increment counters.
package loom
