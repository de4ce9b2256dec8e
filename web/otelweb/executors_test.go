package otelweb_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web/otelweb"
)

// points returns each integer instrument's value for the attributes attrs
// (a gauge's or a sum's), by name; an instrument with no point for attrs
// is absent.
func points(t *testing.T, m map[string]metricdata.Metrics, attrs attribute.Distinct) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	for name, md := range m {
		var dps []metricdata.DataPoint[int64]
		switch d := md.Data.(type) {
		case metricdata.Gauge[int64]:
			dps = d.DataPoints
		case metricdata.Sum[int64]:
			dps = d.DataPoints
		default:
			continue
		}
		for _, dp := range dps {
			if dp.Attributes.Equivalent() == attrs {
				got[name] = dp.Value
			}
		}
	}
	return got
}

// waitStats polls exec's Stats until done says so, for at most 20 s.
func waitStats(t *testing.T, exec loom.Executor, done func(loom.Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !done(exec.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("executor's stats still %+v after 20 s", exec.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestExecutorInstruments runs a known workload on a limit executor with a
// queue (a panic, a task holding the slot, a full queue, a refusal, a
// queued task whose context ends, a shutdown that gives up on queued
// tasks) and checks every executor instrument's value at two points; then
// trips a thread watch and checks a refusal it causes and every
// loom.thread_watch instrument.
func TestExecutorInstruments(t *testing.T) {
	tel := newTelemetry(t, sdktrace.AlwaysSample())
	panicked := make(chan struct{}, 1)
	exec := loom.Limit(1, loom.WithQueue(3), loom.WithName("work"),
		loom.WithPanicHandler(func(string, any, []byte) { panicked <- struct{}{} }))
	defer exec.Shutdown(context.Background())
	watched := loom.Virtual(loom.WithName("watched"))
	defer watched.Shutdown(context.Background())
	reg, err := otelweb.MeasureExecutors(tel.mp, func() []loom.Executor { return []loom.Executor{exec, watched} })
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	work := distinct(attribute.String("name", "work"), attribute.String("loom.executor.kind", "limit"))
	check := func(when string, attrs attribute.Distinct, want map[string]int64) {
		t.Helper()
		got := points(t, tel.collect(t), attrs)
		for name, w := range want {
			if g, ok := got[name]; !ok || g != w {
				t.Errorf("%s: %s: got %d (reported %t); want %d", when, name, g, ok, w)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("%s: %s reported; the test does not check it", when, name)
			}
		}
	}
	ctx := context.Background()
	nop := func(context.Context) {}

	if err := exec.Run(ctx, func(context.Context) { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	<-panicked
	entered, release := make(chan struct{}), make(chan struct{})
	if err := exec.Go(ctx, func(context.Context) { close(entered); <-release }); err != nil {
		t.Fatal(err)
	}
	<-entered
	expiring, expire := context.WithCancel(ctx)
	for i, c := range []context.Context{ctx, expiring, ctx} {
		if err := exec.Go(c, nop); err != nil {
			t.Fatalf("queued task %d: %v", i, err)
		}
	}
	if err := exec.Go(ctx, nop); !errors.Is(err, loom.ErrRejected) {
		t.Fatalf("Go with the queue full: got %v; want ErrRejected", err)
	}
	check("slot held, queue full", work, map[string]int64{
		"executor.active": 1, "executor.queued": 3, "executor.pool.size": 1, "executor.queue.remaining": 0,
		"loom.executor.peak_active": 1, "executor.completed": 1, "executor.rejected": 1,
		"loom.executor.rejected_by_thread_watch": 0, "loom.executor.expired": 0, "loom.executor.submitted": 5,
		"loom.executor.panicked": 1, "loom.executor.abandoned": 0,
	})

	expire()
	close(release)
	waitStats(t, exec, func(s loom.Stats) bool { return s.Completed == 4 && s.Expired == 1 })
	entered, release = make(chan struct{}), make(chan struct{})
	if err := exec.Go(ctx, func(context.Context) { close(entered); <-release }); err != nil {
		t.Fatal(err)
	}
	<-entered
	for range 2 {
		if err := exec.Go(ctx, nop); err != nil {
			t.Fatal(err)
		}
	}
	gaveUp, cancel := context.WithCancel(ctx)
	cancel()
	if err := exec.Shutdown(gaveUp); !errors.Is(err, loom.ErrAbandoned) {
		t.Fatalf("Shutdown with its context ended: got %v; want ErrAbandoned", err)
	}
	close(release)
	waitStats(t, exec, func(s loom.Stats) bool {
		return s.Completed == 5 && s.Abandoned == 2 && s.Queued == 0 && s.Running == 0
	})
	check("after a shutdown that gave up", work, map[string]int64{
		"executor.active": 0, "executor.queued": 0, "executor.pool.size": 1, "executor.queue.remaining": 3,
		"loom.executor.peak_active": 1, "executor.completed": 5, "executor.rejected": 1,
		"loom.executor.rejected_by_thread_watch": 0, "loom.executor.expired": 1, "loom.executor.submitted": 8,
		"loom.executor.panicked": 1, "loom.executor.abandoned": 2,
	})

	// A high-water mark of no thread at all trips the watch at its first
	// reading, and a low-water mark of none keeps it tripped until Close;
	// its next reading is an hour away, so the figures stay as read.
	watch := &loom.ThreadWatch{High: 1e-9, Low: 1e-10, Every: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	if err := watched.Go(ctx, nop); !errors.Is(err, loom.ErrRejected) {
		t.Fatalf("Go with the thread watch tripped: got %v; want ErrRejected", err)
	}
	w := loom.WatchedThreads()
	if !w.Tripped || w.Threads == 0 || w.Limit == 0 || w.Episodes == 0 {
		t.Fatalf("thread watch: %+v; want it tripped, with a reading", w)
	}
	m := tel.collect(t)
	check("thread watch tripped", distinct(attribute.String("name", "watched"), attribute.String("loom.executor.kind", "virtual")), map[string]int64{
		"executor.active": 0, "executor.queued": 0, "loom.executor.peak_active": 0, "executor.completed": 0,
		"executor.rejected": 1, "loom.executor.rejected_by_thread_watch": 1, "loom.executor.expired": 0,
		"loom.executor.submitted": 0, "loom.executor.panicked": 0, "loom.executor.abandoned": 0,
	})
	process := map[string]int64{
		"loom.thread_watch.running": 1, "loom.thread_watch.tripped": 1, "loom.thread_watch.threads": int64(w.Threads),
		"loom.thread_watch.threads_in_use": int64(w.InUse), "loom.thread_watch.limit": int64(w.Limit),
		"loom.thread_watch.high": 0, "loom.thread_watch.episodes": int64(w.Episodes),
	}
	check("thread watch tripped", distinct(), process)
	if err := watch.Close(); err != nil {
		t.Fatal(err)
	}
	process["loom.thread_watch.running"], process["loom.thread_watch.tripped"] = 0, 0
	check("thread watch closed", distinct(), process)

	// A watch whose mark is the thread limit runs and does not trip.
	calm := &loom.ThreadWatch{High: 1, Every: time.Hour}
	if err := calm.Start(); err != nil {
		t.Fatal(err)
	}
	defer calm.Close()
	w = loom.WatchedThreads()
	check("a watch that runs untripped", distinct(), map[string]int64{
		"loom.thread_watch.running": 1, "loom.thread_watch.tripped": 0, "loom.thread_watch.threads": int64(w.Threads),
		"loom.thread_watch.threads_in_use": int64(w.InUse), "loom.thread_watch.limit": int64(w.Limit),
		"loom.thread_watch.high": int64(w.Limit), "loom.thread_watch.episodes": process["loom.thread_watch.episodes"],
	})

	var names []string
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{
		"executor.active", "executor.completed", "executor.pool.size", "executor.queue.remaining", "executor.queued",
		"executor.rejected", "loom.executor.abandoned", "loom.executor.expired", "loom.executor.panicked",
		"loom.executor.peak_active", "loom.executor.queue_wait.p99", "loom.executor.rejected_by_thread_watch",
		"loom.executor.run_time.p99", "loom.executor.submitted",
		"loom.thread_watch.episodes", "loom.thread_watch.high", "loom.thread_watch.limit", "loom.thread_watch.running",
		"loom.thread_watch.threads", "loom.thread_watch.threads_in_use", "loom.thread_watch.tripped",
	}
	if !slices.Equal(names, want) {
		t.Errorf("instruments: got %v; want %v", names, want)
	}
}
