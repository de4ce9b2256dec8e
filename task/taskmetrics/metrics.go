// Package taskmetrics exports a task.Scheduler's runs as Prometheus
// metrics, fed by task.Hooks: runs by job and outcome, run durations,
// occurrences skipped by reason, and the time of each job's last run and
// last success.
//
// It is a package of its own so that only programs that use it link
// Prometheus. Register it in the registry web/metrics serves, so that one
// scrape covers the whole program:
//
//	m := metrics.Mount(app, "/metrics")
//	tm, err := taskmetrics.New(m.Registry)
//	...
//	s, err := task.NewScheduler(task.WithHooks(tm.Hooks()))
package taskmetrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loomrt/loom/task"
)

// Metrics holds the collectors. It is safe for concurrent use; one Metrics
// may serve several Schedulers if their job names differ.
type Metrics struct {
	runs        *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	skipped     *prometheus.CounterVec
	lastRun     *prometheus.GaugeVec
	lastSuccess *prometheus.GaugeVec
}

// New makes the collectors and registers them in reg; an error if reg
// already holds collectors of the same names.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loom_task_runs_total",
			Help: "Scheduled job runs finished, by job and outcome (success, error, panic).",
		}, []string{"job", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "loom_task_run_duration_seconds",
			Help:    "Time a scheduled job's run took, by job.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 12), // 1 ms … 70 min
		}, []string{"job"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loom_task_skipped_total",
			Help: "Occurrences that did not run here, by job and reason (missed, overlapped, claimed elsewhere).",
		}, []string{"job", "reason"}),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "loom_task_last_run_timestamp_seconds",
			Help: "When each job's last run ended, in Unix seconds.",
		}, []string{"job"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "loom_task_last_success_timestamp_seconds",
			Help: "When each job's last successful run ended, in Unix seconds.",
		}, []string{"job"}),
	}
	for _, c := range []prometheus.Collector{m.runs, m.duration, m.skipped, m.lastRun, m.lastSuccess} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Hooks returns the hooks that feed the metrics; pass them to
// task.WithHooks.
func (m *Metrics) Hooks() task.Hooks {
	return task.Hooks{
		AfterRun: func(job string, _ time.Time, took time.Duration, err error) {
			outcome := "success"
			switch {
			case errors.Is(err, task.ErrPanicked):
				outcome = "panic"
			case err != nil:
				outcome = "error"
			}
			m.runs.WithLabelValues(job, outcome).Inc()
			m.duration.WithLabelValues(job).Observe(took.Seconds())
			m.lastRun.WithLabelValues(job).SetToCurrentTime()
			if err == nil {
				m.lastSuccess.WithLabelValues(job).SetToCurrentTime()
			}
		},
		Skipped: func(job string, reason task.SkipReason, n int) {
			m.skipped.WithLabelValues(job, reason.String()).Add(float64(n))
		},
	}
}
