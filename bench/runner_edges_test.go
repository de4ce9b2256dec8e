package bench

import (
	"context"
	"testing"
	"time"

	"github.com/loomrt/loom/load"
)

// TestPlanExpectsCappedModelsToTakeLonger: the runtime a job is expected to
// take (for progress) follows the slower of the scenario's limit and the
// model's own cap, and a model's cap alone when the scenario has no limit.
func TestPlanExpectsCappedModelsToTakeLonger(t *testing.T) {
	const requests = 1000
	quick := Plan{Models: []string{"virtual", "pool:1", "pool:10", "pool:50", "pool:1000"}, Connections: 100,
		Service: 100 * time.Millisecond, Requests: requests, Duration: time.Minute}
	limited := &Scenario{Name: "limited", Quick: quick, Limit: waitLimit} // 100 ÷ 100 ms = 1,000 req/s
	open := &Scenario{Name: "open", Quick: quick, Limit: func(Plan) Limit { return Limit{Formula: "none"} }}
	uncut := quick
	uncut.Duration = 0
	counted := &Scenario{Name: "counted", Quick: uncut, Limit: waitLimit}
	uncounted := quick
	uncounted.Requests = 0
	timed := &Scenario{Name: "timed", Quick: uncounted, Limit: waitLimit}
	jobs, _, err := plan(Options{Quick: true, Catalogue: []*Scenario{limited, open, counted, timed}})
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

// TestWaitLimitFormula: the floor on the run's length is given only for a
// plan with a request count, rounded to a tenth of a second.
func TestWaitLimitFormula(t *testing.T) {
	for _, tt := range []struct {
		p    Plan
		want string
	}{
		{Plan{Connections: 100, Service: 100 * time.Millisecond}, "100 connections ÷ 100ms = 1,000 req/s"},
		{Plan{Connections: 3, Service: 100 * time.Millisecond, Requests: 1000}, "3 connections ÷ 100ms = 30 req/s; 1,000 requests take at least 33.3s"},
	} {
		if got := waitLimit(tt.p).Formula; got != tt.want {
			t.Errorf("waitLimit(%+v).Formula = %q; want %q", tt.p, got, tt.want)
		}
	}
}
