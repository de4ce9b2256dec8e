// Package metrics serves Prometheus metrics for a web.App: requests by
// route, method and status, a latency histogram by route, recovered panics,
// the counters of every executor the App's routes run on, the state of the
// process's thread watch (loom.WatchedThreads), and the Go runtime's and
// the process's collectors.
//
// It is a package of its own so that only programs that use it link
// Prometheus. It plugs into the App through web.Observer, and reads
// App.Executors at scrape time:
//
//	app, err := web.New()
//	...
//	metrics.Mount(app, "/metrics")
//
// Other packages add their collectors to the same registry
// (Metrics.Registry), so that one scrape covers the whole program.
package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// Metrics holds an App's Prometheus collectors, in a registry of its own so
// that several Apps (tests, benchmarks) can live in one process. It is safe
// for concurrent use.
type Metrics struct {
	// Registry holds the collectors; register more in it to have them
	// served too.
	Registry *prometheus.Registry

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	panics   prometheus.Counter
}

var _ web.Observer = (*Metrics)(nil)

// Mount makes the metrics of app, has app report every request to them,
// and serves them at path (e.g. "/metrics") with the route options opts
// (web.WithExecutor, web.WithDecorators with a decorator that checks who is
// asking). Call it before serving. It panics,
// as app.Handle does, when path does not start with "/" or is taken.
func Mount(app *web.App, path string, opts ...web.RouteOption) *Metrics {
	m := New(app)
	app.Handle(http.MethodGet, path, m.Handler(), opts...)
	app.Observe(m)
	return m
}

// New makes the metrics of app without serving them or observing app: for
// a program that serves them elsewhere (a separate port) and calls
// app.Observe(m) itself.
func New(app *web.App) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
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
			Help: "Handler and decorator panics recovered.",
		}),
	}
	m.Registry.MustRegister(m.requests, m.latency, m.panics,
		executorCollector{app},
		threadWatchCollector{},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// Observe counts one served request; the App calls it.
func (m *Metrics) Observe(r *http.Request, resp web.Response) {
	route := r.Pattern
	if route == "" {
		route = "unmatched" // 404s and 405s: one series, not one per probed path
	}
	m.requests.WithLabelValues(route, methodLabel(r.Method), strconv.Itoa(resp.Status)).Inc()
	m.latency.WithLabelValues(route).Observe(resp.Duration.Seconds())
	if resp.Panicked {
		m.panics.Inc()
	}
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
type executorCollector struct{ app *web.App }

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
	descByWatch      = prometheus.NewDesc("loom_executor_rejected_by_thread_watch_total", "Tasks refused because the thread watch was tripped (also in loom_executor_rejected_total).", executorLabels, nil)
	executorDescs    = []*prometheus.Desc{descSubmitted, descCompleted, descRejected, descPanicked, descRunning, descQueued, descPeakRunning, descQueueWaitP99, descRunTimeP99, descByWatch}
)

func (c executorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range executorDescs {
		ch <- d
	}
}

// Collect reports each executor under a distinct name: executors without
// one are "executor-N", and a name seen already (two executors made with
// one loom.WithName) gets "-2", "-3", …, since Prometheus refuses a whole
// scrape that holds one label set twice.
func (c executorCollector) Collect(ch chan<- prometheus.Metric) {
	seen := map[string]bool{}
	for i, e := range c.app.Executors() {
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
		counter(descByWatch, s.RejectedByWatch)
	}
}

// threadWatchCollector reports loom.WatchedThreads at scrape time: the
// process's thread watch, whichever App or program runs it.
type threadWatchCollector struct{}

var (
	descWatchRunning  = prometheus.NewDesc("loom_thread_watch_running", "1 while a thread watch reads the OS thread count; if 0, the figures are its last reading.", nil, nil)
	descWatchTripped  = prometheus.NewDesc("loom_thread_watch_tripped", "1 while the thread watch is tripped: executors refuse new tasks.", nil, nil)
	descWatchThreads  = prometheus.NewDesc("loom_thread_watch_threads", "OS threads the Go runtime owns, idle ones included, at the last reading.", nil, nil)
	descWatchInUse    = prometheus.NewDesc("loom_thread_watch_threads_in_use", "OS threads in use, estimated: the count the marks apply to.", nil, nil)
	descWatchPeak     = prometheus.NewDesc("loom_thread_watch_peak_threads", "Most OS threads seen by a thread watch.", nil, nil)
	descWatchLimit    = prometheus.NewDesc("loom_thread_watch_limit_threads", "The runtime's thread limit (debug.SetMaxThreads) at the last reading.", nil, nil)
	descWatchHigh     = prometheus.NewDesc("loom_thread_watch_high_threads", "Threads in use at which the watch trips.", nil, nil)
	descWatchLow      = prometheus.NewDesc("loom_thread_watch_low_threads", "Threads in use below which a tripped watch recovers.", nil, nil)
	descWatchEpisodes = prometheus.NewDesc("loom_thread_watch_episodes_total", "Times a thread watch tripped.", nil, nil)
	threadWatchDescs  = []*prometheus.Desc{descWatchRunning, descWatchTripped, descWatchThreads, descWatchInUse, descWatchPeak, descWatchLimit, descWatchHigh, descWatchLow, descWatchEpisodes}
)

func (threadWatchCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range threadWatchDescs {
		ch <- d
	}
}

func (threadWatchCollector) Collect(ch chan<- prometheus.Metric) {
	s := loom.WatchedThreads()
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	flag := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	gauge(descWatchRunning, flag(s.Running))
	gauge(descWatchTripped, flag(s.Tripped))
	gauge(descWatchThreads, s.Threads)
	gauge(descWatchInUse, s.InUse)
	gauge(descWatchPeak, s.PeakThreads)
	gauge(descWatchLimit, s.Limit)
	gauge(descWatchHigh, s.High)
	gauge(descWatchLow, s.Low)
	ch <- prometheus.MustNewConstMetric(descWatchEpisodes, prometheus.CounterValue, float64(s.Episodes))
}
