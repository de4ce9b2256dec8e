package oteltask_test

import (
	"context"
	"fmt"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
	"github.com/loomrt/loom/task/oteltask"
)

func ExampleNew() {
	spans := tracetest.NewInMemoryExporter() // OTLP or stdout in a real program
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())

	ot, err := oteltask.New(oteltask.WithTracerProvider(tp), oteltask.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	task.SetTracer(ot) // every task.Go in the process
	defer task.SetTracer(nil)
	s, err := task.NewScheduler(task.WithHooks(ot.Hooks())) // this scheduler's runs
	if err != nil {
		fmt.Println(err)
		return
	}

	// A task.Go from a request's handler: its span is the request's child,
	// and the function's context carries it.
	exec := loom.Virtual(loom.WithName("reports"))
	defer exec.Shutdown(context.Background())
	ctx, request := tp.Tracer("app").Start(context.Background(), "GET /reports")
	_, _ = task.Go(ctx, exec, func(ctx context.Context) (int, error) {
		_, work := tp.Tracer("app").Start(ctx, "render")
		work.End()
		return 0, nil
	}).Wait(ctx)
	request.End()

	// A scheduled run: a root span of its own, named by its job.
	ran := make(chan struct{})
	_ = s.Add("nightly", task.At(time.Now()), func(context.Context) error {
		close(ran)
		return nil
	})
	<-ran
	_ = s.Shutdown(context.Background())

	names := map[string]string{}
	for _, sp := range spans.GetSpans() {
		names[sp.SpanContext.SpanID().String()] = sp.Name
	}
	for _, sp := range spans.GetSpans() {
		parent, ok := names[sp.Parent.SpanID().String()]
		if !ok {
			parent = "(root)"
		}
		fmt.Println(sp.Name, "←", parent)
	}
	// Output:
	// render ← task.Go
	// task.Go ← GET /reports
	// GET /reports ← (root)
	// nightly ← (root)
}
