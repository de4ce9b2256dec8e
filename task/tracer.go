package task

import (
	"context"
	"sync/atomic"

	"github.com/loomrt/loom"
)

// A Tracer follows the functions Go runs: the hook a tracing package
// (task/oteltask) installs with SetTracer, so that package task links no
// tracing library. Without one, Go costs one atomic load more, and its
// future one pointer.
//
// Go already hands fn a context that carries the caller's values, a trace's
// span among them, so work fn does is traced as the caller's child with no
// Tracer; a Tracer adds a span of the task's own, which covers its wait in
// the executor's queue too.
type Tracer interface {
	// Start is called by Go on the calling goroutine before fn is
	// submitted to exec; fn's context derives from what it returns.
	Start(ctx context.Context, exec loom.Executor) context.Context
	// End is called once, with the context Start returned and the
	// future's error, as the future completes: when fn returns, or when
	// exec refuses or drops it.
	End(ctx context.Context, err error)
}

var tracer atomic.Pointer[tracerBox]

type tracerBox struct{ t Tracer }

// SetTracer installs t as the process's Tracer of Go, replacing the one
// before; nil removes it. Futures started before keep the Tracer they
// started with.
func SetTracer(t Tracer) {
	if t == nil {
		tracer.Store(nil)
		return
	}
	tracer.Store(&tracerBox{t})
}
