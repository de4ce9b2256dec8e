package otelactor_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/otelactor"
)

// BenchmarkTellTraced is a Tell to an actor that counts, with no Tracer
// (none); with otelactor, the message outside any trace (untraced); and
// with WithRootSpans, so that each message has its spans, and a tracer
// provider that samples nothing (never) or every span, into an exporter
// that drops them (always). No meter.
func BenchmarkTellTraced(b *testing.B) {
	for _, variant := range []string{"none", "untraced", "never", "always"} {
		b.Run(variant, func(b *testing.B) {
			opts := []actor.Option{actor.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
			if variant != "none" {
				sampler := sdktrace.NeverSample()
				if variant == "always" {
					sampler = sdktrace.AlwaysSample()
				}
				tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSyncer(tracetest.NewNoopExporter()))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				topts := []otelactor.Option{otelactor.WithTracerProvider(tp), otelactor.WithMeterProvider(noop.NewMeterProvider())}
				if variant != "untraced" {
					topts = append(topts, otelactor.WithRootSpans())
				}
				tr, err := otelactor.New(topts...)
				if err != nil {
					b.Fatal(err)
				}
				opts = append(opts, actor.WithTracer(tr))
			}
			sys, err := actor.NewSystem(opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
			var n atomic.Int64
			done := make(chan struct{})
			want := int64(b.N)
			r, err := sys.Spawn(actor.Props{Name: "counter", New: func() actor.Actor {
				return actor.ReceiveFunc(func(c *actor.Context, msg any) {
					if _, ok := msg.(*int); ok && n.Add(1) == want {
						close(done)
					}
				})
			}})
			if err != nil {
				b.Fatal(err)
			}
			msg := new(int)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				r.Tell(msg)
			}
			<-done
		})
	}
}
