package otelactor_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/otelactor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type telemetry struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t *testing.T) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

// byClass returns the metric called name's points by actor.class: a sum's
// value, a histogram's count.
func (tel *telemetry) byClass(t *testing.T, name string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value("actor.class")
					got[v.AsString()] = p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value("actor.class")
					got[v.AsString()] = int64(p.Count)
				}
			}
		}
	}
	return got
}

func newSystem(t *testing.T, tr actor.Tracer) *actor.System {
	t.Helper()
	sys, err := actor.NewSystem(actor.WithTracer(tr), actor.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return sys
}

func spawn(t *testing.T, sys *actor.System, name string, f func(c *actor.Context, msg any)) actor.Ref {
	t.Helper()
	r, err := sys.Spawn(actor.Props{Name: name, New: func() actor.Actor { return actor.ReceiveFunc(f) }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSpansFollowMessages: an Ask from a traced caller is a send span, the
// caller's child, and a receive span, the send's child; a message sent from
// that Receive continues the trace the same way.
func TestSpansFollowMessages(t *testing.T) {
	tel := newTelemetry(t)
	tr, err := otelactor.New(otelactor.WithTracerProvider(tel.tp), otelactor.WithMeterProvider(tel.mp))
	if err != nil {
		t.Fatal(err)
	}
	sys := newSystem(t, tr)
	got := make(chan struct{}, 1)
	sink := spawn(t, sys, "sink", func(c *actor.Context, msg any) {
		if _, ok := msg.(string); ok {
			got <- struct{}{}
		}
	})
	echo := spawn(t, sys, "echo", func(c *actor.Context, msg any) {
		if s, ok := msg.(string); ok {
			c.Tell(sink, s)
			c.Respond(s)
		}
	})
	ctx, req := tel.tp.Tracer("test").Start(context.Background(), "request")
	if _, err := actor.Ask[string](ctx, echo, "hi"); err != nil {
		t.Fatal(err)
	}
	<-got
	req.End()
	waitSpans(t, tel, 5)

	spans := map[string]tracetest.SpanStub{}
	for _, s := range tel.spans.GetSpans() {
		spans[s.Name] = s
	}
	for _, tt := range []struct {
		name, parent string
		kind         trace.SpanKind
	}{
		{"send /echo", "request", trace.SpanKindProducer},
		{"process /echo", "send /echo", trace.SpanKindConsumer},
		{"send /sink", "process /echo", trace.SpanKindProducer},
		{"process /sink", "send /sink", trace.SpanKindConsumer},
	} {
		s, ok := spans[tt.name]
		if !ok {
			t.Errorf("no span %q", tt.name)
			continue
		}
		if p := spans[tt.parent]; s.Parent.SpanID() != p.SpanContext.SpanID() || s.SpanContext.TraceID() != p.SpanContext.TraceID() {
			t.Errorf("%s: parent %s; want %s's %s", tt.name, s.Parent.SpanID(), tt.parent, p.SpanContext.SpanID())
		}
		if s.SpanKind != tt.kind {
			t.Errorf("%s: got kind %v; want %v", tt.name, s.SpanKind, tt.kind)
		}
	}
	set := attribute.NewSet(spans["send /echo"].Attributes...)
	ask, _ := set.Value("loom.message.ask")
	if !ask.AsBool() {
		t.Errorf("send /echo: loom.message.ask not set")
	}
}

func waitSpans(t *testing.T, tel *telemetry, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(tel.spans.GetSpans()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d spans; want %d", len(tel.spans.GetSpans()), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestMetrics: after a known workload, the processing times, errors and
// mailbox sizes by class; generated names share a class. WithRootSpans
// traces these messages, sent outside any trace.
func TestMetrics(t *testing.T) {
	tel := newTelemetry(t)
	tr, err := otelactor.New(otelactor.WithTracerProvider(tel.tp), otelactor.WithMeterProvider(tel.mp), otelactor.WithRootSpans())
	if err != nil {
		t.Fatal(err)
	}
	sys := newSystem(t, tr)
	entered, release := make(chan struct{}), make(chan struct{})
	blocker := spawn(t, sys, "blocker", func(c *actor.Context, msg any) {
		switch msg {
		case "block":
			close(entered)
			<-release
		case "panic":
			panic("boom")
		}
	})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		r, err := sys.Spawn(actor.Props{New: func() actor.Actor {
			return actor.ReceiveFunc(func(c *actor.Context, msg any) {
				if _, ok := msg.(string); ok {
					c.Respond("ok")
				}
			})
		}})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := r.Ask(ctx, "ping"); err != nil {
				t.Fatal(err)
			}
		}
	}
	blocker.Tell("block")
	<-entered
	blocker.Tell("a")
	blocker.Tell("panic")
	blocker.Tell("left") // the panic stops the actor: this one is never received
	if got := tel.byClass(t, "actor.mailbox.size")["/blocker"]; got != 3 {
		t.Errorf("mailbox size while blocked: got %d; want 3", got)
	}
	close(release)
	<-blocker.Done()
	// Done records a receive's processing time after Receive returns, so
	// after the Ask that its reply ended: wait for the last one.
	deadline := time.Now().Add(10 * time.Second)
	for tel.byClass(t, "actor.processing.duration")["/$"] != 6 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}

	for _, tt := range []struct {
		metric string
		want   map[string]int64
	}{
		{"actor.processing.duration", map[string]int64{"/$": 6, "/blocker": 3}},
		{"actor.mailbox.time", map[string]int64{"/$": 6, "/blocker": 3}},
		{"actor.errors", map[string]int64{"/blocker": 1}},
		{"actor.mailbox.size", map[string]int64{"/$": 0, "/blocker": 0}},
	} {
		got := tel.byClass(t, tt.metric)
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %v; want %v", tt.metric, got, tt.want)
			continue
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%s: got %v; want %v", tt.metric, got, tt.want)
				break
			}
		}
	}
	var panicked []tracetest.SpanStub
	for _, s := range tel.spans.GetSpans() {
		if s.Status.Code == codes.Error {
			panicked = append(panicked, s)
		}
	}
	if len(panicked) != 1 || panicked[0].Name != "process /blocker" || panicked[0].Status.Description != "boom" {
		t.Errorf("error spans: got %v; want process /blocker with boom", panicked)
	}
}

// TestUntracedMessages: by default a message sent outside any trace gets
// no span, and is measured all the same.
func TestUntracedMessages(t *testing.T) {
	tel := newTelemetry(t)
	tr, err := otelactor.New(otelactor.WithTracerProvider(tel.tp), otelactor.WithMeterProvider(tel.mp))
	if err != nil {
		t.Fatal(err)
	}
	sys := newSystem(t, tr)
	echo := spawn(t, sys, "echo", func(c *actor.Context, msg any) {
		if s, ok := msg.(string); ok {
			c.Respond(s)
		}
	})
	for range 2 {
		if _, err := echo.Ask(context.Background(), "hi"); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(tel.spans.GetSpans()); got != 0 {
		t.Errorf("got %d spans; want none", got)
	}
	// The last processing time is recorded after the reply.
	deadline := time.Now().Add(10 * time.Second)
	for tel.byClass(t, "actor.processing.duration")["/echo"] != 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := tel.byClass(t, "actor.processing.duration")["/echo"]; got != 2 {
		t.Errorf("processing count: got %d; want 2", got)
	}
}

// TestInjectExtract: a transport's headers carry the context as W3C Trace
// Context by default.
func TestInjectExtract(t *testing.T) {
	tel := newTelemetry(t)
	tr, err := otelactor.New(otelactor.WithTracerProvider(tel.tp), otelactor.WithMeterProvider(tel.mp))
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := tel.tp.Tracer("test").Start(context.Background(), "send")
	defer span.End()
	c := propagation.MapCarrier{}
	tr.Inject(ctx, c)
	if c["traceparent"] == "" {
		t.Fatalf("got carrier %v; want a traceparent", c)
	}
	got := trace.SpanContextFromContext(tr.Extract(context.Background(), c))
	if got.TraceID() != span.SpanContext().TraceID() || got.SpanID() != span.SpanContext().SpanID() || !got.IsRemote() {
		t.Errorf("extracted %v; want the sender's span, remote", got)
	}
}

func TestClass(t *testing.T) {
	for _, tt := range []struct{ path, want string }{
		{"/echo", "/echo"},
		{"/$1", "/$"},
		{"/pool/$12/leaf", "/pool/$/leaf"},
	} {
		if got := otelactor.Class(tt.path); got != tt.want {
			t.Errorf("Class(%q) = %q; want %q", tt.path, got, tt.want)
		}
	}
}
