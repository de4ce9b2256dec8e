package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/load"
	"github.com/loomrt/loom/web"
)

// A Scenario is one benchmark workload: the server under test, the load it
// gets, the limit physics sets, and where it comes from. The same value
// describes both sides: the runner reads the load half, and the child
// process started by `loom serve-scenario` reads the server half.
type Scenario struct {
	// Name is how the command line names it ("cask-sleep").
	Name string
	// Workload says in one line what a request does.
	Workload string
	// Seed says what the experiment this scenario reproduces measured.
	Seed string
	// Changes says what differs from the seed and why (a 2-core machine).
	Changes string

	// Peer names the peer-server workload ("hello", "sleep", "block") when
	// peers can serve this scenario; empty when they cannot. Peers, if not
	// empty, lists the only peer frameworks that serve it.
	Peer  string
	Peers []string

	// Full and Quick are the loads of `loom bench` and `loom bench --quick`.
	Full, Quick Plan

	// Unit is what the reports count when a request is not the thing
	// measured (actor-echo's messages); the zero Unit counts requests.
	Unit Unit

	// Env is added to the server's environment ("GOMAXPROCS=1").
	Env []string

	// Limit returns the best throughput physics allows for a plan, with the
	// formula that gives it. PerSecond is 0 when no closed form exists
	// (CPU-bound work whose cost depends on the machine and the framework).
	Limit func(p Plan) Limit

	// Targets returns the requests of the mix against the server at base
	// ("http://127.0.0.1:1234").
	Targets func(base string) []load.Target
	// ExpectBody must occur in every response body; ExpectStatus must accept
	// every status (nil: 2xx).
	ExpectBody   string
	ExpectStatus func(code int) bool

	// TechEmpower, when not empty, names the TechEmpower test type the
	// scenario runs ("db"): each server's answers are checked as the
	// suite's verifier does (verifyTechEmpower) before its load, and one
	// that fails is not loaded.
	TechEmpower string
	// Database, when not nil, gives each run a PostgreSQL schema of its
	// own, seeded before the server starts and dropped after the run; the
	// server finds it in DatabaseEnv. After the run the database's own
	// counters must show the work the served requests claim.
	Database *Database
	// LeaveOutOfQuick keeps the scenario out of `loom bench --quick` unless
	// it is named (--scenario): its quick plan exists for that.
	LeaveOutOfQuick bool

	// Serve mounts the scenario's routes on app, in the child process. dir
	// is an empty directory the runner removes afterwards. The returned
	// function, if any, runs after the app has shut down.
	Serve ServeFunc

	// ServeModel, if not nil, makes the scenario's models its own rather
	// than executor specs and engines (actor-echo's dispatchers): it returns
	// the Serve for model, or an error naming what is wrong with it. Serve
	// is then unused, and the routes run on a virtual executor.
	ServeModel func(model string) (ServeFunc, error)

	// Ratios names pairs of models whose throughput ratio, first over
	// second, the verdict states when both served: the comparisons the
	// scenario exists for ("pool" over "peer:protoactor").
	Ratios [][2]string
}

// ServeFunc is a Scenario's Serve.
type ServeFunc = func(ctx context.Context, app *web.App, p Plan, dir string) (cleanup func() error, err error)

// checkModel returns nil if s can serve model, or an error naming the
// model and saying why not: a bad spec or engine, a model that is not one
// of s's own (ServeModel), or a peer framework that does not serve s.
func (s *Scenario) checkModel(model string) error {
	if IsPeer(model) {
		peers := s.peerFrameworks()
		if !slices.Contains(peers, strings.TrimPrefix(model, "peer:")) {
			if len(peers) == 0 {
				return fmt.Errorf("model %q: no peer framework serves this scenario", model)
			}
			return fmt.Errorf("model %q: this scenario's peers are %s", model, joinAnd(peers))
		}
		return nil
	}
	if s.ServeModel != nil {
		_, err := s.ServeModel(model)
		return err
	}
	return checkModel(model)
}

// peerFrameworks lists the peer frameworks that serve s: its Peers, else
// DefaultPeers; none when no peer serves its workload.
func (s *Scenario) peerFrameworks() []string {
	switch {
	case s.Peer == "":
		return nil
	case len(s.Peers) > 0:
		return s.Peers
	}
	return DefaultPeers
}

// Plan is the size of one scenario's load.
type Plan struct {
	// Models are the execution models the plan runs under unless the user
	// picks others: executor specs for loom.Parse, after an engine if not
	// std, or the scenario's own (Scenario.ServeModel).
	Models []string `json:"models"`
	// Peers, when not empty, are the only peer frameworks of the scenario's
	// that join Models when none are named (Options.Peers); the quick plans
	// run bare net/http alone. Empty: all of the scenario's.
	Peers []string `json:"peers,omitempty"`
	// Connections is the number of client connections, all opened at once;
	// in an open loop (Rate), the most it may open (load.Config.MaxConns),
	// 0 meaning load's default.
	Connections int `json:"connections"`
	// Pipeline, when above 1, is how many requests each connection sends
	// at once (HTTP/1.1 pipelining, load.Config.Pipeline).
	Pipeline int `json:"pipeline,omitempty"`
	// Idle, when positive, is how many more keep-alive connections are
	// opened before the load, each used for one request of the mix and
	// then held idle until the run ends (fewer where file descriptors or
	// local ports run out); the run reports what they cost the server.
	Idle int `json:"idle,omitempty"`
	// Rate, when positive, makes the load an open loop: requests start at
	// this many per second whatever the server does (Connections is then
	// unused), and latency counts from each request's scheduled start.
	Rate float64 `json:"rate,omitempty"`
	// Phases, when not empty, make the load an open loop whose rate
	// changes (load.Config.Phases); Rate is then 0, and Duration their
	// total.
	Phases []load.Phase `json:"phases,omitempty"`
	// Requests stops a run after this many requests; 0: no count.
	Requests int64 `json:"requests,omitempty"`
	// Duration stops a run after this long, whatever Requests says, so that
	// a model that is 50 times slower does not take 50 times as long.
	Duration time.Duration `json:"duration_ns"`
	// Warmup, when positive, is how long each server is loaded before its
	// measured window, by the same closed loop (Connections connections, the
	// same requests), so that its first page faults, GC pacing and
	// connection set-up do not count; nothing of it is measured. 0: none,
	// as in the plans whose handlers wait (a warm-up would leave requests in
	// service into the measured window).
	Warmup time.Duration `json:"warmup_ns,omitempty"`
	// Rounds, when positive, is how many rounds the plan runs by default,
	// in place of Options' default (step-load's quick plan: one, as its
	// verdict reads the settling of each run); Options.Rounds overrides it.
	Rounds int `json:"rounds,omitempty"`
	// Timeout bounds each request; 0 means load's default (30 s).
	Timeout time.Duration `json:"timeout_ns,omitempty"`
	// Service is how long a handler waits (sleeps or blocks) per request;
	// 0 for CPU-bound handlers.
	Service time.Duration `json:"service_ns,omitempty"`
	// MaxThreads, when positive, is the server's OS thread limit
	// (debug.SetMaxThreads); 0 keeps Go's default, 10,000.
	MaxThreads int `json:"max_threads,omitempty"`
	// UnloadedRate, when positive, makes each run begin with an open loop
	// at this many requests a second for UnloadedDuration on the same
	// server, unmeasured but for its latency: the reference the loaded
	// latency is set beside (ModelRun.Unloaded). 0: no such phase.
	UnloadedRate     float64       `json:"unloaded_rate,omitempty"`
	UnloadedDuration time.Duration `json:"unloaded_duration_ns,omitempty"`
}

// Limit is a scenario's physical limit for one plan.
type Limit struct {
	// PerSecond is in requests, whatever the scenario's Unit; 0: no closed
	// form.
	PerSecond float64 `json:"per_second"`
	Formula   string  `json:"formula"` // how PerSecond follows from the plan, in the Unit
}

// Unit is what a scenario's rates are reported in: requests per second, or,
// where one request does many of the things measured, those things per
// second ("msg/s", 10,000 per request). The runner and the load generator
// count requests; the reports multiply by PerRequest, so that a results.json
// without a unit still reads as req/s.
type Unit struct {
	// Name is the rate's unit, "msg/s"; empty means "req/s".
	Name string `json:"name,omitempty"`
	// PerRequest is how many of the unit one request does; 0 means 1.
	PerRequest float64 `json:"per_request,omitempty"`
}

// String returns the unit's name: "req/s" for the zero Unit.
func (u Unit) String() string {
	if u.Name == "" {
		return "req/s"
	}
	return u.Name
}

// of converts requests per second into the unit.
func (u Unit) of(requestsPerSecond float64) float64 {
	if u.PerRequest == 0 {
		return requestsPerSecond
	}
	return requestsPerSecond * u.PerRequest
}

// format writes requests per second in the unit: "8,660,340 msg/s".
func (u Unit) format(requestsPerSecond float64) string {
	return rate(u.of(requestsPerSecond)) + " " + u.String()
}

// plan returns the plan for a quick or full run.
func (s *Scenario) plan(quick bool) Plan {
	if quick {
		return s.Quick
	}
	return s.Full
}

// expectedRuntime estimates how long a run of p takes, for progress.
func (p Plan) expectedRuntime(limit float64) time.Duration {
	if p.Requests > 0 && limit > 0 {
		d := time.Duration(float64(p.Requests) / limit * float64(time.Second))
		if p.Duration == 0 || d < p.Duration {
			return p.Warmup + p.UnloadedDuration + d
		}
	}
	return p.Warmup + p.UnloadedDuration + p.Duration
}

// Concurrency returns how many requests a model lets run at once: the N of
// pool:N, threads:N and limit:N on either engine ("nbio/pool:16" is 16), or
// 0 for models that set no bound (virtual, thread-per-task, peers).
func Concurrency(model string) int {
	_, spec := splitModel(model)
	s, err := loom.ParseSpec(spec)
	if err != nil {
		return 0
	}
	return s.Workers
}

// isSpec reports whether model is an executor spec loom.ParseSpec accepts,
// after its engine if it names one.
func isSpec(model string) bool {
	_, spec := splitModel(model)
	_, err := loom.ParseSpec(spec)
	return err == nil
}

// IsPeer reports whether model names a peer framework ("peer:gin").
func IsPeer(model string) bool {
	return strings.HasPrefix(model, "peer:")
}

// waitLimit is the limit of a scenario whose handlers wait for service per
// request: every connection can have one request in service at a time.
func waitLimit(p Plan) Limit {
	perSecond := float64(p.Connections) / p.Service.Seconds()
	formula := fmt.Sprintf("%s connections ÷ %s = %s req/s", count(int64(p.Connections)), p.Service, count(int64(perSecond)))
	if p.Requests > 0 {
		floor := time.Duration(float64(p.Requests) / perSecond * float64(time.Second))
		formula += fmt.Sprintf("; %s requests take at least %s", count(p.Requests), floor.Round(100*time.Millisecond))
	}
	return Limit{PerSecond: perSecond, Formula: formula}
}

// modelCap is the throughput a model's own bound allows in a waiting
// scenario: min(connections, concurrency) ÷ service time. It returns 0 when
// the model sets no bound below the connections, or the scenario does not
// wait.
func modelCap(model string, p Plan) float64 {
	n := Concurrency(model)
	if n == 0 || p.Service == 0 || n >= p.Connections {
		return 0
	}
	return float64(n) / p.Service.Seconds()
}

// count formats n with thousands separators: 10000 → "10,000".
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// SplitModels splits a comma-separated list of models, keeping each spec's
// own ",key=value" parts with it: "virtual,nbio/limit:1000,queue=9000,pool:16"
// is virtual, nbio/limit:1000,queue=9000 and pool:16. A part that is a key=value
// and not a spec of its own belongs to the model before it.
func SplitModels(list string) []string {
	var models []string
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "":
		case len(models) > 0 && !IsPeer(part) && strings.Contains(part, "=") && !isSpec(part):
			models[len(models)-1] += "," + part
		default:
			models = append(models, part)
		}
	}
	return models
}
