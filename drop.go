package loom

import (
	"context"
	"sync/atomic"
)

// OnDrop returns a copy of ctx that carries f, for an executor to call when
// it drops a task submitted with that context (or one derived from it)
// after admitting it, so that the task never runs: with an error wrapping
// ErrAbandoned when Shutdown gave up on it while it was queued, or with the
// context's error (context.Canceled, context.DeadlineExceeded) when the
// context ended before its turn (Stats.Abandoned, Stats.Expired).
//
// For each such task f is called exactly once, never for a task that runs
// nor for one that Go or Run refused. It runs on the goroutine that drops the
// task (a worker, a task's goroutine, the caller of Run or of Shutdown),
// holding none of the executor's locks, before Shutdown returns; it should
// return quickly. A panic in f is recovered and reported to the executor's panic handler (WithPanicHandler).
// What Go and Run return is unchanged. A task's own context carries f too:
// submit further tasks with OnDrop(ctx, nil) to stop passing it on. An
// executor finds f only when it drops a task, so an unused f costs nothing;
// a context made once and submitted with again and again (an actor's
// mailbox turns) costs no allocation per task either, when ctx cannot be
// cancelled.
func OnDrop(ctx context.Context, f func(err error)) context.Context {
	return &dropContext{Context: ctx, f: f}
}

type dropKey struct{}

// dropContext is OnDrop's context. It keeps the task context an executor
// last made from it (see core.detach), which tasks submitted with it share.
type dropContext struct {
	context.Context
	f    func(error)
	task atomic.Pointer[detached]
}

func (d *dropContext) Value(key any) any {
	if _, ok := key.(dropKey); ok {
		return d.f
	}
	return d.Context.Value(key)
}
