package otelweb_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/otelweb"
)

func ExampleInstrument() {
	spans := tracetest.NewInMemoryExporter() // OTLP or stdout in a real program
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	reader := sdkmetric.NewManualReader() // a periodic reader or a Prometheus exporter in a real program
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	exec := loom.Limit(8, loom.WithName("http"))
	defer exec.Shutdown(context.Background())
	app := web.MustNew(web.WithExecutor(exec))
	defer app.Shutdown(context.Background())
	if _, err := otelweb.Instrument(app, otelweb.WithTracerProvider(tp), otelweb.WithMeterProvider(mp)); err != nil {
		fmt.Println(err)
		return
	}
	app.Get("/todos/{id}", func(w http.ResponseWriter, r *http.Request) error {
		return nil
	})

	req := httptest.NewRequest("GET", "/todos/7", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	app.ServeHTTP(httptest.NewRecorder(), req)

	for _, s := range spans.GetSpans() {
		attrs := attribute.NewSet(s.Attributes...)
		route, _ := attrs.Value("http.route")
		fmt.Println(s.Name, s.SpanKind, route.AsString(), "trace", s.SpanContext.TraceID(), "parent", s.Parent.SpanID())
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch d := m.Data.(type) {
		case metricdata.Histogram[float64]:
			fmt.Println(m.Name, "count", d.DataPoints[0].Count)
		case metricdata.Sum[int64]:
			if m.Name == "executor.completed" {
				fmt.Println(m.Name, d.DataPoints[0].Value)
			}
		case metricdata.Gauge[int64]:
			if m.Name == "executor.pool.size" {
				fmt.Println(m.Name, d.DataPoints[0].Value)
			}
		}
	}
	// Output:
	// GET /todos/{id} server /todos/{id} trace 4bf92f3577b34da6a3ce929d0e0e4736 parent 00f067aa0ba902b7
	// http.server.request.duration count 1
	// executor.pool.size 8
	// executor.completed 1
}
