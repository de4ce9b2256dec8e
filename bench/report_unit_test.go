package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/load"
)

// msgs is the unit the tests give cask-sleep in place of actor-echo's.
var msgs = Unit{Name: "msg/s", PerRequest: 10000}

// unitReport is the sample report with cask-sleep counted in msg/s, 10,000
// a request, and cpu left in req/s.
func unitReport() *Report {
	r := sampleReport()
	r.Scenarios[0].Unit = msgs
	r.Scenarios[0].Limit.Formula = "a formula in the unit: 10,000,000 msg/s" // the scenario's own words
	judge(&r.Scenarios[0])
	return r
}

// sections splits a report at each scenario's heading (marker + name),
// keyed by the scenario's name: what each scenario's part of it says.
func sections(t *testing.T, out, marker string, names ...string) map[string]string {
	t.Helper()
	parts := map[string]string{}
	for i, name := range names {
		start := strings.Index(out, marker+name)
		if start < 0 {
			t.Fatalf("no %q in:\n%s", marker+name, out)
		}
		end := len(out)
		if i+1 < len(names) {
			end = strings.Index(out, marker+names[i+1])
		}
		parts[name] = out[start:end]
	}
	return parts
}

// TestReportsCountInTheScenariosUnit: a scenario with a Unit shows its
// rates, limit and verdict in it in every format, the figures multiplied
// by PerRequest; a scenario without one, in the same report, still reads
// req/s.
func TestReportsCountInTheScenariosUnit(t *testing.T) {
	r := unitReport()
	var text, md, page bytes.Buffer
	for _, w := range []struct {
		buf   *bytes.Buffer
		write func(*bytes.Buffer, *Report) error
	}{
		{&text, func(b *bytes.Buffer, r *Report) error { return WriteText(b, r) }},
		{&md, func(b *bytes.Buffer, r *Report) error { return WriteMarkdown(b, r) }},
		{&page, func(b *bytes.Buffer, r *Report) error { return WriteHTML(b, r) }},
	} {
		if err := w.write(w.buf, r); err != nil {
			t.Fatal(err)
		}
	}
	sleepVerdict := "virtual has the highest throughput, 9,875,000 msg/s (98.8% of the 10,000,000 msg/s limit)"
	capped := "pool:16 is capped at 1,600,000 msg/s by its 16 workers"
	for _, tt := range []struct {
		format, out, marker string
		sleep, cpu          []string // what each scenario's part must say
	}{
		{"text", text.String(), "== ",
			[]string{"msg/s", "9,875,000", "1,582,500", sleepVerdict, capped},
			[]string{"req/s", "2,000", "virtual has the highest throughput, 2,000 req/s"}},
		{"markdown", md.String(), "### ",
			[]string{"| model | msg/s |", "| 9,875,000 |", sleepVerdict, capped},
			[]string{"| model | req/s |", "| 2,000 |"}},
		{"html", page.String(), `<h2 id="`,
			[]string{"<th>msg/s</th>", "<td>9,875,000</td>", sleepVerdict, capped,
				"cask-sleep: throughput (msg/s)", `"subtext":"limit 10,000,000 msg/s"`, `"name":"msg/s"`, "9875000",
				`"containLabel":true`}, // labels of 10 digits stay inside the chart
			[]string{"<th>req/s</th>", "<td>2,000</td>", "cpu: throughput (req/s)", `"name":"req/s"`}},
	} {
		parts := sections(t, tt.out, tt.marker, "cask-sleep", "cpu")
		for name, wants := range map[string][]string{"cask-sleep": tt.sleep, "cpu": tt.cpu} {
			for _, want := range wants {
				if !strings.Contains(parts[name], want) {
					t.Errorf("%s report, %s: lacks %q:\n%s", tt.format, name, want, parts[name])
				}
			}
		}
		if strings.Contains(parts["cask-sleep"], "req/s") {
			t.Errorf("%s report, cask-sleep: says req/s; want msg/s throughout:\n%s", tt.format, parts["cask-sleep"])
		}
		if strings.Contains(parts["cpu"], "msg/s") {
			t.Errorf("%s report, cpu: says msg/s; want req/s throughout:\n%s", tt.format, parts["cpu"])
		}
	}
}

// TestJSONCarriesTheUnit: results.json holds each scenario's unit (none for
// a scenario in req/s) and each run's rate in it, beside the throughput in
// requests.
func TestJSONCarriesTheUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, unitReport()); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Scenarios []struct {
			Unit *Unit `json:"unit"`
			Runs []struct {
				Throughput float64  `json:"throughput"`
				Rate       *float64 `json:"rate"`
			} `json:"runs"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(b.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	sleep, cpu := raw.Scenarios[0], raw.Scenarios[1]
	if sleep.Unit == nil || *sleep.Unit != msgs {
		t.Errorf("cask-sleep unit %v; want %v", sleep.Unit, msgs)
	}
	if cpu.Unit != nil {
		t.Errorf("cpu unit %v; want none (req/s)", *cpu.Unit)
	}
	for _, tt := range []struct {
		name       string
		throughput float64
		rate       *float64
		want       float64
	}{
		{"cask-sleep virtual", sleep.Runs[0].Throughput, sleep.Runs[0].Rate, 9875000},
		{"cask-sleep thread-per-task", sleep.Runs[2].Throughput, sleep.Runs[2].Rate, 0},
		{"cpu virtual", cpu.Runs[0].Throughput, cpu.Runs[0].Rate, 2000},
	} {
		if tt.rate == nil || *tt.rate != tt.want {
			t.Errorf("%s: rate %v (throughput %g req/s); want %g", tt.name, tt.rate, tt.throughput, tt.want)
		}
	}
	if got := sleep.Runs[0].Throughput; got != 987.5 {
		t.Errorf("cask-sleep virtual throughput %g; want 987.5, in requests whatever the unit", got)
	}
}

// oldResults is a results.json of before units: actor-echo in req/s, its
// runs without a rate.
const oldResults = `{"version": 1, "command": "loom bench actor-echo", "scenarios": [{
	"name": "actor-echo", "workload": "GET /echo …; req/s × 10,000 is messages per second",
	"plan": {"models": ["pool"], "connections": 64, "duration_ns": 1500000000},
	"limit": {"per_second": 866, "formula": "… = 866 req/s"},
	"runs": [{"model": "pool", "status": "ok", "throughput": 1234.5, "requests": 1851}],
	"best": "pool", "verdict": "pool is best at 1,235 req/s."}]}`

// TestOldResultsStillRead: a results.json written before units reads as
// req/s, its runs' rates their throughputs, and renders and compares as
// before.
func TestOldResultsStillRead(t *testing.T) {
	old, err := ReadJSON(strings.NewReader(oldResults))
	if err != nil {
		t.Fatal(err)
	}
	sc := old.Scenarios[0]
	if sc.Unit != (Unit{}) || sc.Runs[0].Rate != 1234.5 {
		t.Errorf("unit %+v, rate %g; want none and the throughput, 1234.5", sc.Unit, sc.Runs[0].Rate)
	}
	var text bytes.Buffer
	if err := WriteText(&text, old); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"req/s", "1,235", "pool is best at 1,235 req/s."} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report of an old file lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "msg/s") {
		t.Errorf("text report of an old file says msg/s:\n%s", text.String())
	}

	// Against a new run in msg/s: each side in its own unit, the ratio
	// from the requests.
	cur, err := ReadJSON(strings.NewReader(oldResults))
	if err != nil {
		t.Fatal(err)
	}
	cur.Scenarios[0].Unit = Unit{Name: "msg/s", PerRequest: 10000}
	cur.Scenarios[0].Runs[0].Throughput = 2469
	changes := Compare(old, cur)
	if len(changes) != 1 || !near(changes[0].Ratio, 2) {
		t.Fatalf("changes %+v; want one, new ÷ old = 2", changes)
	}
	var cmp bytes.Buffer
	if _, err := WriteComparison(&cmp, changes); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1,235 req/s", "24,690,000 msg/s", "2.00"} {
		if !strings.Contains(cmp.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, cmp.String())
		}
	}
}

// TestRunnerCarriesTheUnit: the scenario's unit reaches its result and the
// progress line of each run.
func TestRunnerCarriesTheUnit(t *testing.T) {
	s := &Scenario{Name: "echo", Unit: msgs, Limit: func(Plan) Limit { return Limit{PerSecond: 10} }}
	if got := newScenarioResult(s, Plan{}, nil).Unit; got != msgs {
		t.Errorf("result unit %+v; want %+v", got, msgs)
	}
	var out bytes.Buffer
	j := job{scenario: s, model: "pool"}
	p := newProgress(&out, false, []job{j})
	p.begin(0, j)
	p.end(0, j, ModelRun{Model: "pool", Status: StatusOK, Throughput: 12.5})
	if !strings.Contains(out.String(), "125,000 msg/s") {
		t.Errorf("progress %q; want the rate in msg/s, 125,000", out.String())
	}
}

func TestUnit(t *testing.T) {
	for _, tt := range []struct {
		u    Unit
		want string
	}{
		{Unit{}, "1,500 req/s"},
		{Unit{Name: "msg/s"}, "1,500 msg/s"}, // PerRequest 0 means 1
		{msgs, "15,000,000 msg/s"},
	} {
		if got := tt.u.format(1500); got != tt.want {
			t.Errorf("%+v.format(1500) = %q; want %q", tt.u, got, tt.want)
		}
	}
}

// TestGoodputChartCountsInTheUnit: where the offered rate changes, the
// goodput over time is in the scenario's unit too.
func TestGoodputChartCountsInTheUnit(t *testing.T) {
	half := 500 * time.Millisecond
	sc := ScenarioResult{
		Name: "step", Unit: msgs,
		Plan: Plan{Phases: []load.Phase{{Rate: 100, Duration: half}, {Rate: 100, Duration: half}}},
		Runs: []ModelRun{{Model: "pool", Status: StatusOK, Client: []ClientSample{{At: 0}, {At: half, Served: 50}, {At: 2 * half, Served: 100}}}},
	}
	var goodput string
	for _, snippet := range scenarioCharts(0, sc) {
		if strings.Contains(snippet, "goodput over time") {
			goodput = snippet
		}
	}
	// 50 requests a half second: 100 req/s, 1,000,000 msg/s.
	for _, want := range []string{"goodput over time (msg/s, per 0.5 s)", `"name":"msg/s"`, "[0.5,1000000]", "[1,1000000]"} {
		if !strings.Contains(goodput, want) {
			t.Errorf("goodput chart lacks %q:\n%s", want, goodput)
		}
	}
}

// TestActorEchoCountsMessages: actor-echo's rates are messages per second,
// every message of a request counted, and its limit is stated in them.
func TestActorEchoCountsMessages(t *testing.T) {
	s, err := Lookup(Catalogue(), "actor-echo")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Unit{Name: "msg/s", PerRequest: 2 * actorEchoRounds * actorEchoBatch}); s.Unit != want {
		t.Errorf("unit %+v; want %+v", s.Unit, want)
	}
	if l := s.Limit(s.Quick); strings.Contains(l.Formula, "req/s") || !strings.Contains(l.Formula, "msg/s") {
		t.Errorf("limit formula %q; want it in msg/s alone", l.Formula)
	}
}
