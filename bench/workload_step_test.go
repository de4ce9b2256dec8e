package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/load"
)

// stepRun builds a run of the quick step (500, 2,000, 500 req/s for 4 s
// each) from a limit and a goodput given as functions of time, sampled
// every 100 ms as the sampler and the generator's progress do.
func stepRun(model string, limit func(at time.Duration) int, goodput func(at time.Duration) float64) ModelRun {
	run := ModelRun{Model: model, Status: StatusOK}
	served := 0.0
	for at := time.Duration(0); at <= 12*time.Second; at += sampleEvery {
		run.Server.Samples = append(run.Server.Samples, Sample{At: at, RuntimeOK: true, Limit: limit(at)})
		run.Client = append(run.Client, ClientSample{At: at, Served: int64(served + 0.5)})
		served += goodput(at) * sampleEvery.Seconds()
	}
	return run
}

func TestSettle(t *testing.T) {
	phases := stepPhases(4 * time.Second)
	s := func(seconds float64) time.Duration { return time.Duration(seconds * float64(time.Second)) }
	// The limit holds 10,000 until 0.5 s after the step up, then 15 but
	// for a probe to 40 at 5 s, so it is settled from 5.1 s; after the step
	// down it opens to 1,000 a second later. Goodput serves a backlog at
	// 1,100/s for a second after the step up, then settles at 800/s, and
	// follows the step down at once.
	limit := func(at time.Duration) int {
		switch {
		case at < s(4.45):
			return 10000
		case at > s(4.95) && at < s(5.05):
			return 40
		case at < s(8.95):
			return 15
		default:
			return 1000
		}
	}
	goodput := func(at time.Duration) float64 {
		switch {
		case at < s(3.95):
			return 500
		case at < s(4.95):
			return 1100
		case at < s(7.95):
			return 800
		default:
			return 500
		}
	}
	steps := settle(phases, 1000, stepRun("adaptive", limit, goodput))
	if len(steps) != 2 {
		t.Fatalf("%d steps; want 2", len(steps))
	}
	up, down := steps[0], steps[1]
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"step up: at", up.At.Seconds(), 4},
		{"step up: from", up.From, 500},
		{"step up: to", up.To, 2000},
		{"step up: limit before", float64(up.LimitBefore), 10000},
		{"step up: settled limit", float64(up.SettledLimit), 15},
		{"step up: limit settled after (the probe at 5 s restarts the second)", up.LimitSeconds, 1.1},
		{"step up: goodput allowed", up.Goodput, 1000},
		{"step up: settled goodput", up.SettledGoodput, 800},
		// Over [t, t+1 s], 1,100/s until 5 s and 800/s after: within 10%
		// of 800 (880) from t = 4.8 s.
		{"step up: goodput settled after", up.GoodputSeconds, 0.8},
		{"step down: limit before", float64(down.LimitBefore), 15},
		{"step down: settled limit", float64(down.SettledLimit), 1000},
		{"step down: limit settled after", down.LimitSeconds, 1},
		{"step down: goodput allowed", down.Goodput, 500},
		{"step down: settled goodput", down.SettledGoodput, 500},
		{"step down: goodput settled after", down.GoodputSeconds, 0},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}

	// A limit that never stays in its band for a second, and a model
	// without one.
	flapping := func(at time.Duration) int {
		if at >= s(4) && (at/sampleEvery)%2 == 0 {
			return 30
		}
		return 10
	}
	if got := settle(phases, 1000, stepRun("adaptive", flapping, goodput))[0].LimitSeconds; got != -1 {
		t.Errorf("a limit flapping between 10 and 30 settled after %v s; want -1 (never)", got)
	}
	none := settle(phases, 1000, stepRun("virtual", func(time.Duration) int { return 0 }, goodput))[0]
	if none.SettledLimit != 0 || none.LimitSeconds != -1 || none.SettledGoodput != 800 {
		t.Errorf("a model without a limit: %+v; want no settled limit, -1 s, goodput 800", none)
	}
}

// The text and Markdown reports carry the step table and its definition,
// and the verdict says how the adaptive limit settled.
func TestStepReports(t *testing.T) {
	sc := stepLoad()
	p := sc.Full // with phases of 4 s, as stepRun's
	p.Phases = stepPhases(4 * time.Second)
	p.Duration = phasesLength(p.Phases)
	s := func(seconds float64) time.Duration { return time.Duration(seconds * float64(time.Second)) }
	limit := func(at time.Duration) int {
		if at < s(4.45) {
			return 10000
		}
		return 15
	}
	run := stepRun("adaptive", limit, func(time.Duration) float64 { return 500 })
	run.Throughput, run.Requests = 500, 6000
	run.Steps = settle(p.Phases, sc.Limit(p).PerSecond, run)
	plain := stepRun("virtual", func(time.Duration) int { return 0 }, func(time.Duration) float64 { return 400 })
	plain.Throughput, plain.Requests = 400, 4800
	plain.Steps = settle(p.Phases, sc.Limit(p).PerSecond, plain)
	report := &Report{Scenarios: []ScenarioResult{{Name: sc.Name, Plan: p, Limit: sc.Limit(p), Runs: []ModelRun{run, plain}}}}
	judge(&report.Scenarios[0])

	var text, md bytes.Buffer
	if err := WriteText(&text, report); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, report); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"open loop at 500 req/s for 4s, then 2,000 req/s for 4s, then 500 req/s for 4s",
		"within ±20% of that for 1 s",
		"500 → 2,000 req/s at 4s",
		"10,000 → 15",
		"adaptive's limit went from 10,000 to 15 (settled within 0.5 s)",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown report lacks %q:\n%s", want, md.String())
		}
	}
	if !strings.Contains(md.String(), "| adaptive | 500 → 2,000 req/s at 4s | 10,000 → 15 | 0.5 s |") {
		t.Errorf("Markdown report lacks the step table's row:\n%s", md.String())
	}

	// report.html: the limit, goodput and executor charts, with the steps
	// marked.
	report.Scenarios[0].Runs[1].Load = &load.Result{Timeline: []load.Second{{Second: 3, Requests: 4, LatencyTotal: 10 * time.Millisecond}}}
	var limitChart, goodputChart, executorChart, latencyChart string
	for _, snippet := range scenarioCharts(0, report.Scenarios[0]) {
		switch {
		case strings.Contains(snippet, "adaptive limit over time"):
			limitChart = snippet
		case strings.Contains(snippet, "goodput over time"):
			goodputChart = snippet
		case strings.Contains(snippet, "tasks running + queued"):
			executorChart = snippet
		case strings.Contains(snippet, "latency over time"):
			latencyChart = snippet
		}
	}
	if !strings.Contains(latencyChart, `"name":"virtual"`) || !strings.Contains(latencyChart, `[3.5,2.5]`) {
		t.Errorf("latency chart: want virtual's mean of 2.5 ms in second 3:\n%.2000s", latencyChart)
	}
	if limitChart == "" || goodputChart == "" || executorChart == "" {
		t.Fatalf("charts: limit %t, goodput %t, executor %t; want all three", limitChart != "", goodputChart != "", executorChart != "")
	}
	if !strings.Contains(limitChart, `"xAxis":4`) || !strings.Contains(limitChart, `"xAxis":8`) {
		t.Errorf("limit chart: want the steps at 4 s and 8 s marked:\n%.2000s", limitChart)
	}
	if !strings.Contains(goodputChart, `"name":"virtual"`) || !strings.Contains(goodputChart, `[2,400]`) {
		t.Errorf("goodput chart: want virtual's 400 req/s at 2 s:\n%.2000s", goodputChart)
	}
}

// TestStepEdges: within's band includes its edges; a settling window may
// end exactly at the phase's end and includes a sample at its own end;
// servedAt interpolates between samples, from 0 before the first;
// afterSeconds calls 0 s settled.
func TestStepEdges(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want bool
	}{{49.9, false}, {50, true}, {150, true}, {150.1, false}} {
		if got := within(tt.v, 100, 0.5); got != tt.want {
			t.Errorf("within(%v, 100, 0.5) = %v; want %v", tt.v, got, tt.want)
		}
	}

	w := settleWindow
	times := []time.Duration{0, w / 2, w}
	if got := firstSettled(0, w, times, []float64{100, 100, 100}, 100, 0.1); got != 0 {
		t.Errorf("firstSettled with a window ending at the phase's end = %v; want 0", got)
	}
	if got := firstSettled(0, w, times, []float64{100, 100, 0}, 100, 0.1); got != -1 {
		t.Errorf("firstSettled with the window's last sample out of band = %v; want -1", got)
	}

	// The limit's band is ±20% (docs/benchmarks.md): a first sample 20%
	// off its settled value is settled, 21% is not.
	times = []time.Duration{0, w / 2, w, 3 * w / 2, 2 * w}
	for _, tt := range []struct {
		first, want float64
	}{{120, 0}, {80, 0}, {121, 0.5}, {79, 0.5}} {
		if got := firstSettled(0, 2*w, times, []float64{tt.first, 100, 100, 100, 100}, 100, limitBand); got != tt.want {
			t.Errorf("firstSettled of a limit first at %v, then 100 = %v; want %v", tt.first, got, tt.want)
		}
	}
	// Only the window after a sample counts: a sample out of band later
	// does not unsettle it.
	if got := firstSettled(0, 2*w, times, []float64{100, 100, 100, 100, 200}, 100, 0.1); got != 0 {
		t.Errorf("firstSettled with a sample out of band after the window = %v; want 0", got)
	}

	at := servedAt([]ClientSample{{At: time.Second, Served: 10}, {At: 3 * time.Second, Served: 30}})
	for _, tt := range []struct {
		t    time.Duration
		want float64
	}{{0, 0}, {500 * time.Millisecond, 5}, {time.Second, 10}, {2 * time.Second, 20}, {3 * time.Second, 30}, {4 * time.Second, 30}} {
		if got := at(tt.t); got != tt.want {
			t.Errorf("servedAt(%v) = %v; want %v", tt.t, got, tt.want)
		}
	}
	if got := servedAt([]ClientSample{{At: 0, Served: 5}})(-time.Second); got != 5 {
		t.Errorf("servedAt before a sample at 0 = %v; want its count, 5", got)
	}
	if servedAt(nil) != nil {
		t.Error("servedAt(nil) is not nil")
	}

	if got := afterSeconds(0); got != "settled within 0.0 s" {
		t.Errorf("afterSeconds(0) = %q", got)
	}
	if got := afterSeconds(-1); got != "not settled before the phase ended" {
		t.Errorf("afterSeconds(-1) = %q", got)
	}
}

// TestSettleUsesWhatWasRead: a limit sample the runtime did not answer in
// time is no reading, and a run without the generator's samples has no
// goodput to settle.
func TestSettleUsesWhatWasRead(t *testing.T) {
	phases := stepPhases(4 * time.Second)
	run := ModelRun{Model: "adaptive", Status: StatusOK, Server: ServerStats{Samples: []Sample{
		{At: time.Second, RuntimeOK: true, Limit: 10},
		{At: 3 * time.Second, Limit: 99}, // not read in time
		{At: 5 * time.Second, RuntimeOK: true, Limit: 20},
	}}}
	steps := settle(phases, 1000, run)
	if len(steps) != 2 {
		t.Fatalf("%d steps; want 2", len(steps))
	}
	if up := steps[0]; up.LimitBefore != 10 || up.GoodputSeconds != -1 || up.SettledGoodput != 0 {
		t.Errorf("step up: limit before %d, goodput settled after %v at %v; want 10, and none (-1, 0)", up.LimitBefore, up.GoodputSeconds, up.SettledGoodput)
	}
}

// TestSettleWindowsEndInThePhase: a goodput that reaches its band only in
// a window crossing the phase's end has not settled within the phase.
// (settle's c.At+settleWindow <= end.) The step up runs from 3 s to 6 s
// and settles at 50/s over its last second; the window from 4.9 s serves
// 40, the one from 5.5 s (to 6.5 s) 50.
func TestSettleWindowsEndInThePhase(t *testing.T) {
	phases := stepPhases(3 * time.Second)
	run := ModelRun{Model: "virtual", Status: StatusOK, Client: []ClientSample{
		{At: 3 * time.Second}, {At: 4900 * time.Millisecond}, {At: 5500 * time.Millisecond},
		{At: 6 * time.Second, Served: 50}, {At: 7 * time.Second, Served: 50},
	}}
	up := settle(phases, 1000, run)[0]
	if up.SettledGoodput != 50 || up.GoodputSeconds != -1 {
		t.Errorf("step up: goodput settled at %v after %v s; want 50, never within the phase (-1)", up.SettledGoodput, up.GoodputSeconds)
	}
}
