package otelweb

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/loomrt/loom"
)

// MeasureExecutors reports the executors executors returns, at each
// collection, under the names Micrometer gives an ExecutorService's
// figures (executor.active, executor.queued, executor.completed,
// executor.pool.size, …) and loom's own (loom.executor.*), each with the
// attributes name (the executor's, made unique as web/metrics does) and
// loom.executor.kind; and the process's thread watch (loom.thread_watch.*).
// Instrument calls it for an App's executors; call it for others (a
// Scheduler's, an actor System's dispatchers'). Unregister the returned
// registration to stop.
func MeasureExecutors(mp metric.MeterProvider, executors func() []loom.Executor) (metric.Registration, error) {
	switch {
	case mp == nil:
		return nil, errors.New("otelweb: measure executors: nil meter provider")
	case executors == nil:
		return nil, errors.New("otelweb: measure executors: nil executors func")
	}
	m := mp.Meter(ScopeName)
	var errs []error
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	seconds := func(name, desc string) metric.Float64ObservableGauge {
		g, err := m.Float64ObservableGauge(name, metric.WithUnit("s"), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	var (
		active     = gauge("executor.active", "{task}", "Tasks running now.")
		queued     = gauge("executor.queued", "{task}", "Tasks admitted and waiting to run.")
		poolSize   = gauge("executor.pool.size", "{task}", "The most tasks that run at once; absent for an executor without a bound.")
		remaining  = gauge("executor.queue.remaining", "{task}", "Room left in the executor's queue; absent for one that queues nothing.")
		limit      = gauge("loom.executor.limit", "{task}", "An adaptive executor's current limit on tasks running at once.")
		peak       = gauge("loom.executor.peak_active", "{task}", "Most tasks ever running at once.")
		completed  = counter("executor.completed", "{task}", "Tasks that returned, panics included.")
		rejected   = counter("executor.rejected", "{task}", "Tasks refused because the executor was full or the thread watch tripped.")
		byWatch    = counter("loom.executor.rejected_by_thread_watch", "{task}", "Tasks refused because the thread watch was tripped (counted in executor.rejected too).")
		expired    = counter("loom.executor.expired", "{task}", "Queued tasks dropped unrun because their context ended before their turn.")
		submitted  = counter("loom.executor.submitted", "{task}", "Tasks admitted.")
		panicked   = counter("loom.executor.panicked", "{task}", "Tasks that panicked.")
		abandoned  = counter("loom.executor.abandoned", "{task}", "Admitted tasks Shutdown gave up on before they started.")
		waitP99    = seconds("loom.executor.queue_wait.p99", "99th percentile of the time from admission to start, sampled.")
		runP99     = seconds("loom.executor.run_time.p99", "99th percentile of task run time, sampled.")
		watchOn    = gauge("loom.thread_watch.running", "1", "1 while a thread watch reads the OS thread count.")
		tripped    = gauge("loom.thread_watch.tripped", "1", "1 while the thread watch is tripped: executors refuse new tasks.")
		threads    = gauge("loom.thread_watch.threads", "{thread}", "OS threads the Go runtime owns at the last reading.")
		inUse      = gauge("loom.thread_watch.threads_in_use", "{thread}", "OS threads in use, estimated: the count the marks apply to.")
		watchLimit = gauge("loom.thread_watch.limit", "{thread}", "The runtime's thread limit at the last reading.")
		high       = gauge("loom.thread_watch.high", "{thread}", "Threads in use at which the watch trips.")
		episodes   = counter("loom.thread_watch.episodes", "{episode}", "Times a thread watch tripped.")
	)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	instruments := []metric.Observable{active, queued, poolSize, remaining, limit, peak, completed, rejected, byWatch,
		expired, submitted, panicked, abandoned, waitP99, runP99, watchOn, tripped, threads, inUse, watchLimit, high, episodes}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		seen := map[string]bool{}
		for i, e := range executors() {
			s := e.Stats()
			base := s.Name
			if base == "" {
				base = "executor-" + strconv.Itoa(i)
			}
			name := base
			for n := 2; seen[name]; n++ {
				name = base + "-" + strconv.Itoa(n)
			}
			seen[name] = true
			at := metric.WithAttributeSet(attribute.NewSet(attribute.String("name", name), attribute.String("loom.executor.kind", string(s.Kind))))
			o.ObserveInt64(active, int64(s.Running), at)
			o.ObserveInt64(queued, int64(s.Queued), at)
			if s.Workers > 0 {
				o.ObserveInt64(poolSize, int64(s.Workers), at)
			}
			if s.QueueCapacity > 0 {
				o.ObserveInt64(remaining, int64(s.QueueCapacity-s.Queued), at)
			}
			if s.Kind == loom.KindAdaptive {
				o.ObserveInt64(limit, int64(s.Limit), at)
			}
			o.ObserveInt64(peak, int64(s.PeakRunning), at)
			o.ObserveInt64(completed, int64(s.Completed), at)
			o.ObserveInt64(rejected, int64(s.Rejected), at)
			o.ObserveInt64(byWatch, int64(s.RejectedByWatch), at)
			o.ObserveInt64(expired, int64(s.Expired), at)
			o.ObserveInt64(submitted, int64(s.Submitted), at)
			o.ObserveInt64(panicked, int64(s.Panicked), at)
			o.ObserveInt64(abandoned, int64(s.Abandoned), at)
			o.ObserveFloat64(waitP99, s.QueueWait.P99.Seconds(), at)
			o.ObserveFloat64(runP99, s.RunTime.P99.Seconds(), at)
		}
		w := loom.WatchedThreads()
		o.ObserveInt64(watchOn, flag(w.Running))
		o.ObserveInt64(tripped, flag(w.Tripped))
		o.ObserveInt64(threads, int64(w.Threads))
		o.ObserveInt64(inUse, int64(w.InUse))
		o.ObserveInt64(watchLimit, int64(w.Limit))
		o.ObserveInt64(high, int64(w.High))
		o.ObserveInt64(episodes, int64(w.Episodes))
		return nil
	}, instruments...)
}

func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
