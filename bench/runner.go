package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/loomrt/loom/internal/harness/procstat"
	"github.com/loomrt/loom/load"
	"github.com/loomrt/loom/web"
)

// Options configures Run. The zero value runs the full catalogue, each
// scenario under its plan's models, with servers re-executed from this
// program's binary, and no peers.
type Options struct {
	// Scenarios names the scenarios to run, in catalogue order; empty
	// means all.
	Scenarios []string
	// Models replaces every scenario's models (executor specs, or
	// "peer:<framework>"); empty means each plan's own.
	Models []string
	// Quick runs each scenario's short plan.
	Quick bool
	// Rounds is how many times each scenario runs every model, a fresh
	// server each time, in an order shuffled per round; 0 means each
	// plan's Rounds, else DefaultRounds (DefaultQuickRounds with Quick).
	// Negative is an error.
	Rounds int
	// Seed draws the rounds' orders; 0 means one from the clock. The report
	// records the seed used, so that an order can be run again.
	Seed uint64

	// Executable serves scenarios: it is run as
	// `Executable [ServeArgs…] serve-scenario NAME --model SPEC …`.
	// Empty means this program (os.Executable).
	Executable string
	ServeArgs  []string
	// Env is added to every server's environment, after the scenario's.
	Env []string
	// StartTimeout bounds how long a server may take to print its
	// listening line before its run fails; 0 means DefaultStartTimeout.
	// Negative is an error.
	StartTimeout time.Duration

	// PeerServer is the path of a built bench/peers peer-server; empty
	// means no peer runs. Peers lists its frameworks; empty means each
	// scenario's Peers, else DefaultPeers.
	PeerServer string
	Peers      []string

	// Catalogue holds the scenarios to choose from; nil means Catalogue().
	Catalogue []*Scenario
	// Progress receives one line per run; nil means none. With Terminal
	// set, the line is redrawn with a bar while the run lasts.
	Progress io.Writer
	Terminal bool
	// Command is recorded in the report ("loom bench --quick").
	Command string
	// Notes are recorded in the report (what was skipped and why).
	Notes []string
}

// DefaultPeers are the peer web frameworks bench/peers serves, the peers of
// a scenario whose Peers does not name its own (actor-echo's actor
// libraries).
var DefaultPeers = []string{"nethttp", "chi", "gin", "echo"}

// DefaultStartTimeout is how long a server under test may take to listen
// when Options.StartTimeout is 0.
const DefaultStartTimeout = 30 * time.Second

// job is one planned run: one model in one round of one scenario.
type job struct {
	scenario *Scenario
	plan     Plan
	model    string
	expected time.Duration
	// round counts from 1, of rounds; position is the run's place in its
	// round's order, from 1; index is the model's in the plan's models.
	round, rounds, position, index int
	models                         []string
}

// Run runs the selected scenarios under each model, one server process at
// a time, and returns the report. Each scenario runs its rounds one after
// the other, each round every model once, in the round's shuffled order;
// then the rounds of each model are summarised and judged. It blocks until
// all runs end. When ctx ends, it stops the current server and returns the
// rounds finished so far with ctx's error. A server that crashes or fails
// is a result, not an error: Run returns an error only for a bad selection
// or a cancelled ctx.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if opts.Rounds < 0 {
		return nil, fmt.Errorf("%w: %d rounds: want 1 or more (0: the default)", ErrNoRuns, opts.Rounds)
	}
	if opts.StartTimeout < 0 {
		return nil, fmt.Errorf("start timeout %s: want above 0 (0: the default)", opts.StartTimeout)
	}
	if opts.Seed == 0 {
		opts.Seed = newSeed()
	}
	jobs, notes, err := plan(opts)
	if err != nil {
		return nil, err
	}
	exe := opts.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find own binary: %w", err)
		}
	}
	report := &Report{
		Version: ReportVersion, Command: opts.Command, Quick: opts.Quick, Rounds: opts.rounds(),
		Seed: opts.Seed, Alpha: Alpha,
		Started: time.Now().UTC(), Machine: DescribeMachine(), Notes: append(slices.Clone(opts.Notes), notes...),
	}
	report.Notes = noteBusy(report.Notes, report.Machine)
	if _, err := procstat.Read(os.Getpid()); errors.Is(err, procstat.ErrUnsupported) {
		report.Notes = append(report.Notes, "servers' RSS, OS threads and CPU time are not measured on "+
			runtime.GOOS+" (they are read from Linux's /proc); the columns show zero")
	}
	prog := newProgress(opts.Progress, opts.Terminal, jobs)
	var current *ScenarioResult
	var rounds [][]ModelRun // per model of the current scenario, its runs so far
	var records [][]Round
	finish := func() {
		if current == nil {
			return
		}
		for m := range current.Plan.Models {
			if len(rounds[m]) > 0 {
				current.Runs = append(current.Runs, summariseRounds(rounds[m], records[m]))
			}
		}
		judge(current)
	}
	for i, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		if current == nil || current.Name != j.scenario.Name {
			finish()
			report.Scenarios = append(report.Scenarios, newScenarioResult(j.scenario, j.plan, j.models))
			current = &report.Scenarios[len(report.Scenarios)-1]
			rounds, records = make([][]ModelRun, len(j.models)), make([][]Round, len(j.models))
		}
		if j.position == 1 {
			current.Orders = append(current.Orders, nil)
		}
		current.Orders[len(current.Orders)-1] = append(current.Orders[len(current.Orders)-1], j.model)
		prog.begin(i, j)
		run := runOne(ctx, exe, opts, j, prog.update)
		prog.end(i, j, run)
		rounds[j.index] = append(rounds[j.index], run)
		records[j.index] = append(records[j.index], roundOf(run, j.round, j.position))
	}
	finish()
	report.Finished = time.Now().UTC()
	return report, ctx.Err()
}

// noteBusy appends to notes, when m was busy as the run started (a load
// average above its cores), the note saying so, and returns them.
func noteBusy(notes []string, m Machine) []string {
	if m.LoadAverage > float64(m.Cores) {
		notes = append(notes, fmt.Sprintf("the machine was busy when the run started (load average %.1f on %d cores): "+
			"other processes competed for the CPU, so figures are lower and noisier than on an idle machine", m.LoadAverage, m.Cores))
	}
	return notes
}

// Estimate says how many runs Run would make for opts and about how long
// they would take, from each plan's windows and the cost of starting and
// stopping a server, without running anything. It fails as Run does for a
// bad selection.
func Estimate(opts Options) (runs int, about time.Duration, err error) {
	if opts.Seed == 0 {
		opts.Seed = 1 // the orders do not change the sum
	}
	jobs, _, err := plan(opts)
	if err != nil {
		return 0, 0, err
	}
	for _, j := range jobs {
		about += j.expected + RunOverhead
	}
	return len(jobs), about, nil
}

// rounds is the default number of rounds of a run of opts: Options.Rounds,
// else DefaultRounds or DefaultQuickRounds. A plan may run fewer
// (Plan.Rounds) unless Options.Rounds is given.
func (o Options) rounds() int {
	switch {
	case o.Rounds > 0:
		return o.Rounds
	case o.Quick:
		return DefaultQuickRounds
	}
	return DefaultRounds
}

// startTimeout is how long a server of a run of opts may take to listen:
// Options.StartTimeout, else DefaultStartTimeout.
func (o Options) startTimeout() time.Duration {
	if o.StartTimeout > 0 {
		return o.StartTimeout
	}
	return DefaultStartTimeout
}

// roundsOf is how many rounds plan p runs under opts.
func (o Options) roundsOf(p Plan) int {
	if o.Rounds == 0 && p.Rounds > 0 {
		return p.Rounds
	}
	return o.rounds()
}

// plan expands the options into the list of runs, with notes on what of
// the selection it left out.
//
// Models given (Options.Models) run in each selected scenario that serves
// them (Scenario.checkModel: actor-echo serves its dispatchers, not
// nbio/virtual; peer:gin serves only the workloads gin's peer-server does).
// A scenario named in Options.Scenarios must serve every model given, or
// plan fails naming both. With none named, a scenario leaves out the models
// it cannot serve, and is skipped if it serves none, each with a note; a
// model that no selected scenario serves is an error (a typo, most likely).
// With a PeerServer and no peer among the models, each scenario's peers
// join its models, given or its plan's.
func plan(opts Options) ([]job, []string, error) {
	catalogue := opts.Catalogue
	if catalogue == nil {
		catalogue = Catalogue()
	}
	selected := catalogue
	if len(opts.Scenarios) > 0 {
		selected = nil
		for _, s := range catalogue {
			for _, name := range opts.Scenarios {
				if s.Name == name {
					selected = append(selected, s)
					break
				}
			}
		}
		for _, name := range opts.Scenarios {
			if _, err := Lookup(catalogue, name); err != nil {
				return nil, nil, err
			}
		}
	}
	var notes []string
	if opts.Quick && len(opts.Scenarios) == 0 {
		var out []string
		selected = slices.DeleteFunc(slices.Clone(selected), func(s *Scenario) bool {
			if s.LeaveOutOfQuick {
				out = append(out, s.Name)
			}
			return s.LeaveOutOfQuick
		})
		if len(out) > 0 {
			notes = append(notes, fmt.Sprintf("--quick leaves out %s; name them with --scenario to run their quick plans", joinAnd(out)))
		}
	}
	given, leftOut, err := assignModels(selected, opts)
	if err != nil {
		return nil, nil, err
	}
	var jobs []job
	for _, s := range selected {
		p := s.plan(opts.Quick)
		models := slices.Clone(p.Models)
		if len(opts.Models) > 0 {
			if models = given[s]; len(models) == 0 {
				continue // noted by assignModels
			}
		}
		if opts.PeerServer != "" && !slices.ContainsFunc(opts.Models, IsPeer) {
			for _, peer := range s.peerFrameworks() {
				if len(opts.Peers) == 0 && len(p.Peers) > 0 && !slices.Contains(p.Peers, peer) {
					continue // the plan's own selection
				}
				if len(opts.Peers) == 0 || slices.Contains(opts.Peers, peer) {
					models = append(models, "peer:"+peer)
				}
			}
		}
		limit := s.Limit(p).PerSecond
		n := opts.roundsOf(p)
		for r, order := range roundOrders(len(models), n, opts.Seed, s.Name) {
			for pos, m := range order {
				model := models[m]
				rate := limit
				if bound := modelCap(model, p); bound > 0 && (rate == 0 || bound < rate) {
					rate = bound // a capped model takes its cap's time, up to the plan's Duration
				}
				jobs = append(jobs, job{
					scenario: s, plan: p, model: model, expected: p.expectedRuntime(rate),
					round: r + 1, rounds: n, position: pos + 1, index: m, models: models,
				})
			}
		}
	}
	if len(jobs) == 0 {
		return nil, nil, fmt.Errorf("%w: no scenario and model to run", ErrNoRuns)
	}
	return jobs, append(notes, leftOut...), nil
}

// assignModels checks Options.Models against the selected scenarios, before
// anything starts, and returns the models each scenario runs and notes on
// those left out, by plan's rule.
func assignModels(selected []*Scenario, opts Options) (map[*Scenario][]string, []string, error) {
	if len(opts.Models) == 0 {
		return nil, nil, nil
	}
	named := len(opts.Scenarios) > 0
	runs := map[*Scenario][]string{}
	cannot := map[*Scenario][]string{} // why not, per model left out
	for _, m := range opts.Models {
		if IsPeer(m) && opts.PeerServer == "" {
			return nil, nil, fmt.Errorf("%w: %s: no peer-server to serve it (Options.PeerServer)", ErrBadModel, m)
		}
		served := false
		var whyNot []string
		for _, s := range selected {
			err := s.checkModel(m)
			switch {
			case err == nil:
				runs[s] = append(runs[s], m)
				served = true
				continue
			case named:
				return nil, nil, fmt.Errorf("%w: scenario %s cannot serve %s: %w", ErrBadModel, s.Name, m, err)
			}
			cannot[s] = append(cannot[s], err.Error())
			if !slices.Contains(whyNot, err.Error()) {
				whyNot = append(whyNot, err.Error())
			}
		}
		if !served {
			return nil, nil, fmt.Errorf("%w: no scenario serves %s: %s", ErrBadModel, m, strings.Join(whyNot, "; "))
		}
	}
	return runs, leftOutNotes(selected, runs, cannot), nil
}

// leftOutNotes says which scenarios left out which models and why: one note
// per reason, naming every scenario it applies to, in catalogue order.
func leftOutNotes(selected []*Scenario, runs, cannot map[*Scenario][]string) []string {
	type reason struct {
		skipped bool // the scenario serves none of the models
		why     string
	}
	var order []reason
	names := map[reason][]string{}
	for _, s := range selected {
		if len(cannot[s]) == 0 {
			continue
		}
		r := reason{skipped: len(runs[s]) == 0, why: strings.Join(cannot[s], "; ")}
		if names[r] == nil {
			order = append(order, r)
		}
		names[r] = append(names[r], s.Name)
	}
	var notes []string
	for _, r := range order {
		n := names[r]
		switch {
		case r.skipped && len(n) == 1:
			notes = append(notes, fmt.Sprintf("%s skipped: it serves none of the models given (%s)", n[0], r.why))
		case r.skipped:
			notes = append(notes, fmt.Sprintf("%s skipped: they serve none of the models given (%s)", joinAnd(n), r.why))
		case len(n) == 1:
			notes = append(notes, fmt.Sprintf("%s runs without the models it cannot serve (%s)", n[0], r.why))
		default:
			notes = append(notes, fmt.Sprintf("%s run without the models they cannot serve (%s)", joinAnd(n), r.why))
		}
	}
	return notes
}

// newScenarioResult starts a scenario's result; its plan's Models become
// the models it runs (given or the plan's, with peers).
func newScenarioResult(s *Scenario, p Plan, models []string) ScenarioResult {
	p.Models = models
	return ScenarioResult{
		Name: s.Name, Workload: s.Workload, Seed: s.Seed, Changes: s.Changes,
		Plan: p, Limit: s.Limit(p), Unit: s.Unit, ratios: s.Ratios,
	}
}

// runOne runs one scenario under one model: start the server, load it
// while sampling it, stop it, and say what happened.
func runOne(ctx context.Context, exe string, opts Options, j job, onProgress func(load.Progress)) (run ModelRun) {
	run = ModelRun{Model: j.model}
	dir, err := os.MkdirTemp("", "loom-bench-*")
	if err != nil {
		run.Status, run.Failure = StatusFailed, err.Error()
		return run
	}
	defer os.RemoveAll(dir)
	var db *runDatabase
	if j.scenario.Database != nil {
		if db, err = openDatabase(ctx); err != nil {
			run.Status, run.Failure = StatusFailed, err.Error()
			return run
		}
		defer func() {
			if err := db.drop(context.WithoutCancel(ctx)); err != nil && run.Status != StatusFailed {
				run.Status, run.Failure = StatusFailed, fmt.Sprintf("%v: drop schema %s: %v", ErrDatabase, db.schema, err)
			}
		}()
	}

	path, args := exe, serverArgs(opts, j, dir)
	if IsPeer(j.model) {
		path, args = opts.PeerServer, peerArgs(j)
	}
	env := append(append(os.Environ(), j.scenario.Env...), opts.Env...)
	if j.scenario.ServeModel == nil {
		engine, spec := splitModel(j.model)
		env = append(env, "LOOM_EXECUTOR="+spec, web.EngineEnv+"="+engine)
	}
	if db != nil {
		env = append(env, DatabaseEnv+"="+db.url)
	}
	srv, err := startChild(ctx, path, args, env, opts.startTimeout())
	if err != nil {
		run.Status, run.Failure = StatusFailed, err.Error()
		return run
	}

	sc, p := j.scenario, j.plan
	base := "http://" + srv.httpAddr
	var clientTLS *tls.Config
	if modelTLS(j.model) {
		// The server's certificate is made for the run, on loopback.
		base, clientTLS = "https://"+srv.httpAddr, &tls.Config{InsecureSkipVerify: true}
	}
	targets := sc.Targets(base)
	if p.Idle > 0 {
		var held *load.Held
		run.Idle, held = holdIdle(ctx, srv, targets[0], p)
		defer held.Close()
	}
	var verified Work // the database work the verifier's requests claim
	if sc.TechEmpower != "" {
		if verified, err = verifyTechEmpower(ctx, sc.TechEmpower, base, db); err != nil {
			run.Status, run.Failure = StatusFailed, err.Error()
			if serr := srv.Stop(); serr != nil {
				run.Failure += "; stop: " + serr.Error()
			}
			return run
		}
	}
	cfg := load.Config{
		Targets:     targets,
		Connections: p.Connections,
		Pipeline:    p.Pipeline,
		Rate:        p.Rate,
		Phases:      p.Phases,
		Requests:    p.Requests,
		Duration:    p.Duration,
		Timeout:     p.Timeout,
		TLS:         clientTLS,
		ExpectBody:  []byte(sc.ExpectBody),
		Progress:    onProgress,
	}
	if sc.ExpectStatus != nil {
		cfg.ExpectStatus = sc.ExpectStatus
	}
	cfg.MaxConns = openLoopConns(p)
	if len(p.Phases) > 0 {
		// Goodput over time, from the counts the generator reports; Run
		// calls Progress from one goroutine and has stopped it on return.
		cfg.Progress = func(pr load.Progress) {
			run.Client = append(run.Client, ClientSample{At: pr.Elapsed, Served: pr.Done - pr.Errors, Failed: pr.Errors})
			if onProgress != nil {
				onProgress(pr)
			}
		}
	}

	var warmServed int64
	if p.Warmup > 0 {
		warm := cfg
		warm.Requests, warm.Duration, warm.Progress = 0, p.Warmup, nil
		// Unmeasured: a failing server shows in the measured window.
		if res, _ := load.Run(ctx, warm); res != nil {
			warmServed = res.Requests
		}
	}
	if p.UnloadedRate > 0 {
		run.Unloaded, run.UnloadedErrors = unloaded(ctx, cfg, p)
	}
	var stopWatch func() int
	if db != nil {
		stopWatch = db.watchConnections(ctx, 50*time.Millisecond)
	}
	sampling := startSampler(ctx, srv.cmd.Process.Pid, srv.metricsAddr, time.Now())
	loadCtx, cancelLoad := context.WithCancel(ctx)
	watchDone := make(chan struct{})
	go func() { // a dead server cannot answer: stop loading it
		defer close(watchDone)
		select {
		case <-srv.stopped:
			cancelLoad()
		case <-loadCtx.Done():
		}
	}()
	res, err := load.Run(loadCtx, cfg)
	cancelLoad()
	<-watchDone
	run.Server = sampling.Stop()
	peakConns := 0
	if stopWatch != nil {
		peakConns = stopWatch()
	}
	crashed, how := srv.crashed()
	stopErr := srv.Stop()
	if !crashed && srv.stderr.Died() {
		// It reported a fatal error but had not exited yet: a runtime that
		// dies with 10,000 threads can take longer to print its goroutines
		// than the run had left.
		crashed, how = true, "still dying when stopped: "+exitDescription(stopErr)
	}

	switch {
	case err != nil:
		run.Status, run.Failure = StatusFailed, err.Error()
		return run
	case ctx.Err() != nil:
		run.Status, run.Failure = StatusFailed, "interrupted: "+ctx.Err().Error()
	case crashed:
		run.Status = StatusCrashed
		run.Failure = how
		if fatal := srv.stderr.Fatal(); len(fatal) > 0 {
			run.Failure = strings.Join(fatal, "; ") + " (" + how + ")"
		}
		run.Stderr = srv.stderr.Tail()
	}
	run.Load = res
	run.Requests, run.Errors, run.Throughput = res.Requests, res.Errors.Total(), res.RequestsPerSec
	run.Latency = percentiles(res)
	if bound := modelCap(j.model, p); bound > 0 {
		run.ModelCap = bound
	}
	if len(p.Phases) > 0 {
		run.Client = append(run.Client, ClientSample{At: res.Elapsed, Served: res.Requests, Failed: res.Errors.Total()})
		run.Steps = settle(p.Phases, sc.Limit(p).PerSecond, run)
	}
	if run.Status == "" {
		switch {
		case run.Requests == 0:
			run.Status, run.Failure = StatusFailed, "no request served: "+describeErrors(res)
		case run.Errors > 0:
			run.Status, run.Failure = StatusErrors, describeErrors(res)
		default:
			run.Status = StatusOK
		}
	}
	if db != nil && !crashed && ctx.Err() == nil {
		stats := &DatabaseStats{PeakConnections: peakConns, PeakWaiting: readPoolReport(dir)}
		stats.Claimed = sc.Database.PerRequest.times(warmServed + res.Requests).plus(verified)
		err := db.settle(ctx, 10*time.Second)
		if err == nil {
			stats.Seen, err = db.work(ctx)
		}
		if err != nil {
			err = fmt.Errorf("%w: %w", ErrDatabase, err)
		} else {
			err = stats.check()
		}
		run.Database = stats
		if err != nil {
			run.Status, run.Failure = StatusFailed, err.Error()
		}
	}
	return run
}

// openLoopConns is the most connections the generator may open for p: an
// open loop (a rate or phases) opens them as requests fall due, up to the
// plan's Connections; 0, for a closed loop, leaves the generator's own.
func openLoopConns(p Plan) int {
	if p.Rate > 0 || len(p.Phases) > 0 {
		return p.Connections
	}
	return 0
}

// serverArgs is the command line of a loom server under test.
func serverArgs(opts Options, j job, dir string) []string {
	args := append(append([]string(nil), opts.ServeArgs...),
		"serve-scenario", j.scenario.Name,
		"--model", j.model,
		"--addr", "127.0.0.1:0",
		"--metrics-addr", "127.0.0.1:0",
		"--dir", dir,
	)
	if opts.Quick {
		args = append(args, "--quick") // the child reads the same plan from the catalogue
	}
	return args
}

// describeErrors summarises why requests failed: "1,000 status (404: 1,000)".
func describeErrors(res *load.Result) string {
	e := res.Errors
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, count(n)+" "+what)
		}
	}
	add(e.Status, "unexpected status")
	add(e.Body, "body without the marker")
	add(e.Timeout, "timeouts")
	add(e.TimeoutUnsent, "timeouts waiting for a connection (not sent)")
	add(e.Refused, "refused")
	add(e.Reset, "resets")
	add(e.Connect, "connect errors")
	add(e.Read, "read errors")
	add(e.Write, "write errors")
	add(e.Closed, "closed before a response (not re-sent)")
	if len(parts) == 0 {
		return "no errors"
	}
	s := strings.Join(parts, ", ")
	if e.Status > 0 {
		var codes []string
		for code, n := range res.Status {
			if code < 200 || code > 299 {
				codes = append(codes, fmt.Sprintf("%d×%s", code, count(n)))
			}
		}
		if len(codes) > 0 {
			s += " (" + strings.Join(sortedStrings(codes), ", ") + ")"
		}
	}
	return s
}
