package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics holds an App's Prometheus collectors, in a registry of its own so
// that several Apps (tests, benchmarks) can live in one process.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	panics   prometheus.Counter
}

func newMetrics(a *App) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loom_http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "loom_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by route pattern.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16), // 0.5 ms … 16 s
		}, []string{"route"}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "loom_http_panics_total",
			Help: "Handler panics recovered.",
		}),
	}
	m.registry.MustRegister(m.requests, m.latency, m.panics,
		executorCollector{a},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

func (m *metrics) observe(r *http.Request, status int, elapsed time.Duration) {
	route := r.Pattern
	if route == "" {
		route = "unmatched" // 404s and 405s: one series, not one per probed path
	}
	m.requests.WithLabelValues(route, methodLabel(r.Method), strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(elapsed.Seconds())
}

// methodLabel keeps the label set bounded when clients send odd methods.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// executorCollector reports every executor's Stats at scrape time.
type executorCollector struct{ app *App }

var (
	executorLabels   = []string{"executor", "kind"}
	descSubmitted    = prometheus.NewDesc("loom_executor_submitted_total", "Tasks admitted.", executorLabels, nil)
	descCompleted    = prometheus.NewDesc("loom_executor_completed_total", "Tasks that returned.", executorLabels, nil)
	descRejected     = prometheus.NewDesc("loom_executor_rejected_total", "Tasks refused because the executor was full.", executorLabels, nil)
	descPanicked     = prometheus.NewDesc("loom_executor_panicked_total", "Tasks that panicked.", executorLabels, nil)
	descRunning      = prometheus.NewDesc("loom_executor_running", "Tasks running now.", executorLabels, nil)
	descQueued       = prometheus.NewDesc("loom_executor_queued", "Tasks admitted and waiting.", executorLabels, nil)
	descPeakRunning  = prometheus.NewDesc("loom_executor_peak_running", "Most tasks ever running at once.", executorLabels, nil)
	descQueueWaitP99 = prometheus.NewDesc("loom_executor_queue_wait_p99_seconds", "99th percentile of time from admission to start.", executorLabels, nil)
	descRunTimeP99   = prometheus.NewDesc("loom_executor_run_time_p99_seconds", "99th percentile of task run time.", executorLabels, nil)
	executorDescs    = []*prometheus.Desc{descSubmitted, descCompleted, descRejected, descPanicked, descRunning, descQueued, descPeakRunning, descQueueWaitP99, descRunTimeP99}
)

func (c executorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range executorDescs {
		ch <- d
	}
}

// Collect reports each executor under a distinct name: executors without
// one are "executor-N", and a name seen already (two App.NewExecutor calls
// with one name) gets "-2", "-3", …, since Prometheus refuses a whole
// scrape that holds one label set twice.
func (c executorCollector) Collect(ch chan<- prometheus.Metric) {
	seen := map[string]bool{}
	for i, e := range c.app.executors() {
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
		labels := []string{name, string(s.Kind)}
		counter := func(d *prometheus.Desc, v uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
		}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
		}
		counter(descSubmitted, s.Submitted)
		counter(descCompleted, s.Completed)
		counter(descRejected, s.Rejected)
		counter(descPanicked, s.Panicked)
		gauge(descRunning, float64(s.Running))
		gauge(descQueued, float64(s.Queued))
		gauge(descPeakRunning, float64(s.PeakRunning))
		gauge(descQueueWaitP99, s.QueueWait.P99.Seconds())
		gauge(descRunTimeP99, s.RunTime.P99.Seconds())
	}
}
