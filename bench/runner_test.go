package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/load"
	"github.com/loomrt/loom/web"
)

func TestRunReportsWhatHappened(t *testing.T) {
	report := runTest(t, "test-ok", "test-404", "test-crash")
	if report.Seed == 0 {
		t.Error("Seed 0: the run was given none and recorded none; want the seed it drew its orders from")
	}
	if got, want := len(report.Scenarios), 3; got != want {
		t.Fatalf("len(Scenarios) = %d; want %d", got, want)
	}
	byName := map[string]ScenarioResult{}
	for _, sc := range report.Scenarios {
		byName[sc.Name] = sc
		if got, want := len(sc.Runs), 2; got != want {
			t.Errorf("%s: %d runs; want %d (virtual, pool:2)", sc.Name, got, want)
		}
		if sc.Verdict == "" {
			t.Errorf("%s: empty verdict", sc.Name)
		}
	}

	for _, run := range byName["test-ok"].Runs {
		if run.Status != StatusOK {
			t.Errorf("test-ok %s: status %s (%s); want ok", run.Model, run.Status, run.Failure)
		}
		if run.Requests == 0 || run.Throughput <= 0 {
			t.Errorf("test-ok %s: %d requests at %.0f req/s; want some", run.Model, run.Requests, run.Throughput)
		}
		if len(run.Server.Samples) == 0 || run.Server.PeakRSSBytes == 0 || run.Server.PeakThreads == 0 {
			t.Errorf("test-ok %s: server stats %+v; want samples with RSS and threads", run.Model, run.Server)
		}
		if run.Server.PeakGoroutines == 0 {
			t.Errorf("test-ok %s: peak goroutines 0; want the runtime's figures over the metrics listener", run.Model)
		}
		if run.LatencyAt(50) <= 0 {
			t.Errorf("test-ok %s: p50 = %v; want > 0", run.Model, run.LatencyAt(50))
		}
	}
	if best := byName["test-ok"].Best; best == "" {
		t.Errorf("test-ok: no best model")
	}

	for _, run := range byName["test-404"].Runs {
		if run.Status != StatusFailed {
			t.Errorf("test-404 %s: status %s; want failed", run.Model, run.Status)
		}
		if !strings.Contains(run.Failure, "404") {
			t.Errorf("test-404 %s: failure %q; want it to name the 404s", run.Model, run.Failure)
		}
		if run.Requests != 0 {
			t.Errorf("test-404 %s: %d served; want 0", run.Model, run.Requests)
		}
	}
	if v := byName["test-404"].Verdict; !strings.HasPrefix(v, "No model served") {
		t.Errorf("test-404 verdict = %q; want it to say no model served", v)
	}

	for _, run := range byName["test-crash"].Runs {
		if run.Status != StatusCrashed {
			t.Errorf("test-crash %s: status %s (%s); want crashed", run.Model, run.Status, run.Failure)
		}
		if !strings.Contains(run.Failure, "test crash: the server died") {
			t.Errorf("test-crash %s: failure %q; want the panic message", run.Model, run.Failure)
		}
		// It had exited when the run ended: its exit says how, not "still dying".
		if !strings.HasSuffix(run.Failure, "(exit status 2)") {
			t.Errorf("test-crash %s: failure %q; want it to end with how the process exited, (exit status 2)", run.Model, run.Failure)
		}
		if len(run.Stderr) == 0 {
			t.Errorf("test-crash %s: no stderr lines", run.Model)
		}
	}
}

func TestRunRejectsUnknownScenario(t *testing.T) {
	_, err := Run(t.Context(), Options{Scenarios: []string{"no-such"}, Catalogue: testCatalogue()})
	if err == nil || !strings.Contains(err.Error(), "no-such") {
		t.Errorf("Run(no-such) = %v; want an error naming it", err)
	}
}

func TestRunRejectsBadModel(t *testing.T) {
	_, err := Run(t.Context(), Options{Models: []string{"virtual", "pol:16"}, Catalogue: testCatalogue()})
	if !errors.Is(err, ErrBadModel) || !strings.Contains(err.Error(), "pol:16") {
		t.Errorf("Run(--models virtual,pol:16) = %v; want ErrBadModel naming pol:16", err)
	}
}

// TestRunServesEachModelOnItsEngine runs a server that names its engine
// in every response: nbio/virtual must be served by nbio, virtual by std,
// whatever LOOM_ENGINE the runner itself has.
func TestRunServesEachModelOnItsEngine(t *testing.T) {
	t.Setenv(web.EngineEnv, "nbio") // the bare model must still be std
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report, err := Run(t.Context(), Options{
		Scenarios: []string{"test-engine"}, Models: []string{"nbio/virtual", "virtual"}, Quick: true,
		Executable: exe, Env: []string{serveEnv + "=1"}, Catalogue: testCatalogue(),
	})
	if err != nil {
		t.Fatal(err)
	}
	runs := report.Scenarios[0].Runs
	if len(runs) != 2 {
		t.Fatalf("%d runs; want 2", len(runs))
	}
	if r := runs[0]; r.Model != "nbio/virtual" || r.Status != StatusOK {
		t.Errorf("nbio/virtual: model %q status %s (%s); want ok, every body naming nbio", r.Model, r.Status, r.Failure)
	}
	if r := runs[1]; r.Status != StatusFailed || !strings.Contains(r.Failure, "body without the marker") {
		t.Errorf("virtual: status %s (%s); want failed, every body naming std", r.Status, r.Failure)
	}
}

// TestRunServesTLSModelsOverHTTPS: std+tls/virtual is served over TLS and
// loaded as https://; virtual, in the same run, is not.
func TestRunServesTLSModelsOverHTTPS(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report, err := Run(t.Context(), Options{
		Scenarios: []string{"test-tls"}, Models: []string{"std+tls/virtual", "virtual"}, Quick: true,
		Executable: exe, Env: []string{serveEnv + "=1"}, Catalogue: testCatalogue(),
	})
	if err != nil {
		t.Fatal(err)
	}
	runs := report.Scenarios[0].Runs
	if len(runs) != 2 {
		t.Fatalf("%d runs; want 2", len(runs))
	}
	if r := runs[0]; r.Model != "std+tls/virtual" || r.Status != StatusOK || r.Requests == 0 {
		t.Errorf("std+tls/virtual: model %q status %s (%s); want ok, every body saying TLS", r.Model, r.Status, r.Failure)
	}
	if r := runs[1]; r.Status != StatusFailed || !strings.Contains(r.Failure, "body without the marker") {
		t.Errorf("virtual: status %s (%s); want failed, no body saying TLS", r.Status, r.Failure)
	}
	if _, err := Run(t.Context(), Options{Models: []string{"nbio+tls/virtual"}, Catalogue: testCatalogue()}); !errors.Is(err, ErrBadModel) ||
		!strings.Contains(err.Error(), "only std serves TLS") {
		t.Errorf("Run(--models nbio+tls/virtual) = %v; want ErrBadModel saying only std serves TLS", err)
	}
}

// TestRunHoldsIdleConnections: the idle connections are held through the
// run, each costing std a goroutine and nbio none, and the report shows them.
func TestRunHoldsIdleConnections(t *testing.T) {
	report := runTest(t, "test-idle")
	sc := report.Scenarios[0]
	for _, r := range sc.Runs {
		if r.Status != StatusOK || r.Idle == nil {
			t.Fatalf("%s: status %s (%s), idle %+v; want ok with idle stats", r.Model, r.Status, r.Failure, r.Idle)
		}
		i := r.Idle
		if i.Asked != 20 || i.Held != 20 || i.Limited != "" {
			t.Errorf("%s: held %d of %d (%q); want all 20", r.Model, i.Held, i.Asked, i.Limited)
		}
		if i.RSSBefore == 0 || i.RSSWithIdle == 0 || i.GoroutinesBefore == 0 || i.ThreadsWithIdle == 0 {
			t.Errorf("%s: idle stats %+v; want the server's RSS, goroutines and threads read", r.Model, i)
		}
		if want := (float64(i.RSSWithIdle) - float64(i.RSSBefore)) / float64(i.Held); i.RSSPerConn != want {
			t.Errorf("%s: %.0f bytes per idle connection; want (%d - %d) / %d = %.0f", r.Model, i.RSSPerConn, i.RSSWithIdle, i.RSSBefore, i.Held, want)
		}
		grew := int64(i.GoroutinesWithIdle) - int64(i.GoroutinesBefore)
		if engine, _ := splitModel(r.Model); (engine == "std") != (grew >= 20) {
			t.Errorf("%s: goroutines %d → %d; want 20 more on std (one per connection), fewer on nbio",
				r.Model, i.GoroutinesBefore, i.GoroutinesWithIdle)
		}
	}
	var text strings.Builder
	if err := WriteText(&text, report); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"beside 20 idle", "per idle conn", "an idle connection costs"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

// TestRunServesTheScenariosOwnModels runs a scenario whose models are its
// own (Scenario.ServeModel): each run's server serves the model it was
// given, and LOOM_EXECUTOR is left as the runner had it rather than set to a
// model no executor spec could parse.
func TestRunServesTheScenariosOwnModels(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR", "pool:3")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{
		Scenarios: []string{"test-own-models"}, Models: []string{"alpha", "beta"}, Quick: true,
		Executable: exe, Env: []string{serveEnv + "=1"}, Catalogue: testCatalogue(),
	}
	report, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	runs := report.Scenarios[0].Runs
	if len(runs) != 2 {
		t.Fatalf("%d runs; want 2", len(runs))
	}
	if r := runs[0]; r.Status != StatusFailed || !strings.Contains(r.Failure, "body without the marker") {
		t.Errorf("alpha: status %s (%s); want failed, every body naming alpha", r.Status, r.Failure)
	}
	if r := runs[1]; r.Model != "beta" || r.Status != StatusOK {
		t.Errorf("beta: model %q status %s (%s); want ok", r.Model, r.Status, r.Failure)
	}
	opts.Models = []string{"beta", "pool:2"}
	if _, err := Run(t.Context(), opts); !errors.Is(err, ErrBadModel) || !strings.Contains(err.Error(), `"pool:2"`) {
		t.Errorf("Run(--models beta,pool:2) = %v; want ErrBadModel naming pool:2", err)
	}
}

func TestCheckModel(t *testing.T) {
	tests := []struct {
		model   string
		wantErr string // "" for none
	}{
		{"virtual", ""},
		{"std/pool:16", ""},
		{"nbio/limit:10,queue=20", ""},
		{"peer:gin", ""},
		{"tomcat/virtual", `unknown connection engine "tomcat" (want one of nbio, std)`},
		{"/virtual", "no engine before the slash"},
		{"nbio/pol:16", `model "nbio/pol:16"`},
		{"nbio/", `model "nbio/"`},
	}
	for _, tt := range tests {
		err := checkModel(tt.model)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("checkModel(%q) = %v; want nil", tt.model, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("checkModel(%q) = %v; want an error saying %s", tt.model, err, tt.wantErr)
		}
	}
}

func TestPlanAddsPeersOnlyWhereTheyServe(t *testing.T) {
	jobs, _, err := plan(Options{Quick: true, PeerServer: "/bin/peer-server", Peers: []string{"chi"}})
	if err != nil {
		t.Fatal(err)
	}
	peersBy := map[string]int{}
	for _, j := range jobs {
		if IsPeer(j.model) && j.round == 1 {
			peersBy[j.scenario.Name]++
		}
	}
	for _, s := range Catalogue() {
		want := 0
		if s.Peer != "" && (len(s.Peers) == 0 || slices.Contains(s.Peers, "chi")) && !s.LeaveOutOfQuick {
			want = 1 // chi serves it; pinning is served by nethttp alone
		}
		if got := peersBy[s.Name]; got != want {
			t.Errorf("%s: %d peer runs; want %d", s.Name, got, want)
		}
	}
	// The default peers: pinning gets exactly its unguarded control.
	jobs, _, err = plan(Options{Quick: true, PeerServer: "/bin/peer-server"})
	if err != nil {
		t.Fatal(err)
	}
	var pinningPeers []string
	for _, j := range jobs {
		if IsPeer(j.model) && j.scenario.Name == "pinning" && j.round == 1 {
			pinningPeers = append(pinningPeers, j.model)
		}
	}
	if !slices.Equal(pinningPeers, []string{"peer:nethttp"}) {
		t.Errorf("pinning peer runs %v; want [peer:nethttp]", pinningPeers)
	}
}

// TestDescribeErrorsNamesEveryKind sets each error kind of load.Errors alone,
// by reflection, so that a kind added to the load package cannot be reported
// as "no errors".
func TestDescribeErrorsNamesEveryKind(t *testing.T) {
	kinds := reflect.TypeFor[load.Errors]()
	for i := range kinds.NumField() {
		f := kinds.Field(i)
		if f.Type.Kind() != reflect.Int64 {
			continue
		}
		res := &load.Result{}
		reflect.ValueOf(&res.Errors).Elem().Field(i).SetInt(3)
		if res.Errors.Total() != 3 {
			t.Fatalf("load.Errors.Total() ignores %s", f.Name)
		}
		if got := describeErrors(res); got == "no errors" || !strings.Contains(got, "3") {
			t.Errorf("describeErrors with %s = 3: %q; want the kind described", f.Name, got)
		}
	}
}

// TestRunDetectsEachFailureAlone runs one fixture for each way a failed
// server is detected: an exit with no fatal line (the exit alone), a fatal
// line from a server that goes on running (the stderr watch alone),
// requests that time out, and an unexpected status (test-404, in
// TestRunReportsWhatHappened).
func TestRunDetectsEachFailureAlone(t *testing.T) {
	report := runTest(t, "test-exit", "test-fatal", "test-timeout")
	runs := map[string]ModelRun{}
	for _, sc := range report.Scenarios {
		if len(sc.Runs) != 1 {
			t.Fatalf("%s: %d runs; want 1", sc.Name, len(sc.Runs))
		}
		runs[sc.Name] = sc.Runs[0]
	}
	for _, tc := range []struct {
		name    string
		status  Status
		want    []string // in Failure
		notWant string   // not in Failure: the other way did not see it
	}{
		{"test-exit", StatusCrashed, []string{"exit status 3"}, "fatal error"},
		{"test-fatal", StatusCrashed, []string{"fatal error: test: dying slowly", "still dying when stopped"}, "exit status 3"},
		{"test-timeout", StatusFailed, []string{"no request served", "timeouts"}, "crash"},
	} {
		run, found := runs[tc.name]
		if !found {
			t.Errorf("%s: not in the report", tc.name)
			continue
		}
		if run.Status != tc.status {
			t.Errorf("%s: status %s (%s); want %s", tc.name, run.Status, run.Failure, tc.status)
		}
		for _, w := range tc.want {
			if !strings.Contains(run.Failure, w) {
				t.Errorf("%s: failure %q; want it to say %q", tc.name, run.Failure, w)
			}
		}
		if strings.Contains(run.Failure, tc.notWant) {
			t.Errorf("%s: failure %q; want no %q", tc.name, run.Failure, tc.notWant)
		}
	}
	// Without a fatal line the failure is how it exited, with nothing in
	// front of it.
	if f := runs["test-exit"].Failure; strings.HasPrefix(f, " (") {
		t.Errorf("test-exit: failure %q; want it to start with how the server exited", f)
	}
}

// TestRunInterleavesRounds runs two models for three rounds: every model
// keeps each of its rounds, each round runs every model once in an order
// drawn from the seed, the report records the seed and the orders, and
// the run's throughput is the median of its rounds'.
func TestRunInterleavesRounds(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report, err := Run(t.Context(), Options{
		Scenarios: []string{"test-ok"}, Quick: true, Rounds: 3, Seed: 7,
		Executable: exe, Env: []string{serveEnv + "=1"}, Catalogue: testCatalogue(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if report.Seed != 7 || report.Rounds != 3 || report.Alpha != Alpha {
		t.Errorf("report seed %d, rounds %d, alpha %v; want 7, 3, %v", report.Seed, report.Rounds, report.Alpha, Alpha)
	}
	sc := report.Scenarios[0]
	want := roundOrders(2, 3, 7, "test-ok")
	if len(sc.Orders) != 3 {
		t.Fatalf("orders %v; want 3 rounds", sc.Orders)
	}
	for r, order := range sc.Orders {
		for pos, model := range order {
			if model != sc.Plan.Models[want[r][pos]] {
				t.Errorf("round %d ran %v; want the seed's order %v of %v", r+1, order, want[r], sc.Plan.Models)
				break
			}
		}
	}
	for _, run := range sc.Runs {
		if len(run.Rounds) != 3 {
			t.Fatalf("%s: %d rounds; want 3", run.Model, len(run.Rounds))
		}
		var sum int64
		for i, rd := range run.Rounds {
			if rd.Round != i+1 || rd.Status != StatusOK || rd.Throughput <= 0 || sc.Orders[i][rd.Position-1] != run.Model {
				t.Errorf("%s: round %+v; want round %d, ok, served, at its place in the order %v", run.Model, rd, i+1, sc.Orders[i])
			}
			sum += rd.Requests
		}
		if s := run.ThroughputSpread; run.Throughput != s.Median || s.Rounds != 3 || s.Min > s.Median || s.Max < s.Median {
			t.Errorf("%s: throughput %v, spread %+v; want the median of 3 rounds", run.Model, run.Throughput, s)
		}
		if run.Requests != sum {
			t.Errorf("%s: %d requests; want the rounds' total, %d", run.Model, run.Requests, sum)
		}
	}
}

// TestRunWarmsUpUnmeasured: a server that fails its first requests serves
// the measured window cleanly after its warm-up.
func TestRunWarmsUpUnmeasured(t *testing.T) {
	report := runTest(t, "test-cold")
	for _, run := range report.Scenarios[0].Runs {
		if run.Status != StatusOK || run.Errors != 0 {
			t.Errorf("%s: status %s with %d errors (%s); want the 503s left in the warm-up", run.Model, run.Status, run.Errors, run.Failure)
		}
	}
}

// TestPlanExpectsCappedModelsToTakeLonger: the runtime a job is expected to
// take (for progress) follows the slower of the scenario's limit and the
// model's own cap, and a model's cap alone when the scenario has no limit.
func TestPlanExpectsCappedModelsToTakeLonger(t *testing.T) {
	const requests = 1000
	quick := Plan{Models: []string{"virtual", "pool:1", "pool:10", "pool:50", "pool:80", "pool:1000"}, Connections: 100,
		Service: 100 * time.Millisecond, Requests: requests, Duration: time.Minute}
	limited := &Scenario{Name: "limited", Quick: quick, Limit: waitLimit} // 100 ÷ 100 ms = 1,000 req/s
	open := &Scenario{Name: "open", Quick: quick, Limit: func(Plan) Limit { return Limit{Formula: "none"} }}
	uncut := quick
	uncut.Duration = 0
	counted := &Scenario{Name: "counted", Quick: uncut, Limit: waitLimit}
	uncounted := quick
	uncounted.Requests = 0
	timed := &Scenario{Name: "timed", Quick: uncounted, Limit: waitLimit}
	low := &Scenario{Name: "low", Quick: quick, Limit: func(Plan) Limit { return Limit{PerSecond: 500, Formula: "500"} }}
	jobs, _, err := plan(Options{Quick: true, Catalogue: []*Scenario{limited, open, counted, timed, low}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{
		"limited virtual":   time.Second,       // the limit: 1,000 req/s
		"limited pool:10":   10 * time.Second,  // its cap: 10 ÷ 100 ms = 100 req/s
		"limited pool:50":   2 * time.Second,   // its cap, 500 req/s, below the limit
		"limited pool:1000": time.Second,       // more workers than connections: no cap
		"limited pool:1":    time.Minute,       // its cap, 10 req/s, would take 100 s: cut at the Duration
		"counted pool:1":    100 * time.Second, // no Duration to cut it
		"timed virtual":     time.Minute,       // no request count: the Duration
		"open virtual":      time.Minute,       // no rate known: the plan's Duration
		"open pool:10":      10 * time.Second,  // its cap, though the scenario has no limit
		"low pool:80":       2 * time.Second,   // the limit, 500 req/s, below its cap of 800
	}
	for _, j := range jobs {
		name := j.scenario.Name + " " + j.model
		w, ok := want[name]
		if !ok {
			continue
		}
		if j.expected != w {
			t.Errorf("%s: expected runtime %v; want %v", name, j.expected, w)
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("no job for %s", name)
	}
}

// TestDescribeErrorsEdges: only the kinds that happened are named, and the
// statuses listed are the ones outside 200–299, only when unexpected
// statuses were counted (an overload run's accepted 503s are not).
func TestDescribeErrorsEdges(t *testing.T) {
	tests := []struct {
		name string
		res  load.Result
		want string
	}{
		{"none", load.Result{}, "no errors"},
		{"one kind", load.Result{Errors: load.Errors{Timeout: 2}}, "2 timeouts"},
		{"accepted statuses not listed", load.Result{Errors: load.Errors{Timeout: 2}, Status: map[int]int64{200: 5, 503: 3}}, "2 timeouts"},
		{"a 2xx refused", load.Result{Errors: load.Errors{Status: 1}, Status: map[int]int64{201: 1}}, "1 unexpected status"},
		{"the 2xx edges", load.Result{Errors: load.Errors{Status: 2}, Status: map[int]int64{199: 1, 200: 4, 299: 5, 300: 1}},
			"2 unexpected status (199×1, 300×1)"},
	}
	for _, tt := range tests {
		if got := describeErrors(&tt.res); got != tt.want {
			t.Errorf("%s: describeErrors = %q; want %q", tt.name, got, tt.want)
		}
	}
}

// TestRunUsesTheGivenExecutable: Options.Executable is the server started,
// not the running binary: a path that does not exist fails every run.
func TestRunUsesTheGivenExecutable(t *testing.T) {
	report, err := Run(context.Background(), Options{
		Scenarios: []string{"test-ok"}, Models: []string{"virtual"}, Quick: true,
		Executable: "/nonexistent/loom", Env: []string{serveEnv + "=1"}, Catalogue: testCatalogue(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := report.Scenarios[0].Runs[0]; r.Status != StatusFailed {
		t.Errorf("a server that cannot start: status %s (%s); want failed", r.Status, r.Failure)
	}
}

// TestRunGivesUpOnASilentServer: a server that never prints its listening
// line fails its run after Options.StartTimeout, and the run goes on to the
// next; a negative StartTimeout is refused (runner.go, the start timeout
// handed to startChild).
func TestRunGivesUpOnASilentServer(t *testing.T) {
	report, err := Run(context.Background(), Options{
		Scenarios: []string{"test-ok"}, Models: []string{"virtual"}, Quick: true, Rounds: 2,
		Executable: "/bin/sh", ServeArgs: []string{"-c", "echo starting >&2; sleep 30"},
		StartTimeout: 200 * time.Millisecond, Catalogue: testCatalogue(),
	})
	if err != nil {
		t.Fatal(err)
	}
	runs := report.Scenarios[0].Runs
	if len(runs) != 1 || runs[0].Status != StatusFailed || !strings.Contains(runs[0].Failure, "no listening line after 200ms") {
		t.Errorf("runs %+v; want one, failed after 200ms without a listening line", runs)
	}
	_, err = Run(context.Background(), Options{Scenarios: []string{"test-ok"}, StartTimeout: -time.Second, Catalogue: testCatalogue()})
	if err == nil || !strings.Contains(err.Error(), "start timeout -1s") {
		t.Errorf("Run(StartTimeout -1s) = %v; want an error naming the start timeout", err)
	}
}

// TestEstimate: Estimate counts the runs Run would make, each model once a
// round, and sums their plans' windows and the cost of a server's start and
// stop, with no seed given; an unknown scenario fails it as it fails Run.
func TestEstimate(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		runs     int
		each     time.Duration
	}{
		{"test-ok", 6, 300 * time.Millisecond},       // two models, three rounds
		{"test-unloaded", 3, 600 * time.Millisecond}, // one model, an unloaded phase before the loaded one
	} {
		runs, about, err := Estimate(Options{Scenarios: []string{tc.scenario}, Quick: true, Rounds: 3, Catalogue: testCatalogue()})
		if want := time.Duration(tc.runs) * (tc.each + RunOverhead); err != nil || runs != tc.runs || about != want {
			t.Errorf("Estimate(%s, 3 rounds) = %d, %v, %v; want %d, %v, nil", tc.scenario, runs, about, err, tc.runs, want)
		}
	}
	if _, _, err := Estimate(Options{Scenarios: []string{"nope"}, Catalogue: testCatalogue()}); !errors.Is(err, ErrUnknownScenario) {
		t.Errorf("Estimate(nope) = %v; want ErrUnknownScenario", err)
	}
}

// TestNoteBusy: a run notes a machine whose load average is above its
// cores as busy, and one at its cores or below not.
func TestNoteBusy(t *testing.T) {
	for _, tc := range []struct {
		load float64
		busy bool
	}{
		{0, false}, {2, false}, {2.01, true}, {9.5, true},
	} {
		got := noteBusy([]string{"given"}, Machine{Cores: 2, LoadAverage: tc.load})
		if busy := len(got) == 2; busy != tc.busy || got[0] != "given" ||
			busy && !strings.Contains(got[1], fmt.Sprintf("load average %.1f on 2 cores", tc.load)) {
			t.Errorf("load average %v on 2 cores: notes %q; want the given one%s", tc.load, got, map[bool]string{true: " and the busy machine's"}[tc.busy])
		}
	}
}

// TestOptionsStartTimeout: a server may take the documented 30 s to start
// when Options.StartTimeout is 0, and the given time otherwise.
func TestOptionsStartTimeout(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want time.Duration
	}{
		{Options{}, 30 * time.Second},
		{Options{StartTimeout: time.Second}, time.Second},
		{Options{StartTimeout: 2 * time.Minute}, 2 * time.Minute},
	} {
		if got := tc.opts.startTimeout(); got != tc.want {
			t.Errorf("Options{StartTimeout: %v}.startTimeout() = %v; want %v", tc.opts.StartTimeout, got, tc.want)
		}
	}
}

// TestOptionsRounds: the rounds a run takes when Options.Rounds is 0 are
// the documented five, four with --quick; a plan's own count replaces them
// and Options.Rounds replaces both.
func TestOptionsRounds(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		plan Plan
		want int
	}{
		{Options{}, Plan{}, 5},
		{Options{Quick: true}, Plan{}, 4},
		{Options{Rounds: 1}, Plan{}, 1},
		{Options{Rounds: 7, Quick: true}, Plan{}, 7},
		{Options{}, Plan{Rounds: 2}, 2},
		{Options{Quick: true}, Plan{Rounds: 3}, 3},
		{Options{Rounds: 6}, Plan{Rounds: 2}, 6},
	} {
		if got := tc.opts.roundsOf(tc.plan); got != tc.want {
			t.Errorf("Options{Rounds: %d, Quick: %t}.roundsOf(Plan{Rounds: %d}) = %d; want %d", tc.opts.Rounds, tc.opts.Quick, tc.plan.Rounds, got, tc.want)
		}
	}
}

// TestLeftOutNotes: one note per reason, worded for one scenario or
// several, and for scenarios skipped whole or run without some models.
func TestLeftOutNotes(t *testing.T) {
	a, b, c, d := &Scenario{Name: "a"}, &Scenario{Name: "b"}, &Scenario{Name: "c"}, &Scenario{Name: "d"}
	runs := map[*Scenario][]string{a: {"virtual"}, c: {"virtual"}}
	cannot := map[*Scenario][]string{a: {"x: why"}, b: {"y: why"}, c: {"z: why"}, d: {"y: why"}}
	got := leftOutNotes([]*Scenario{a, b, c, d}, runs, cannot)
	want := []string{
		"a runs without the models it cannot serve (x: why)",
		"b and d skipped: they serve none of the models given (y: why)",
		"c runs without the models it cannot serve (z: why)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("notes\n%q; want\n%q", got, want)
	}
	got = leftOutNotes([]*Scenario{b}, nil, map[*Scenario][]string{b: {"y: why"}})
	if want := []string{"b skipped: it serves none of the models given (y: why)"}; !slices.Equal(got, want) {
		t.Errorf("notes %q; want %q", got, want)
	}
}

// TestOpenLoopConns: an open loop, by rate or by phases, opens at most the
// plan's connections; a closed loop leaves the generator its own cap.
func TestOpenLoopConns(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Plan
		want int
	}{
		{"rate", Plan{Rate: 1, Connections: 7}, 7},
		{"phases", Plan{Phases: []load.Phase{{Rate: 1, Duration: time.Second}}, Connections: 7}, 7},
		{"closed loop", Plan{Connections: 7}, 0},
	} {
		if got := openLoopConns(tc.p); got != tc.want {
			t.Errorf("%s: %d; want %d", tc.name, got, tc.want)
		}
	}
}
