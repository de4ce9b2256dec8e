package otelconfig

import (
	"slices"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
)

// TestPropagator checks the three sources of a propagator, in order: the
// option's, the global one once a program sets it, and W3C trace context
// while the global one propagates nothing.
func TestPropagator(t *testing.T) {
	if got := Propagator(nil).Fields(); !slices.Contains(got, "traceparent") {
		t.Errorf("Propagator(nil) with no global propagator set: fields %v; want W3C trace context's", got)
	}
	old := otel.GetTextMapPropagator()
	defer otel.SetTextMapPropagator(old)
	otel.SetTextMapPropagator(propagation.Baggage{})
	if got := Propagator(nil).Fields(); !slices.Equal(got, []string{"baggage"}) {
		t.Errorf("Propagator(nil) with Baggage set globally: fields %v; want [baggage]", got)
	}
	own := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	if got := Propagator(own).Fields(); len(got) != 3 {
		t.Errorf("Propagator(own): fields %v; want the option's own three", got)
	}
}

func TestProviders(t *testing.T) {
	if TracerProvider(nil) != otel.GetTracerProvider() {
		t.Error("TracerProvider(nil) is not the global provider")
	}
	if MeterProvider(nil) != otel.GetMeterProvider() {
		t.Error("MeterProvider(nil) is not the global provider")
	}
	tp := noop.NewTracerProvider()
	if TracerProvider(tp) != tp {
		t.Error("TracerProvider(tp) is not tp")
	}
}
