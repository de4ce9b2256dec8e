package otelweb_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/nbio"
	"github.com/loomrt/loom/web/otelweb"
)

// telemetry is a tracer provider and a meter provider of the real SDK,
// with an in-memory span exporter and a manual reader.
type telemetry struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t *testing.T, sampler sdktrace.Sampler) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSyncer(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

func (tel *telemetry) options() []otelweb.Option {
	return []otelweb.Option{otelweb.WithTracerProvider(tel.tp), otelweb.WithMeterProvider(tel.mp)}
}

// collect returns the metrics collected now, by name.
func (tel *telemetry) collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			got[m.Name] = m
		}
	}
	return got
}

// serve serves app on a loopback port until the test ends and returns its
// base URL.
func serve(t *testing.T, app *web.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func newApp(t *testing.T, exec loom.Executor, opts ...web.AppOption) *web.App {
	t.Helper()
	app, err := web.New(append([]web.AppOption{web.WithExecutor(exec), web.WithoutThreadWatch(),
		web.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// get sends a GET with the headers given (name, value, …) and returns the
// status.
func get(t *testing.T, url string, header ...string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

const (
	remoteTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	remoteParent = "00f067aa0ba902b7"
)

func distinct(kv ...attribute.KeyValue) attribute.Distinct {
	s := attribute.NewSet(kv...)
	return s.Equivalent()
}

// TestSpansAndMetrics serves a known workload on a real socket and checks
// each span (named by route, the caller's trace context honoured, status
// and attributes) and each figure: request durations by route and status,
// and the App's executor's completed and rejected tasks.
func TestSpansAndMetrics(t *testing.T) {
	tel := newTelemetry(t, sdktrace.AlwaysSample())
	exec := loom.Limit(1, loom.WithName("http"))
	defer exec.Shutdown(context.Background())
	app := newApp(t, exec)
	if _, err := otelweb.Instrument(app, tel.options()...); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	app.Get("/todos/{id}", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, r.PathValue("id"))
		return err
	})
	app.Get("/boom", func(w http.ResponseWriter, r *http.Request) error {
		return errors.New("boom")
	})
	app.Get("/block", func(w http.ResponseWriter, r *http.Request) error {
		close(entered)
		<-release
		return nil
	})
	url := serve(t, app)

	if got := get(t, url+"/todos/7", "traceparent", "00-"+remoteTrace+"-"+remoteParent+"-01"); got != 200 {
		t.Fatalf("GET /todos/7: got %d; want 200", got)
	}
	if got := get(t, url+"/todos/8"); got != 200 {
		t.Fatalf("GET /todos/8: got %d; want 200", got)
	}
	if got := get(t, url+"/boom"); got != 500 {
		t.Fatalf("GET /boom: got %d; want 500", got)
	}
	blocked := make(chan int, 1)
	go func() { blocked <- get(t, url+"/block") }()
	<-entered
	if got := get(t, url+"/todos/9"); got != 503 {
		t.Fatalf("GET /todos/9 while the executor is full: got %d; want 503", got)
	}
	close(release)
	if got := <-blocked; got != 200 {
		t.Fatalf("GET /block: got %d; want 200", got)
	}

	spans := tel.spans.GetSpans()
	if len(spans) != 5 {
		t.Fatalf("got %d spans; want 5", len(spans))
	}
	byPath := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if kv.Key == "url.path" {
				byPath[kv.Value.AsString()] = s
			}
		}
		if s.SpanKind != trace.SpanKindServer {
			t.Errorf("span %s: got kind %v; want server", s.Name, s.SpanKind)
		}
	}
	for _, tt := range []struct {
		path, name, route string
		status            int
		code              codes.Code
	}{
		{"/todos/7", "GET /todos/{id}", "/todos/{id}", 200, codes.Unset},
		{"/todos/8", "GET /todos/{id}", "/todos/{id}", 200, codes.Unset},
		{"/boom", "GET /boom", "/boom", 500, codes.Error},
		{"/block", "GET /block", "/block", 200, codes.Unset},
		{"/todos/9", "GET /todos/{id}", "/todos/{id}", 503, codes.Error},
	} {
		s, ok := byPath[tt.path]
		if !ok {
			t.Errorf("%s: no span", tt.path)
			continue
		}
		got := attribute.NewSet(s.Attributes...)
		route, _ := got.Value("http.route")
		status, _ := got.Value("http.response.status_code")
		method, _ := got.Value("http.request.method")
		if s.Name != tt.name || route.AsString() != tt.route || int(status.AsInt64()) != tt.status ||
			method.AsString() != "GET" || s.Status.Code != tt.code {
			t.Errorf("%s: got span %q route %q status %d method %q code %v; want %q %q %d GET %v",
				tt.path, s.Name, route.AsString(), status.AsInt64(), method.AsString(), s.Status.Code, tt.name, tt.route, tt.status, tt.code)
		}
	}
	remote := byPath["/todos/7"]
	if remote.SpanContext.TraceID().String() != remoteTrace || remote.Parent.SpanID().String() != remoteParent || !remote.Parent.IsRemote() {
		t.Errorf("traceparent: got trace %s parent %s (remote %t); want %s %s (remote)",
			remote.SpanContext.TraceID(), remote.Parent.SpanID(), remote.Parent.IsRemote(), remoteTrace, remoteParent)
	}
	if local := byPath["/todos/8"]; local.Parent.IsValid() || local.SpanContext.TraceID().String() == remoteTrace {
		t.Errorf("no traceparent: got parent %v in trace %s; want a root of its own", local.Parent.SpanID(), local.SpanContext.TraceID())
	}

	m := tel.collect(t)
	hist, ok := m["http.server.request.duration"].Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("http.server.request.duration: got %T; want a histogram", m["http.server.request.duration"].Data)
	}
	counts := map[attribute.Distinct]uint64{}
	for _, dp := range hist.DataPoints {
		counts[dp.Attributes.Equivalent()] = dp.Count
	}
	series := func(route string, status int) attribute.Distinct {
		kv := []attribute.KeyValue{
			attribute.String("http.request.method", "GET"), attribute.String("url.scheme", "http"),
			attribute.Int("http.response.status_code", status), attribute.String("http.route", route),
		}
		if status >= 500 {
			kv = append(kv, attribute.String("error.type", http.StatusText(status)))
		}
		return distinct(kv...)
	}
	for _, tt := range []struct {
		route  string
		status int
		count  uint64
	}{
		{"/todos/{id}", 200, 2},
		{"/todos/{id}", 503, 1},
		{"/boom", 500, 1},
		{"/block", 200, 1},
	} {
		if got := counts[series(tt.route, tt.status)]; got != tt.count {
			t.Errorf("duration %s %d: got count %d; want %d", tt.route, tt.status, got, tt.count)
		}
	}
	if len(hist.DataPoints) != 4 {
		t.Errorf("duration: got %d series; want 4", len(hist.DataPoints))
	}

	httpExec := distinct(attribute.String("name", "http"), attribute.String("loom.executor.kind", "limit"))
	sum := func(name string) int64 {
		s, ok := m[name].Data.(metricdata.Sum[int64])
		if !ok {
			t.Fatalf("%s: got %T; want a sum", name, m[name].Data)
		}
		for _, dp := range s.DataPoints {
			if dp.Attributes.Equivalent() == httpExec {
				return dp.Value
			}
		}
		t.Fatalf("%s: no point for the http executor", name)
		return 0
	}
	gauge := func(name string) int64 {
		g, ok := m[name].Data.(metricdata.Gauge[int64])
		if !ok {
			t.Fatalf("%s: got %T; want a gauge", name, m[name].Data)
		}
		for _, dp := range g.DataPoints {
			if dp.Attributes.Equivalent() == httpExec {
				return dp.Value
			}
		}
		t.Fatalf("%s: no point for the http executor", name)
		return 0
	}
	for _, tt := range []struct {
		name string
		got  int64
		want int64
	}{
		{"executor.completed", sum("executor.completed"), 4},
		{"executor.rejected", sum("executor.rejected"), 1},
		{"loom.executor.submitted", sum("loom.executor.submitted"), 4},
		{"executor.active", gauge("executor.active"), 0},
		{"executor.queued", gauge("executor.queued"), 0},
		{"executor.pool.size", gauge("executor.pool.size"), 1},
		{"loom.executor.peak_active", gauge("loom.executor.peak_active"), 1},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: got %d; want %d", tt.name, tt.got, tt.want)
		}
	}
	if _, ok := m["loom.thread_watch.tripped"]; !ok {
		t.Errorf("no loom.thread_watch.tripped")
	}
}

// TestRootSampling: WithRootSampling(0) gives no span to a request without
// a trace context, and a span to one whose caller sampled it; both are
// measured.
func TestRootSampling(t *testing.T) {
	tel := newTelemetry(t, sdktrace.ParentBased(sdktrace.AlwaysSample()))
	exec := loom.Virtual()
	defer exec.Shutdown(context.Background())
	app := newApp(t, exec)
	if _, err := otelweb.Instrument(app, append(tel.options(), otelweb.WithRootSampling(0))...); err != nil {
		t.Fatal(err)
	}
	var sawSpan []bool
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		sawSpan = append(sawSpan, trace.SpanContextFromContext(r.Context()).IsValid())
		return nil
	})
	url := serve(t, app)
	get(t, url+"/")
	get(t, url+"/", "traceparent", "00-"+remoteTrace+"-"+remoteParent+"-01")
	spans := tel.spans.GetSpans()
	if len(spans) != 1 || spans[0].SpanContext.TraceID().String() != remoteTrace {
		t.Errorf("got %d spans; want 1, in the caller's trace", len(spans))
	}
	if len(sawSpan) != 2 || sawSpan[0] || !sawSpan[1] {
		t.Errorf("handler saw a span context: %v; want [false true]", sawSpan)
	}
	hist, _ := tel.collect(t)["http.server.request.duration"].Data.(metricdata.Histogram[float64])
	if len(hist.DataPoints) != 1 || hist.DataPoints[0].Count != 2 {
		t.Errorf("durations: got %+v; want 2 requests in one series", hist.DataPoints)
	}
}

// TestWithoutMetrics: with the request and executor figures left out, no
// instrument is made; spans go on.
func TestWithoutMetrics(t *testing.T) {
	tel := newTelemetry(t, sdktrace.AlwaysSample())
	exec := loom.Virtual()
	defer exec.Shutdown(context.Background())
	app := newApp(t, exec)
	in, err := otelweb.Instrument(app, append(tel.options(), otelweb.WithoutRequestMetrics(), otelweb.WithoutExecutorMetrics())...)
	if err != nil {
		t.Fatal(err)
	}
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error { return nil })
	url := serve(t, app)
	get(t, url+"/")
	if got := tel.collect(t); len(got) != 0 {
		t.Errorf("got metrics %v; want none", got)
	}
	if got := len(tel.spans.GetSpans()); got != 1 {
		t.Errorf("got %d spans; want 1", got)
	}
	if err := in.Shutdown(); err != nil {
		t.Error(err)
	}
}

// TestRootSamplingFraction: WithRootSampling(0.5) traces about half of 400
// requests without a trace context (a count far outside 100 to 300 has odds
// below one in 10¹⁸).
func TestRootSamplingFraction(t *testing.T) {
	tel := newTelemetry(t, sdktrace.AlwaysSample())
	exec := loom.Virtual()
	defer exec.Shutdown(context.Background())
	app := newApp(t, exec)
	if _, err := otelweb.Instrument(app, append(tel.options(), otelweb.WithRootSampling(0.5))...); err != nil {
		t.Fatal(err)
	}
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error { return nil })
	for range 400 {
		app.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}
	if got := len(tel.spans.GetSpans()); got < 100 || got > 300 {
		t.Errorf("got %d spans of 400 requests; want about 200", got)
	}
}

// TestMeasureExecutors: an adaptive executor's limit, and the thread
// watch's figures, as Stats and WatchedThreads give them.
func TestMeasureExecutors(t *testing.T) {
	tel := newTelemetry(t, sdktrace.AlwaysSample())
	exec := loom.Adaptive(loom.WithName("adaptive"))
	defer exec.Shutdown(context.Background())
	reg, err := otelweb.MeasureExecutors(tel.mp, func() []loom.Executor { return []loom.Executor{exec} })
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	m := tel.collect(t)
	s := exec.Stats()
	want := distinct(attribute.String("name", "adaptive"), attribute.String("loom.executor.kind", "adaptive"))
	for _, tt := range []struct {
		name  string
		attrs attribute.Distinct
		want  int64
	}{
		{"loom.executor.limit", want, int64(s.Limit)},
		{"executor.pool.size", want, int64(s.Workers)},
		{"loom.thread_watch.tripped", distinct(), 0},
		{"loom.thread_watch.high", distinct(), int64(loom.WatchedThreads().High)},
	} {
		g, ok := m[tt.name].Data.(metricdata.Gauge[int64])
		if !ok || len(g.DataPoints) != 1 || g.DataPoints[0].Attributes.Equivalent() != tt.attrs || g.DataPoints[0].Value != tt.want {
			t.Errorf("%s: got %+v; want one point of %d", tt.name, m[tt.name].Data, tt.want)
		}
	}
	if s.Limit == 0 {
		t.Errorf("adaptive's limit is 0: the test checks nothing")
	}
}

// TestEngines: on either engine a request's span is named by its route,
// continues the caller's trace, and records its status.
func TestEngines(t *testing.T) {
	for _, engine := range []web.Engine{nil, nbio.Engine()} {
		name := "std"
		var opts []web.AppOption
		if engine != nil {
			name, opts = engine.Name(), append(opts, web.WithEngine(engine))
		}
		tel := newTelemetry(t, sdktrace.AlwaysSample())
		exec := loom.Virtual()
		app := newApp(t, exec, opts...)
		if _, err := otelweb.Instrument(app, tel.options()...); err != nil {
			t.Fatal(err)
		}
		app.Get("/items/{id}", func(w http.ResponseWriter, r *http.Request) error {
			w.WriteHeader(http.StatusAccepted)
			return nil
		})
		stop := serveUntil(t, app)
		url := stop.url
		if got := get(t, url+"/items/3", "traceparent", "00-"+remoteTrace+"-"+remoteParent+"-01"); got != http.StatusAccepted {
			t.Fatalf("%s: got %d; want 202", name, got)
		}
		stop.stop()
		_ = exec.Shutdown(context.Background())
		spans := tel.spans.GetSpans()
		if len(spans) != 1 {
			t.Fatalf("%s: got %d spans; want 1", name, len(spans))
		}
		s := spans[0]
		set := attribute.NewSet(s.Attributes...)
		status, _ := set.Value("http.response.status_code")
		if s.Name != "GET /items/{id}" || s.Parent.SpanID().String() != remoteParent || status.AsInt64() != 202 {
			t.Errorf("%s: got span %q, parent %s, status %d; want GET /items/{id}, %s, 202", name, s.Name, s.Parent.SpanID(), status.AsInt64(), remoteParent)
		}
	}
}

type served struct {
	url  string
	stop func()
}

// serveUntil serves app on a loopback port until stop is called.
func serveUntil(t *testing.T, app *web.App) served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx, ln) }()
	return served{url: "http://" + ln.Addr().String(), stop: func() {
		http.DefaultClient.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}}
}

// TestRefusesNil: a nil App, meter provider or executors func is an error
// naming it at setup, not a panic then or at a later collection.
func TestRefusesNil(t *testing.T) {
	tel := newTelemetry(t, sdktrace.AlwaysSample())
	none := func() []loom.Executor { return nil }
	for _, tt := range []struct {
		name string
		call func() error
		want string
	}{
		{"Instrument(nil)", func() error {
			_, err := otelweb.Instrument(nil, otelweb.WithTracerProvider(tel.tp), otelweb.WithMeterProvider(tel.mp))
			return err
		}, "nil app"},
		{"MeasureExecutors(nil, f)", func() error { _, err := otelweb.MeasureExecutors(nil, none); return err }, "nil meter provider"},
		{"MeasureExecutors(mp, nil)", func() error { _, err := otelweb.MeasureExecutors(tel.mp, nil); return err }, "nil executors"},
	} {
		err := tt.call()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v; want an error naming %q", tt.name, err, tt.want)
		}
	}
	tel.collect(t) // no callback left registered that would call a nil func
}
