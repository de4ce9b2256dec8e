// Package oteltask traces and measures package task with OpenTelemetry: a
// span per task.Go, the child of its caller's (a request's, in a web
// handler), covering its wait in the executor's queue and its run; a root
// span per scheduled occurrence, carrying the job's name and scheduled
// time; and their figures: loom.task.duration by outcome, and Spring's
// tasks.scheduled.execution and tasks.scheduled.execution.active, with the
// occurrences skipped.
//
// It is a package of its own so that only programs that import it link
// OpenTelemetry. It plugs into task's hooks:
//
//	ot, err := oteltask.New(oteltask.WithTracerProvider(tp), oteltask.WithMeterProvider(mp))
//	…
//	task.SetTracer(ot)                                    // every task.Go
//	s, err := task.NewScheduler(task.WithHooks(ot.Hooks())) // a Scheduler's runs
//
// A task.Go's function gets its caller's context, the trace included, with
// or without this package: the work it does is traced as the caller's
// child either way (loom propagates by default, where Spring's @Async needs
// a TaskDecorator). What this package adds is the task's own span and
// figures.
package oteltask

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"time"

	"github.com/loomrt/loom/internal/otelconfig"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
)

// ScopeName is the instrumentation scope of the package's tracer and meter.
const ScopeName = "github.com/loomrt/loom/task/oteltask"

// An Option configures New.
type Option func(*config)

type config struct {
	tp    trace.TracerProvider
	mp    metric.MeterProvider
	roots bool
}

// WithTracerProvider sets where spans go; default otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets where measurements go; default
// otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithRootSpans gives a span to a task.Go whose context carries no trace
// too, as the root of a trace of its own; by default such a task gets
// none, so that only work done for a traced request or run is traced (and
// a request a sampler left out spawns no traces of its own).
func WithRootSpans() Option { return func(c *config) { c.roots = true } }

// Instrumentation is a task.Tracer for task.SetTracer, and the source of a
// Scheduler's Hooks. It is safe for concurrent use.
type Instrumentation struct {
	tracer trace.Tracer
	roots  bool

	taskDuration metric.Float64Histogram
	runDuration  metric.Float64Histogram
	active       metric.Int64UpDownCounter
	skipped      metric.Int64Counter

	names sync.Map // loom.Executor → its name, from Stats once
}

var _ task.Tracer = (*Instrumentation)(nil)

// New returns the instrumentation; an error if an instrument cannot be
// made.
func New(opts ...Option) (*Instrumentation, error) {
	c := config{}
	for _, o := range opts {
		o(&c)
	}
	c.tp = otelconfig.TracerProvider(c.tp)
	c.mp = otelconfig.MeterProvider(c.mp)
	m := c.mp.Meter(ScopeName)
	in := &Instrumentation{tracer: c.tp.Tracer(ScopeName), roots: c.roots}
	var err1, err2, err3, err4 error
	in.taskDuration, err1 = m.Float64Histogram("loom.task.duration", metric.WithUnit("s"),
		metric.WithDescription("Time from task.Go to its future's completion, queue wait included, by executor and outcome."))
	in.runDuration, err2 = m.Float64Histogram("tasks.scheduled.execution", metric.WithUnit("s"),
		metric.WithDescription("Time a scheduled job's run took, by job and outcome."))
	in.active, err3 = m.Int64UpDownCounter("tasks.scheduled.execution.active", metric.WithUnit("{run}"),
		metric.WithDescription("Scheduled runs in progress, by job."))
	in.skipped, err4 = m.Int64Counter("loom.tasks.scheduled.skipped", metric.WithUnit("{occurrence}"),
		metric.WithDescription("Occurrences that did not run here, by job and reason."))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, err
	}
	return in, nil
}

// goCtx is the context Start returns: the task's span, if it has one,
// and what its duration needs. End finds it by type, never through the
// context's parents, so a task.Go inside another's function ends its own.
type goCtx struct {
	context.Context
	span  trace.Span // nil: the task has no span
	start time.Time
	exec  string
}

var (
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
	newRoot      = trace.WithNewRoot()
)

// Start begins the span of a task.Go, a child of ctx's, when ctx carries
// a trace (or WithRootSpans); task calls it. With neither a span nor
// durations to record it returns ctx.
func (in *Instrumentation) Start(ctx context.Context, exec loom.Executor) context.Context {
	var span trace.Span
	if in.roots || trace.SpanContextFromContext(ctx).IsValid() {
		ctx, span = in.tracer.Start(ctx, "task.Go", internalKind)
		if span.IsRecording() {
			span.SetAttributes(attribute.String("loom.executor.name", in.executorName(exec)))
		}
	}
	if span == nil && !in.taskDuration.Enabled(ctx) {
		return ctx
	}
	return &goCtx{Context: ctx, span: span, start: time.Now(), exec: in.executorName(exec)}
}

// End ends a task.Go's span with its future's error, and records its
// duration; task calls it.
func (in *Instrumentation) End(ctx context.Context, err error) {
	g, ok := ctx.(*goCtx)
	if !ok {
		return
	}
	outcome := outcomeOf(err)
	if g.span != nil {
		if err != nil && g.span.IsRecording() {
			g.span.RecordError(err)
			g.span.SetStatus(codes.Error, outcome)
		}
		g.span.End()
	}
	if in.taskDuration.Enabled(ctx) {
		in.taskDuration.Record(ctx, time.Since(g.start).Seconds(), metric.WithAttributes(
			attribute.String("loom.executor.name", g.exec), attribute.String("outcome", outcome)))
	}
}

// executorName is exec's name (Stats().Name), read once per executor;
// "" if unnamed.
func (in *Instrumentation) executorName(exec loom.Executor) string {
	if !reflect.TypeOf(exec).Comparable() {
		return exec.Stats().Name // cannot be a map key
	}
	if n, ok := in.names.Load(exec); ok {
		return n.(string)
	}
	n, _ := in.names.LoadOrStore(exec, exec.Stats().Name)
	return n.(string)
}

// outcomeOf names how a task or run ended, as Micrometer's outcome tag:
// SUCCESS, ERROR, or PANIC; REJECTED when an executor refused it or dropped
// it unrun.
func outcomeOf(err error) string {
	switch {
	case err == nil:
		return "SUCCESS"
	case errors.Is(err, task.ErrPanicked):
		return "PANIC"
	case errors.Is(err, loom.ErrRejected), errors.Is(err, loom.ErrClosed), errors.Is(err, loom.ErrAbandoned):
		return "REJECTED"
	}
	return "ERROR"
}

// Hooks returns the hooks for a Scheduler (task.WithHooks): a root span per
// run, named by its job, with the job's name (loom.job.name) and scheduled
// time (loom.job.scheduled_time); the runs' durations and the runs in
// progress; and the occurrences skipped, by reason.
func (in *Instrumentation) Hooks() task.Hooks {
	return task.Hooks{
		Trace: func(ctx context.Context, job string, at time.Time) (context.Context, func(error)) {
			ctx, span := in.tracer.Start(ctx, job, internalKind, newRoot, trace.WithAttributes(
				attribute.String("loom.job.name", job),
				attribute.String("loom.job.scheduled_time", at.Format(time.RFC3339Nano))))
			return ctx, func(err error) {
				if err != nil {
					span.RecordError(err)
					span.SetStatus(codes.Error, outcomeOf(err))
				}
				span.End()
			}
		},
		BeforeRun: func(job string, _ time.Time) {
			in.active.Add(context.Background(), 1, metric.WithAttributes(attribute.String("loom.job.name", job)))
		},
		AfterRun: func(job string, _ time.Time, took time.Duration, err error) {
			ctx := context.Background()
			in.active.Add(ctx, -1, metric.WithAttributes(attribute.String("loom.job.name", job)))
			in.runDuration.Record(ctx, took.Seconds(), metric.WithAttributes(
				attribute.String("loom.job.name", job), attribute.String("outcome", outcomeOf(err))))
		},
		Skipped: func(job string, reason task.SkipReason, n int) {
			in.skipped.Add(context.Background(), int64(n), metric.WithAttributes(
				attribute.String("loom.job.name", job), attribute.String("reason", reason.String())))
		},
	}
}
