// Package otelconfig holds the defaults loom's OpenTelemetry packages
// (web/otelweb, task/oteltask, actor/otelactor) share, so that each
// decides them the same way: where an option left a provider or a
// propagator unset, the global one from go.opentelemetry.io/otel.
package otelconfig

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TracerProvider returns tp, or the global provider if tp is nil.
func TracerProvider(tp trace.TracerProvider) trace.TracerProvider {
	if tp == nil {
		return otel.GetTracerProvider()
	}
	return tp
}

// MeterProvider returns mp, or the global provider if mp is nil.
func MeterProvider(mp metric.MeterProvider) metric.MeterProvider {
	if mp == nil {
		return otel.GetMeterProvider()
	}
	return mp
}

// Propagator returns p, or the global propagator if p is nil. The global
// one propagates nothing until a program sets it; W3C trace context is
// then used instead, so that a trace crosses an actor's mailbox or a
// remote node without setup.
func Propagator(p propagation.TextMapPropagator) propagation.TextMapPropagator {
	if p != nil {
		return p
	}
	if p = otel.GetTextMapPropagator(); len(p.Fields()) > 0 {
		return p
	}
	return propagation.TraceContext{}
}
