package oteltask_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
	"github.com/loomrt/loom/task/oteltask"
	"github.com/loomrt/loom/task/tasktest"
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

// points returns, for the metric called name, each data point's value (a
// sum's value, a histogram's count) by its attributes' values joined.
func (tel *telemetry) points(t *testing.T, name string, keys ...attribute.Key) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	label := func(s attribute.Set) string {
		l := ""
		for _, k := range keys {
			v, _ := s.Value(k)
			l += "/" + v.String()
		}
		return l
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[label(p.Attributes)] = p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[label(p.Attributes)] = int64(p.Count)
				}
			default:
				t.Fatalf("%s: unexpected %T", name, m.Data)
			}
		}
	}
	return got
}

func equalPoints(t *testing.T, name string, got, want map[string]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v; want %v", name, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %v; want %v", name, got, want)
			return
		}
	}
}

// TestGoSpans: each task.Go has a span, the child of its caller's, whose
// child the work the function does is; an error or a refusal marks it;
// loom.task.duration counts each outcome.
func TestGoSpans(t *testing.T) {
	tel := newTelemetry(t)
	in, err := oteltask.New(oteltask.WithTracerProvider(tel.tp), oteltask.WithMeterProvider(tel.mp))
	if err != nil {
		t.Fatal(err)
	}
	task.SetTracer(in)
	defer task.SetTracer(nil)
	exec := loom.Virtual(loom.WithName("tasks"))
	defer exec.Shutdown(context.Background())
	closed := loom.Virtual(loom.WithName("closed"))
	_ = closed.Shutdown(context.Background())

	tracer := tel.tp.Tracer("test")
	ctx, parent := tracer.Start(context.Background(), "request")
	_, err = task.Go(ctx, exec, func(ctx context.Context) (int, error) {
		_, work := tracer.Start(ctx, "work")
		work.End()
		return 1, nil
	}).Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := task.Go(ctx, exec, func(context.Context) (int, error) { return 0, boom }).Wait(ctx); !errors.Is(err, boom) {
		t.Fatalf("got %v; want boom", err)
	}
	if _, err := task.Go(ctx, closed, func(context.Context) (int, error) { return 0, nil }).Wait(ctx); !errors.Is(err, loom.ErrClosed) {
		t.Fatalf("got %v; want ErrClosed", err)
	}
	parent.End()

	spans := tel.spans.GetSpans()
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	req := byName["request"][0]
	gos := byName["task.Go"]
	if len(gos) != 3 {
		t.Fatalf("got %d task.Go spans; want 3", len(gos))
	}
	codesSeen := map[codes.Code]int{}
	for _, g := range gos {
		if g.Parent.SpanID() != req.SpanContext.SpanID() {
			t.Errorf("task.Go span's parent is %s; want the request's %s", g.Parent.SpanID(), req.SpanContext.SpanID())
		}
		codesSeen[g.Status.Code]++
	}
	if codesSeen[codes.Error] != 2 || codesSeen[codes.Unset] != 1 {
		t.Errorf("task.Go statuses: got %v; want 1 unset, 2 errors", codesSeen)
	}
	work := byName["work"][0]
	var first tracetest.SpanStub
	for _, g := range gos {
		if g.SpanContext.SpanID() == work.Parent.SpanID() {
			first = g
		}
	}
	if !first.SpanContext.IsValid() {
		t.Errorf("the function's span is not a child of a task.Go span")
	}
	equalPoints(t, "loom.task.duration", tel.points(t, "loom.task.duration", "loom.executor.name", "outcome"),
		map[string]int64{"/tasks/SUCCESS": 1, "/tasks/ERROR": 1, "/closed/REJECTED": 1})
}

// TestGoOutsideATrace: a task.Go whose context carries no trace gets no
// span by default, one of its own with WithRootSpans, and is measured
// either way.
func TestGoOutsideATrace(t *testing.T) {
	for _, roots := range []bool{false, true} {
		tel := newTelemetry(t)
		opts := []oteltask.Option{oteltask.WithTracerProvider(tel.tp), oteltask.WithMeterProvider(tel.mp)}
		if roots {
			opts = append(opts, oteltask.WithRootSpans())
		}
		in, err := oteltask.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		task.SetTracer(in)
		exec := loom.Virtual(loom.WithName("tasks"))
		ctx := context.Background()
		if _, err := task.Go(ctx, exec, func(context.Context) (int, error) { return 1, nil }).Wait(ctx); err != nil {
			t.Fatal(err)
		}
		task.SetTracer(nil)
		_ = exec.Shutdown(ctx)
		spans := tel.spans.GetSpans()
		if want := map[bool]int{false: 0, true: 1}[roots]; len(spans) != want || (roots && spans[0].Parent.IsValid()) {
			t.Errorf("WithRootSpans %t: got %d spans; want %d (a root)", roots, len(spans), want)
		}
		equalPoints(t, "loom.task.duration", tel.points(t, "loom.task.duration", "loom.executor.name", "outcome"),
			map[string]int64{"/tasks/SUCCESS": 1})
	}
}

var epoch = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// TestScheduledRuns: each run is a root span named by its job, with its
// name and scheduled time; the runs' durations count each outcome, no run
// is left active, and missed occurrences are counted.
func TestScheduledRuns(t *testing.T) {
	tel := newTelemetry(t)
	in, err := oteltask.New(oteltask.WithTracerProvider(tel.tp), oteltask.WithMeterProvider(tel.mp))
	if err != nil {
		t.Fatal(err)
	}
	c := tasktest.NewClock(epoch)
	exec := loom.Virtual()
	defer exec.Shutdown(context.Background())
	s, err := task.NewScheduler(task.WithClock(c), task.WithExecutor(exec), task.WithHooks(in.Hooks()),
		task.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	calls := 0
	err = s.Add("nightly", task.Every(time.Hour), func(context.Context) error {
		calls++
		if calls == 1 {
			return errors.New("boom")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tasktest.Settle(t, c, s, 1)
	c.Advance(time.Hour) // 01:00 runs, fails
	tasktest.Settle(t, c, s, 1)
	c.Advance(4*time.Hour + 30*time.Minute) // 02:00 to 04:00 missed, 05:00 runs late
	tasktest.Settle(t, c, s, 1)

	spans := tel.spans.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("got %d spans; want 2", len(spans))
	}
	for i, want := range []struct {
		at   string
		code codes.Code
	}{{"2026-01-05T01:00:00Z", codes.Error}, {"2026-01-05T05:00:00Z", codes.Unset}} {
		sp := spans[i]
		set := attribute.NewSet(sp.Attributes...)
		job, _ := set.Value("loom.job.name")
		at, _ := set.Value("loom.job.scheduled_time")
		if sp.Name != "nightly" || sp.Parent.IsValid() || job.AsString() != "nightly" || at.AsString() != want.at || sp.Status.Code != want.code {
			t.Errorf("run %d: got %q (parent %v) job %q at %q code %v; want nightly, a root, nightly, %s, %v",
				i, sp.Name, sp.Parent.IsValid(), job.AsString(), at.AsString(), sp.Status.Code, want.at, want.code)
		}
	}
	equalPoints(t, "tasks.scheduled.execution", tel.points(t, "tasks.scheduled.execution", "loom.job.name", "outcome"),
		map[string]int64{"/nightly/ERROR": 1, "/nightly/SUCCESS": 1})
	equalPoints(t, "tasks.scheduled.execution.active", tel.points(t, "tasks.scheduled.execution.active", "loom.job.name"),
		map[string]int64{"/nightly": 0})
	equalPoints(t, "loom.tasks.scheduled.skipped", tel.points(t, "loom.tasks.scheduled.skipped", "loom.job.name", "reason"),
		map[string]int64{"/nightly/missed": 3})
}
