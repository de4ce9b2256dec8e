package task

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/loomrt/loom"
)

var (
	// ErrNilFunc is the error of a future, or of a scheduled job, given a
	// nil function.
	ErrNilFunc = errors.New("task: nil function")
	// ErrPanicked is wrapped by the error of a function that panicked; the
	// error's text carries the panic value and the stack.
	ErrPanicked = errors.New("task: function panicked")
)

// A Future is the result of a function started by Go: a value and an error
// that become available once the function returns. Its methods are safe
// for concurrent use.
type Future[T any] struct {
	done   chan struct{}
	cancel context.CancelFunc
	// claimed is set by whichever comes first, the function starting or
	// its executor dropping it, so that the future completes once; an
	// OnDrop call passed on to a task the function submits finds it set.
	claimed atomic.Bool
	value   T
	err     error
	// trace is the Tracer Go started the future with, and the context it
	// returned, to end with the future; nil with no Tracer, so that a
	// future untraced carries one pointer more.
	trace *traced
}

type traced struct {
	t   Tracer
	ctx context.Context
}

// Go runs fn on exec and returns its future at once. fn receives a context
// that carries ctx's values and ends when ctx ends or Cancel is called.
//
// A nil exec means the package's default executor (see DefaultExecutor). A
// panic in fn becomes the future's error, wrapping ErrPanicked, with the
// stack in its text. Go does not block unless exec waits for room; if exec
// refuses the function, or ctx ends before it starts, the future is already
// failed with exec's error (errors.Is loom.ErrRejected, loom.ErrClosed) or
// the context's. A nil fn gives a future failed with ErrNilFunc. If exec
// admits fn and then drops it unrun (see loom.OnDrop), the future fails with
// exec's reason: an error wrapping loom.ErrAbandoned when its Shutdown gave
// up, or the context's error when ctx ended (or Cancel was called) while fn
// was queued.
func Go[T any](ctx context.Context, exec loom.Executor, fn func(context.Context) (T, error)) *Future[T] {
	if fn == nil {
		f := &Future[T]{done: make(chan struct{}), cancel: func() {}}
		f.finish(*new(T), ErrNilFunc)
		return f
	}
	if exec == nil {
		var err error
		if exec, err = DefaultExecutor(); err != nil {
			f := &Future[T]{done: make(chan struct{}), cancel: func() {}}
			f.finish(*new(T), err)
			return f
		}
	}
	var trace *traced
	if box := tracer.Load(); box != nil {
		ctx = box.t.Start(ctx, exec)
		trace = &traced{box.t, ctx}
	}
	runCtx, cancel := context.WithCancel(ctx)
	f := &Future[T]{done: make(chan struct{}), cancel: cancel, trace: trace}
	submitCtx := loom.OnDrop(runCtx, func(err error) {
		if f.claimed.CompareAndSwap(false, true) {
			f.finish(*new(T), err)
		}
	})
	err := exec.Go(submitCtx, func(taskCtx context.Context) {
		if !f.claimed.CompareAndSwap(false, true) {
			return
		}
		if err := context.Cause(runCtx); err != nil {
			f.finish(*new(T), err)
			return
		}
		value, err := call(taskCtx, fn)
		f.finish(value, err)
	})
	if err != nil && f.claimed.CompareAndSwap(false, true) {
		f.finish(*new(T), err)
	}
	return f
}

// call runs fn, turning a panic into an error that carries the stack.
func call[T any](ctx context.Context, fn func(context.Context) (T, error)) (value T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}

// panicError is a recovered panic: its value and the stack where it happened.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("task: function panicked: %v\n%s", e.value, e.stack)
}

func (e *panicError) Unwrap() error { return ErrPanicked }

func (f *Future[T]) finish(value T, err error) {
	f.value, f.err = value, err
	f.cancel() // release the context's resources
	if f.trace != nil {
		f.trace.t.End(f.trace.ctx, err)
		f.trace = nil
	}
	close(f.done)
}

// Wait blocks until the function has returned, or ctx ends, and returns its
// value and error; if ctx ends first it returns ctx's error and leaves the
// function running. It may be called many times, from many goroutines.
func (f *Future[T]) Wait(ctx context.Context) (T, error) {
	select {
	case <-f.done:
		return f.value, f.err
	default:
	}
	select {
	case <-f.done:
		return f.value, f.err
	case <-ctx.Done():
		return *new(T), ctx.Err()
	}
}

// Done returns a channel that is closed once the function has returned.
func (f *Future[T]) Done() <-chan struct{} { return f.done }

// Cancel cancels the function's context and returns at once. The future
// completes when the function returns, with whatever it returned; a
// function that has not started yet does not start, and its future fails
// with context.Canceled.
func (f *Future[T]) Cancel() { f.cancel() }

var defaultExecutor = sync.OnceValues(func() (loom.Executor, error) {
	return loom.FromEnv("tasks", "")
})

// DefaultExecutor returns the executor Go uses when given nil: the one
// loom.FromEnv("tasks", "") builds on first use, from LOOM_EXECUTOR_TASKS,
// else LOOM_EXECUTOR, else "virtual". A bad spec is an error naming the
// variable, returned on every call. The executor lives as long as the
// process; ShutdownDefault stops it.
func DefaultExecutor() (loom.Executor, error) { return defaultExecutor() }

// ShutdownDefault shuts down the default executor, if it was built, as
// loom.Executor.Shutdown does; Go with a nil executor then fails with
// loom.ErrClosed.
func ShutdownDefault(ctx context.Context) error {
	exec, err := defaultExecutor()
	if err != nil {
		return nil
	}
	return exec.Shutdown(ctx)
}
