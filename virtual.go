package loom

import (
	"context"
	"runtime/pprof"
)

// Virtual returns an executor that runs each task on a new goroutine: Go's
// counterpart of a virtual thread per task. It never queues and is never
// full, so Go and Run return ErrClosed after Shutdown and ErrRejected only
// when the thread watch refuses (see ThreadWatch); otherwise nil.
// Go returns at once; Run runs the task on the caller's goroutine, keeping
// the caller's pprof labels, and returns when it does. Started goroutines
// carry the labels executor=<name> and kind=virtual. A panicking task is
// recovered and reported (WithPanicHandler). Run allocates nothing when the
// submit context is context.Background. Safe for concurrent use. It panics if
// given WithQueue or WithFull. Bound it with Limit when something downstream needs
// protecting.
func Virtual(opts ...Option) Executor {
	v := &virtual{}
	v.init(KindVirtual, opts)
	return v
}

type virtual struct {
	unbounded
}

var _ Executor = (*virtual)(nil)

// Go runs t on a new goroutine.
func (v *virtual) Go(ctx context.Context, t Task) error {
	admitted, err := v.admit()
	if err != nil {
		return err
	}
	go v.goroutine(ctx, t, admitted)
	return nil
}

func (v *virtual) goroutine(ctx context.Context, t Task, admitted int64) {
	pprof.SetGoroutineLabels(v.labels)
	defer v.gate.exit() // deferred, in case t calls runtime.Goexit
	v.run(ctx, t, admitted, nil)
}

// Run runs t on the caller's goroutine.
func (v *virtual) Run(ctx context.Context, t Task) error {
	admitted, err := v.admit()
	if err != nil {
		return err
	}
	defer v.gate.exit() // deferred, in case t calls runtime.Goexit
	v.run(ctx, t, admitted, nil)
	return nil
}
