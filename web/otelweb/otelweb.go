// Package otelweb traces and measures a web.App with OpenTelemetry: a
// server span per request, named by its route pattern and following the
// HTTP semantic conventions, with incoming W3C trace context honoured; the
// http.server.request.duration histogram by route; and the App's executors
// and the thread watch as Micrometer-named instruments (executor.active,
// executor.queued, …).
//
// It is a package of its own so that only programs that import it link
// OpenTelemetry. It plugs into the App as a web.Starter, the Observer that
// is also told as each request begins:
//
//	tp := sdktrace.NewTracerProvider(…)
//	mp := sdkmetric.NewMeterProvider(…)
//	app, err := web.New()
//	…
//	if _, err := otelweb.Instrument(app, otelweb.WithTracerProvider(tp), otelweb.WithMeterProvider(mp)); err != nil { … }
//
// The span rides in the request's context, so a task.Go, a scheduled run
// or an actor message started from the handler continues the trace
// (task/oteltask, actor/otelactor). See docs/web.md, "OpenTelemetry".
package otelweb

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"

	"github.com/loomrt/loom/internal/otelconfig"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/loomrt/loom/web"
)

// serverKind is made once: an option made per request costs an allocation.
var serverKind = trace.WithSpanKind(trace.SpanKindServer)

// ScopeName is the instrumentation scope of the package's tracer and meter.
const ScopeName = "github.com/loomrt/loom/web/otelweb"

// An Option configures Instrument.
type Option func(*config)

type config struct {
	tp          trace.TracerProvider
	mp          metric.MeterProvider
	propagator  propagation.TextMapPropagator
	noExecutors bool
	noRequests  bool
	rootSample  float64 // 1: every request
}

// WithTracerProvider sets where spans go; default otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets where measurements go; default
// otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithPropagator sets how a trace context is read from request headers;
// default otel.GetTextMapPropagator() if one is set, else W3C Trace Context
// (traceparent, tracestate).
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) { c.propagator = p }
}

// WithRootSampling gives a span to only fraction (0 to 1) of the requests
// that arrive with no trace context, chosen at random, before the tracer
// provider is asked; the default 1 hands every request to the provider,
// whose sampler decides. A request left out costs next to nothing (no span,
// no context, no copy of the request: docs/web.md has the figures), but
// carries no trace context of this service, so downstream services decide
// for themselves, and it has no trace id to log. A request whose headers
// carry a trace context always goes to the provider, which honours the
// caller's decision. With the provider's sampler at ParentBased(AlwaysSample)
// this is a ratio sampler at the cost of a random number per request left
// out.
func WithRootSampling(fraction float64) Option {
	return func(c *config) { c.rootSample = fraction }
}

// WithoutRequestMetrics leaves out the http.server.request.duration
// histogram, for a program whose request figures come from web/metrics:
// one source for each figure.
func WithoutRequestMetrics() Option {
	return func(c *config) { c.noRequests = true }
}

// WithoutExecutorMetrics leaves out the executor and thread watch
// instruments, for a program that reports them otherwise
// (MeasureExecutors) or not at all.
func WithoutExecutorMetrics() Option {
	return func(c *config) { c.noExecutors = true }
}

// Instrumentation is what Instrument installed in an App.
type Instrumentation struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	fields     []string // the header names the propagator reads, canonical

	sampleAll bool
	threshold uint64 // with sampleAll false: a root request is traced if a random uint64 < threshold

	duration metric.Float64Histogram // nil: WithoutRequestMetrics
	attrs    sync.Map                // metricKey → metric.RecordOption
	reg      metric.Registration
}

var _ web.Starter = (*Instrumentation)(nil)

// Instrument has app trace and measure every request, and report its
// executors (App.Executors, read at collection time) and the process's
// thread watch. Call it before serving; Shutdown stops the executor
// reports.
func Instrument(app *web.App, opts ...Option) (*Instrumentation, error) {
	if app == nil {
		return nil, errors.New("otelweb: instrument: nil app")
	}
	c := config{rootSample: 1}
	for _, o := range opts {
		o(&c)
	}
	c.tp = otelconfig.TracerProvider(c.tp)
	c.mp = otelconfig.MeterProvider(c.mp)
	c.propagator = otelconfig.Propagator(c.propagator)
	in := &Instrumentation{
		tracer:     c.tp.Tracer(ScopeName),
		propagator: c.propagator,
	}
	for _, f := range c.propagator.Fields() {
		in.fields = append(in.fields, http.CanonicalHeaderKey(f))
	}
	switch f := c.rootSample; {
	case f >= 1:
		in.sampleAll = true
	case f > 0:
		in.threshold = uint64(f*(1<<53)) << 11 // f × 2⁶⁴, never past it
	}
	meter := c.mp.Meter(ScopeName)
	var err error
	if !c.noRequests {
		in.duration, err = meter.Float64Histogram("http.server.request.duration",
			metric.WithDescription("Duration of HTTP server requests."),
			metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
		if err != nil {
			return nil, err
		}
	}
	if !c.noExecutors {
		in.reg, err = MeasureExecutors(c.mp, app.Executors)
		if err != nil {
			return nil, err
		}
	}
	app.Observe(in)
	return in, nil
}

// Shutdown stops reporting the App's executors; spans and durations go on
// while the App serves.
func (in *Instrumentation) Shutdown() error {
	if in.reg == nil {
		return nil
	}
	return in.reg.Unregister()
}

// Start begins the request's server span, as a child of the trace context
// in its headers if there is one; the App calls it. The span's name is the
// method until Observe names it by route. The sampler sees the span's kind
// and name, not its attributes, which are set once the span is known to be
// recorded: reading them costs a request that is not recorded nothing.
// A request left out by WithRootSampling is observed only to measure it.
func (in *Instrumentation) Start(r *http.Request) (context.Context, bool) {
	ctx := r.Context()
	if !in.sampleAll && rand.Uint64() >= in.threshold && !in.carriesTrace(r) {
		return ctx, in.measured(ctx) // left out
	}
	for _, f := range in.fields {
		if _, ok := r.Header[f]; ok {
			ctx = in.propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
			break
		}
	}
	ctx, _ = in.tracer.Start(ctx, methodName(r.Method), serverKind)
	return ctx, true
}

// carriesTrace reports whether r's headers hold the propagator's first
// field (W3C's traceparent): one map lookup, where a request left out by
// WithRootSampling pays for no more.
func (in *Instrumentation) carriesTrace(r *http.Request) bool {
	if len(in.fields) == 0 {
		return false
	}
	_, ok := r.Header[in.fields[0]]
	return ok
}

// measured reports whether request durations are recorded.
func (in *Instrumentation) measured(ctx context.Context) bool {
	return in.duration != nil && in.duration.Enabled(ctx)
}

// Observe ends the request's span, named by the route pattern, with the
// response's attributes, and records its duration; the App calls it.
func (in *Instrumentation) Observe(r *http.Request, resp web.Response) {
	span := trace.SpanFromContext(r.Context())
	recording := span.IsRecording() && in.started(span)
	measured := in.measured(r.Context())
	if !recording && !measured {
		return
	}
	route := routeOf(r.Pattern)
	if recording {
		endSpan(span, r, route, resp)
	}
	if measured {
		in.duration.Record(r.Context(), resp.Duration.Seconds(), in.recordOption(r, route, resp.Status))
	}
}

// started reports whether span is one Start began, not a span of an
// instrumented server around the App that a request left out by
// WithRootSampling carries: the SDK's spans tell their scope.
func (in *Instrumentation) started(span trace.Span) bool {
	if in.sampleAll {
		return true
	}
	s, ok := span.(interface{ InstrumentationScope() instrumentation.Scope })
	return !ok || s.InstrumentationScope().Name == ScopeName
}

func endSpan(span trace.Span, r *http.Request, route string, resp web.Response) {
	name := methodName(r.Method)
	if route != "" {
		name += " " + route
	}
	span.SetName(name)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	attrs := []attribute.KeyValue{
		methodAttr(r.Method),
		semconv.URLScheme(scheme),
		semconv.URLPath(r.URL.Path),
		semconv.ServerAddress(r.Host),
		semconv.NetworkProtocolVersion(protocolVersion(r)),
		semconv.HTTPResponseStatusCode(resp.Status),
		semconv.HTTPResponseBodySize(int(resp.Bytes)),
	}
	if route != "" {
		attrs = append(attrs, semconv.HTTPRoute(route))
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	if host, _, ok := strings.Cut(r.RemoteAddr, ":"); ok && !strings.Contains(r.RemoteAddr, "[") {
		attrs = append(attrs, semconv.ClientAddress(host))
	}
	if resp.Panicked {
		attrs = append(attrs, semconv.ErrorTypeKey.String("panic"))
	}
	span.SetAttributes(attrs...)
	// A server span is an error for a 5xx only; 4xx are the client's.
	if resp.Status >= 500 || resp.Panicked {
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

// metricKey identifies the attribute set of one duration series.
type metricKey struct {
	route, method, scheme string
	status                int
}

// recordOption returns the duration's attributes for r, made once per
// series so that a request costs a map lookup, not an attribute set.
func (in *Instrumentation) recordOption(r *http.Request, route string, status int) metric.RecordOption {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	k := metricKey{route: route, method: methodName(r.Method), scheme: scheme, status: status}
	if o, ok := in.attrs.Load(k); ok {
		return o.(metric.RecordOption)
	}
	attrs := []attribute.KeyValue{methodAttr(r.Method), semconv.URLScheme(scheme), semconv.HTTPResponseStatusCode(status)}
	if route != "" {
		attrs = append(attrs, semconv.HTTPRoute(route))
	}
	if status >= 500 {
		attrs = append(attrs, semconv.ErrorTypeKey.String(http.StatusText(status)))
	}
	o, _ := in.attrs.LoadOrStore(k, metric.WithAttributeSet(attribute.NewSet(attrs...)))
	return o.(metric.RecordOption)
}

// routeOf returns the path template of a ServeMux pattern ("GET
// /todos/{id}" → "/todos/{id}"); "" for an unmatched request.
func routeOf(pattern string) string {
	if _, path, ok := strings.Cut(pattern, " "); ok {
		pattern = path
	}
	if i := strings.IndexByte(pattern, '/'); i > 0 {
		pattern = pattern[i:] // a host-qualified pattern
	}
	return pattern
}

// methodName keeps span names and metric series bounded when clients send
// odd methods, as the conventions ask: those are "_OTHER", and the span's
// name "HTTP".
func methodName(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "HTTP"
}

func methodAttr(m string) attribute.KeyValue {
	if methodName(m) == "HTTP" {
		return semconv.HTTPRequestMethodOther
	}
	return semconv.HTTPRequestMethodKey.String(m)
}

func protocolVersion(r *http.Request) string {
	switch {
	case r.ProtoMajor == 2:
		return "2"
	case r.ProtoMajor == 3:
		return "3"
	case r.ProtoMinor == 0:
		return "1.0"
	}
	return "1.1"
}
