// Package otelactor traces and measures actors with OpenTelemetry, as an
// actor.Tracer: a producer span per message sent (Tell, Send, Ask, and a
// Receive's sends), the child of the sender's context, and a consumer span
// per message received, the child of its send, so a trace runs from a web
// request through the actors it reaches, across processes where
// actor/remote carries the context in its headers. Its figures:
// actor.mailbox.size, actor.mailbox.time, actor.processing.duration and
// actor.errors, by the actor's class (its path, generated names folded).
//
// It is a package of its own so that only programs that import it link
// OpenTelemetry:
//
//	ot, err := otelactor.New(otelactor.WithTracerProvider(tp), otelactor.WithMeterProvider(mp))
//	…
//	sys, err := actor.NewSystem(actor.WithTracer(ot))
//
// Each message costs its two spans and a few allocations, sampled or not;
// see docs/actor.md.
package otelactor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/loomrt/loom/internal/otelconfig"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/loomrt/loom/actor"
)

// ScopeName is the instrumentation scope of the package's tracer and meter.
const ScopeName = "github.com/loomrt/loom/actor/otelactor"

// An Option configures New.
type Option func(*config)

type config struct {
	tp         trace.TracerProvider
	mp         metric.MeterProvider
	propagator propagation.TextMapPropagator
	roots      bool
}

// WithTracerProvider sets where spans go; default otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets where measurements go; default
// otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithPropagator sets how a transport's headers carry the context (Inject,
// Extract); default otel.GetTextMapPropagator() if one is set, else W3C
// Trace Context.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) { c.propagator = p }
}

// WithRootSpans traces messages sent outside any trace too (a Ref.Tell
// from a plain goroutine, a timer's), each the root of a trace of its own;
// by default such a message gets no spans, so that only messages sent for a
// traced request, task or run are traced.
func WithRootSpans() Option { return func(c *config) { c.roots = true } }

// Tracer is the actor.Tracer. It is safe for concurrent use.
type Tracer struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	roots      bool

	size       metric.Int64UpDownCounter
	wait       metric.Float64Histogram
	processing metric.Float64Histogram
	errs       metric.Int64Counter

	classes sync.Map // class → *classInfo
}

// classInfo is what a message to one class of actor needs, made once.
type classInfo struct {
	name, send, process string
	opt                 metric.MeasurementOption
}

var _ actor.Tracer = (*Tracer)(nil)

// New returns the Tracer; an error if an instrument cannot be made.
func New(opts ...Option) (*Tracer, error) {
	c := config{}
	for _, o := range opts {
		o(&c)
	}
	c.tp = otelconfig.TracerProvider(c.tp)
	c.mp = otelconfig.MeterProvider(c.mp)
	c.propagator = otelconfig.Propagator(c.propagator)
	m := c.mp.Meter(ScopeName)
	t := &Tracer{tracer: c.tp.Tracer(ScopeName), propagator: c.propagator, roots: c.roots}
	var err1, err2, err3, err4 error
	t.size, err1 = m.Int64UpDownCounter("actor.mailbox.size", metric.WithUnit("{message}"),
		metric.WithDescription("Messages queued in actors' mailboxes, by actor class."))
	t.wait, err2 = m.Float64Histogram("actor.mailbox.time", metric.WithUnit("s"),
		metric.WithDescription("Time from a message's send to its receive, by actor class."))
	t.processing, err3 = m.Float64Histogram("actor.processing.duration", metric.WithUnit("s"),
		metric.WithDescription("Time Receive took for a message, by actor class."))
	t.errs, err4 = m.Int64Counter("actor.errors", metric.WithUnit("{message}"),
		metric.WithDescription("Messages whose Receive panicked, by actor class."))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, err
	}
	return t, nil
}

var (
	producer = trace.WithSpanKind(trace.SpanKindProducer)
	consumer = trace.WithSpanKind(trace.SpanKindConsumer)
)

// sent is the context a message carries when it is measured: the send's
// span, if it has one, and when it was sent.
type sent struct {
	context.Context
	at time.Time
}

// received is the context of a Receive that is traced or measured: the
// receive's span, if it has one, and when it began. Done finds it by type,
// never through the context's parents.
type received struct {
	context.Context
	span trace.Span // nil: not traced
	at   time.Time
}

// measured reports whether the figures are recorded.
func (t *Tracer) measured(ctx context.Context) bool {
	return t.size.Enabled(ctx) || t.processing.Enabled(ctx)
}

// Send records the send's span, ended at once, when ctx carries a trace
// (or WithRootSpans), and counts the message in its recipient's mailbox.
func (t *Tracer) Send(ctx context.Context, e actor.Envelope) context.Context {
	traced := t.roots || trace.SpanContextFromContext(ctx).IsValid()
	measured := t.measured(ctx)
	if !traced && !measured {
		return ctx
	}
	class := t.class(e.To.Path())
	if traced {
		var span trace.Span
		ctx, span = t.tracer.Start(ctx, class.send, producer)
		if span.IsRecording() {
			span.SetAttributes(messagingAttrs(e, class.name, "send")...)
		}
		span.End()
	}
	if !measured {
		return ctx
	}
	t.size.Add(ctx, 1, class.opt)
	return &sent{Context: ctx, at: time.Now()}
}

// Receive begins the receive's span, a child of the send's, when the
// message was traced.
func (t *Tracer) Receive(ctx context.Context, e actor.Envelope) context.Context {
	traced := trace.SpanContextFromContext(ctx).IsValid()
	measured := t.measured(ctx)
	if !traced && !measured {
		return ctx
	}
	class := t.class(e.To.Path())
	now := time.Now()
	if measured {
		t.size.Add(ctx, -1, class.opt)
		if s, ok := ctx.(*sent); ok {
			t.wait.Record(ctx, now.Sub(s.at).Seconds(), class.opt)
		}
	}
	var span trace.Span
	if traced {
		ctx, span = t.tracer.Start(ctx, class.process, consumer)
		if span.IsRecording() {
			span.SetAttributes(messagingAttrs(e, class.name, "process")...)
		}
	}
	if span == nil && !measured {
		return ctx
	}
	return &received{Context: ctx, span: span, at: now}
}

// Done ends the receive's span, with the panic if Receive panicked, and
// records the processing time; for a message never received, it takes it
// out of the mailbox's count.
func (t *Tracer) Done(ctx context.Context, e actor.Envelope, failure any) {
	r, ok := ctx.(*received)
	if !ok {
		if _, counted := ctx.(*sent); counted {
			t.size.Add(ctx, -1, t.class(e.To.Path()).opt) // left the mailbox unreceived
		}
		return
	}
	if r.span != nil {
		if failure != nil && r.span.IsRecording() {
			r.span.SetStatus(codes.Error, fmt.Sprint(failure))
			r.span.SetAttributes(attribute.String("error.type", "panic"))
		}
		r.span.End()
	}
	if t.measured(ctx) {
		opt := t.class(e.To.Path()).opt
		if failure != nil {
			t.errs.Add(ctx, 1, opt)
		}
		t.processing.Record(ctx, time.Since(r.at).Seconds(), opt)
	}
}

// Inject writes ctx's trace context into carrier, for a transport.
func (t *Tracer) Inject(ctx context.Context, carrier actor.Carrier) {
	t.propagator.Inject(ctx, carrier)
}

// Extract returns ctx continuing the trace in carrier.
func (t *Tracer) Extract(ctx context.Context, carrier actor.Carrier) context.Context {
	return t.propagator.Extract(ctx, carrier)
}

func messagingAttrs(e actor.Envelope, class, op string) []attribute.KeyValue {
	kv := []attribute.KeyValue{
		attribute.String("messaging.system", "loom"),
		attribute.String("messaging.operation.type", op),
		attribute.String("messaging.destination.name", class),
		attribute.String("loom.actor.path", e.To.Path()),
		attribute.String("loom.message.type", fmt.Sprintf("%T", e.Message)),
	}
	if e.Ask {
		kv = append(kv, attribute.Bool("loom.message.ask", true))
	}
	return kv
}

// class returns what a message to the actor at path needs: its class's
// span names and measurement option, made once per class.
func (t *Tracer) class(path string) *classInfo {
	name := Class(path)
	if c, ok := t.classes.Load(name); ok {
		return c.(*classInfo)
	}
	c, _ := t.classes.LoadOrStore(name, &classInfo{name: name, send: "send " + name, process: "process " + name,
		opt: metric.WithAttributeSet(attribute.NewSet(attribute.String("actor.class", name)))})
	return c.(*classInfo)
}

// Class is the class of the actor at path, which spans and figures are
// named by: the path with each generated name ("$1", "$2", …) folded to
// "$", so that actors spawned without a name share one series.
func Class(path string) string {
	if !strings.Contains(path, "$") {
		return path
	}
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "$") {
			parts[i] = "$"
		}
	}
	return strings.Join(parts, "/")
}
