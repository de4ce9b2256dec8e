package otelactor_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/otelactor"
)

func ExampleNew() {
	spans := tracetest.NewInMemoryExporter() // OTLP or stdout in a real program
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())

	ot, err := otelactor.New(otelactor.WithTracerProvider(tp), otelactor.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	sys, err := actor.NewSystem(actor.WithTracer(ot))
	if err != nil {
		fmt.Println(err)
		return
	}
	greeter, err := sys.Spawn(actor.Props{Name: "greeter", New: func() actor.Actor {
		return actor.ReceiveFunc(func(c *actor.Context, msg any) {
			if name, ok := msg.(string); ok {
				c.Respond("hello " + name)
			}
		})
	}})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, request := tp.Tracer("app").Start(context.Background(), "GET /greet") // a request's span, as otelweb starts it
	reply, err := actor.Ask[string](ctx, greeter, "ada")
	request.End()
	fmt.Println(reply, err)
	_ = sys.Shutdown(context.Background()) // the receive's span ends as Receive returns

	parents := map[string]string{}
	names := map[string]string{}
	for _, s := range spans.GetSpans() {
		names[s.SpanContext.SpanID().String()] = s.Name
	}
	for _, s := range spans.GetSpans() {
		parents[s.Name] = names[s.Parent.SpanID().String()]
	}
	for _, name := range []string{"send /greeter", "process /greeter"} {
		fmt.Println(name, "←", parents[name])
	}
	// Output:
	// hello ada <nil>
	// send /greeter ← GET /greet
	// process /greeter ← send /greeter
}
