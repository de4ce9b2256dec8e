package otelweb_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/metrics"
	"github.com/loomrt/loom/web/otelweb"
)

// discard is a ResponseWriter that keeps nothing but the status and the
// byte count, so that a benchmark measures the App and not a recorder.
type discard struct {
	h      http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) WriteHeader(s int)   { d.status = s }
func (d *discard) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	d.n += len(p)
	return len(p), nil
}

// BenchmarkHelloOtel is the hello handler on an App without
// instrumentation (bare); with web/metrics' Prometheus collectors
// observing it (prometheus), for comparison; instrumented with WithRootSampling(0) (root0),
// with a tracer provider that samples nothing (never) and one that samples
// every request into an exporter that drops the spans (always), each with
// no meter or, -metrics, an SDK meter provider.
func BenchmarkHelloOtel(b *testing.B) {
	for _, variant := range []string{"bare", "prometheus", "root0", "never", "never-metrics", "always", "always-metrics"} {
		b.Run(variant, func(b *testing.B) {
			app := helloApp(b, variant)
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				w.status, w.n = 0, 0
				app.ServeHTTP(w, req)
				if w.status != http.StatusOK || w.n != len("Hello World!") {
					b.Fatalf("got %d with %d bytes; want 200 with 12", w.status, w.n)
				}
			}
		})
	}
}

// helloApp is examples/hello's App, instrumented as variant says.
func helloApp(tb testing.TB, variant string) *web.App {
	tb.Helper()
	app, stop, err := newHelloApp(variant)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return app
}

// newHelloApp is helloApp for a program: stop shuts down what it made.
// Served, it runs no thread watch, whose readings, a fixed number a second,
// would spread over requests unevenly as callgrind's speed varies.
func newHelloApp(variant string) (app *web.App, stop func(), err error) {
	e := loom.Virtual()
	var stops []func(context.Context) error
	stop = func() {
		for _, s := range stops {
			_ = s(context.Background())
		}
	}
	stops = append(stops, e.Shutdown)
	app, err = web.New(web.WithExecutor(e), web.WithoutThreadWatch())
	if err != nil {
		return nil, stop, err
	}
	stops = append([]func(context.Context) error{app.Shutdown}, stops...)
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "Hello World!")
		return err
	})
	var opts []otelweb.Option
	switch variant {
	case "bare":
		return app, stop, nil
	case "prometheus":
		app.Observe(metrics.New(app))
		return app, stop, nil
	case "root0":
		opts = append(opts, otelweb.WithRootSampling(0), otelweb.WithTracerProvider(sdktrace.NewTracerProvider()))
	case "never", "never-metrics":
		opts = append(opts, otelweb.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))))
	case "always", "always-metrics":
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSyncer(tracetest.NewNoopExporter()))
		stops = append(stops, tp.Shutdown)
		opts = append(opts, otelweb.WithTracerProvider(tp))
	default:
		return nil, stop, fmt.Errorf("unknown variant %q", variant)
	}
	if !strings.HasSuffix(variant, "-metrics") {
		opts = append(opts, otelweb.WithMeterProvider(noopMeter()))
	} else {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		stops = append(stops, mp.Shutdown)
		opts = append(opts, otelweb.WithMeterProvider(mp))
	}
	if _, err := otelweb.Instrument(app, opts...); err != nil {
		return nil, stop, err
	}
	return app, stop, nil
}
