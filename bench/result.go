package bench

import (
	"time"

	"github.com/loomrt/loom/load"
)

// Report is everything one `loom bench` invocation measured. It is what
// results.json holds; WriteJSON and ReadJSON convert it.
type Report struct {
	// Version is the format of this structure; ReadJSON refuses others.
	Version  int       `json:"version"`
	Command  string    `json:"command"` // the command line that made it
	Quick    bool      `json:"quick"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Machine  Machine   `json:"machine"`
	// Rounds is how many rounds each model ran (a plan of its own may run
	// fewer: Plan.Rounds); Seed drew each round's order; Alpha is the
	// significance level of the verdicts.
	Rounds int     `json:"rounds"`
	Seed   uint64  `json:"seed"`
	Alpha  float64 `json:"alpha"`
	// Notes says what was left out and why (peers not built, …).
	Notes     []string         `json:"notes,omitempty"`
	Scenarios []ScenarioResult `json:"scenarios"`
}

// ReportVersion is the Report.Version this package writes. ReadJSON also
// reads version 1, written before rounds: each of its runs reads as one
// round.
const ReportVersion = 2

// ScenarioResult is one scenario's runs, one per model, each summarising
// the model's rounds.
type ScenarioResult struct {
	Name     string `json:"name"`
	Workload string `json:"workload"`
	Seed     string `json:"seed"`
	Changes  string `json:"changes"`
	Plan     Plan   `json:"plan"`
	Limit    Limit  `json:"limit"`
	// Unit is what the runs' Rate counts; absent (results.json files of
	// before it) means req/s.
	Unit Unit       `json:"unit,omitzero"`
	Runs []ModelRun `json:"runs"`
	// Orders lists, per round, the models in the order they ran.
	Orders [][]string `json:"orders,omitempty"`
	// Best is the model with the highest median throughput among runs that
	// served without errors (or among all that served, if none was clean):
	// the one the others are tested against, which beats them only where
	// their Standing says so.
	Best    string `json:"best,omitempty"`
	Verdict string `json:"verdict"`

	ratios [][2]string // the scenario's Ratios, for the verdict
}

// Status says how a run ended.
type Status string

const (
	// StatusOK: every request met its expectations.
	StatusOK Status = "ok"
	// StatusErrors: some requests failed (timeouts, 503s, wrong bodies).
	StatusErrors Status = "errors"
	// StatusFailed: no request was served, or the run could not start.
	StatusFailed Status = "failed"
	// StatusCrashed: the server under test died during the run.
	StatusCrashed Status = "crashed"
)

// ModelRun is one scenario under one model, over its rounds. Throughput and
// Latency are medians over the rounds, Requests and Errors totals, Status
// the worst round's; the server's figures and samples, Load, Client, Steps,
// Idle and Unloaded are the median round's (summariseRounds).
type ModelRun struct {
	Model  string `json:"model"`
	Status Status `json:"status"`
	// Failure says why a run failed or crashed: the server's fatal error,
	// or what went wrong starting it.
	Failure string `json:"failure,omitempty"`
	// Stderr holds the server's last lines of standard error when it
	// crashed, each cut to its first 300 bytes and "…".
	Stderr []string `json:"stderr,omitempty"`

	// Throughput is served requests per second.
	Throughput float64 `json:"throughput"`
	// Rate is Throughput in the scenario's Unit (msg/s for actor-echo),
	// the figure the reports show.
	Rate float64 `json:"rate"`
	// Requests counts served requests, Errors failed ones.
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	// RatioToLimit is Throughput over the scenario's limit; 0 without one.
	RatioToLimit float64 `json:"ratio_to_limit,omitempty"`
	// RatioToBest is Throughput over the best model's.
	RatioToBest float64 `json:"ratio_to_best,omitempty"`
	// Standing says how the run compares with the best; P is the U test's
	// p-value against the best's rounds (0 for the best itself).
	Standing Standing `json:"standing,omitempty"`
	P        float64  `json:"p,omitempty"`
	// ThroughputSpread and P99Spread are the median, lowest and highest of
	// the rounds' throughputs (req/s) and 99th percentiles (ns).
	ThroughputSpread Spread `json:"throughput_spread"`
	P99Spread        Spread `json:"p99_spread"`
	// Rounds holds every round's figures, in the order the rounds ran.
	Rounds []Round `json:"rounds,omitempty"`
	// ModelCap is what the model's own concurrency bound allows, when it is
	// below the scenario's limit; 0 otherwise.
	ModelCap float64 `json:"model_cap,omitempty"`

	// Latency holds percentiles of served requests (50, 90, 99, 99.9, 100).
	Latency []Percentile `json:"latency"`
	// Unloaded holds the same percentiles of the plan's unloaded phase,
	// when it has one (Plan.UnloadedRate); nil otherwise.
	Unloaded []Percentile `json:"unloaded_latency,omitempty"`
	// UnloadedErrors counts the unloaded phase's failed requests.
	UnloadedErrors int64 `json:"unloaded_errors,omitempty"`
	// Server is what the server process used.
	Server ServerStats `json:"server"`
	// Idle is what the plan's idle connections cost the server; nil when
	// the plan holds none.
	Idle *IdleStats `json:"idle,omitempty"`
	// Client is the generator's count over time; recorded only in
	// scenarios whose rate changes (Plan.Phases).
	Client []ClientSample `json:"client,omitempty"`
	// Steps says how the run settled after each change of rate; empty
	// unless the plan has phases.
	Steps []StepResult `json:"steps,omitempty"`
	// Database is what a database scenario's median round did to
	// PostgreSQL; nil for the others, and for a run whose server crashed
	// or that was interrupted (its work stopped part way, so the
	// database's count is not held against what its requests claim).
	Database *DatabaseStats `json:"database,omitempty"`
	// Load is the generator's full result: status counts, errors by kind,
	// the encoded HDR histogram and the per-second timeline.
	Load *load.Result `json:"load,omitempty"`
}

// Percentile is one point of a latency distribution.
type Percentile struct {
	Percentile float64       `json:"percentile"`
	Latency    time.Duration `json:"latency_ns"`
}

// latencyPoints are the percentiles a run records for its curve.
var latencyPoints = []float64{50, 75, 90, 95, 99, 99.9, 99.99, 100}

// LatencyAt returns the latency at percentile p among r's recorded points,
// or 0 if it was not recorded.
func (r *ModelRun) LatencyAt(p float64) time.Duration { return at(r.Latency, p) }

// UnloadedAt is LatencyAt for the unloaded phase.
func (r *ModelRun) UnloadedAt(p float64) time.Duration { return at(r.Unloaded, p) }

func at(points []Percentile, p float64) time.Duration {
	for _, pt := range points {
		if pt.Percentile == p {
			return pt.Latency
		}
	}
	return 0
}

// ServerStats summarises the samples of a server under test.
type ServerStats struct {
	PeakRSSBytes       uint64   `json:"peak_rss_bytes"`
	PeakThreads        int      `json:"peak_threads"`
	PeakGoroutines     uint64   `json:"peak_goroutines"`
	PeakNotInGo        uint64   `json:"peak_goroutines_not_in_go"`
	CPUSeconds         float64  `json:"cpu_seconds"` // used during the run
	GCCycles           uint64   `json:"gc_cycles"`   // completed during the run
	RuntimeUnavailable int      `json:"runtime_unavailable,omitempty"`
	Samples            []Sample `json:"samples"`
}

// IdleStats is what a run's idle keep-alive connections cost the server,
// read just before they were opened and just after.
type IdleStats struct {
	Asked int `json:"asked"` // the plan's Idle
	Held  int `json:"held"`  // opened, used once and held through the run
	// Limited says why fewer than Asked were held: a machine limit, or the
	// error that stopped the opening.
	Limited            string  `json:"limited,omitempty"`
	RSSBefore          uint64  `json:"rss_before_bytes"`
	RSSWithIdle        uint64  `json:"rss_with_idle_bytes"`
	RSSPerConn         float64 `json:"rss_per_conn_bytes"` // (RSSWithIdle − RSSBefore) ÷ Held
	GoroutinesBefore   uint64  `json:"goroutines_before"`
	GoroutinesWithIdle uint64  `json:"goroutines_with_idle"`
	ThreadsBefore      int     `json:"threads_before"`
	ThreadsWithIdle    int     `json:"threads_with_idle"`
}

// Sample is one reading of the server, every 100 ms.
type Sample struct {
	// At is the time since the run's load started.
	At         time.Duration `json:"at_ns"`
	RSSBytes   uint64        `json:"rss_bytes"`
	Threads    int           `json:"threads"`
	CPUSeconds float64       `json:"cpu_seconds"`
	// The runtime's own figures; RuntimeOK is false when the metrics
	// listener did not answer in time (an overloaded server).
	RuntimeOK  bool   `json:"runtime_ok"`
	Goroutines uint64 `json:"goroutines,omitempty"`
	NotInGo    uint64 `json:"goroutines_not_in_go,omitempty"`
	GCCycles   uint64 `json:"gc_cycles,omitempty"`
	HeapBytes  uint64 `json:"heap_bytes,omitempty"`
	// Limit is the adaptive executor's limit; 0 for other models.
	Limit int `json:"executor_limit,omitempty"`
	// The executor's Stats: tasks running (InFlight) and queued now, and
	// those rejected and expired since the server started. Peers report
	// none.
	InFlight int    `json:"executor_in_flight,omitempty"`
	Queued   int    `json:"executor_queued,omitempty"`
	Rejected uint64 `json:"executor_rejected,omitempty"`
	Expired  uint64 `json:"executor_expired,omitempty"`
}

// ClientSample is the load generator's count at one moment of a run, about
// every 100 ms: what goodput over time is drawn and judged from.
type ClientSample struct {
	At     time.Duration `json:"at_ns"`  // since the load started
	Served int64         `json:"served"` // requests served so far
	Failed int64         `json:"failed"` // requests failed so far
}
