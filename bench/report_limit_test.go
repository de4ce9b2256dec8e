package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/load"
)

// The HTML report draws the adaptive limit over time, for the runs that
// reported one, and only when one did.
func TestReportChartsAdaptiveLimit(t *testing.T) {
	run := func(model string, limits ...int) ModelRun {
		r := ModelRun{Model: model, Status: StatusOK}
		for i, l := range limits {
			r.Server.Samples = append(r.Server.Samples, Sample{At: time.Duration(i) * sampleEvery, RuntimeOK: true, Limit: l})
		}
		return r
	}
	without := ScenarioResult{Name: "overload", Runs: []ModelRun{run("virtual", 0, 0)}}
	with := ScenarioResult{Name: "overload", Runs: []ModelRun{run("virtual", 0, 0), run("adaptive", 20, 40, 13)}}
	if got := strings.Join(scenarioCharts(0, without), ""); strings.Contains(got, "adaptive limit over time") {
		t.Error("a limit chart without an adaptive run")
	}
	var limitChart string
	for _, snippet := range scenarioCharts(0, with) {
		if strings.Contains(snippet, "adaptive limit over time") {
			limitChart = snippet
		}
	}
	if limitChart == "" {
		t.Fatal("no limit chart for the adaptive run")
	}
	if strings.Contains(limitChart, `"name":"virtual"`) || !strings.Contains(limitChart, `"name":"adaptive"`) {
		t.Errorf("limit chart series: want adaptive only:\n%.600s", limitChart)
	}
}

// TestReportChartsOnlyWhatWasRead: the executor chart of a stepped scenario
// draws the runs whose runtime was read, not peers (they have no
// executor) nor runs never read, and skips the samples not read in time;
// the RSS chart, read from /proc, keeps those samples.
func TestReportChartsOnlyWhatWasRead(t *testing.T) {
	samples := func(runtimeOK ...bool) []Sample {
		var out []Sample
		for i, ok := range runtimeOK {
			s := Sample{At: time.Duration(i) * time.Second, RSSBytes: 123 << 20, RuntimeOK: ok, InFlight: 7, Limit: 7}
			if !ok {
				s.RSSBytes, s.InFlight, s.Limit = 321<<20, 999, 999
			}
			out = append(out, s)
		}
		return out
	}
	sc := ScenarioResult{Name: "step", Plan: Plan{Phases: []load.Phase{{Rate: 10, Duration: time.Second}}}, Runs: []ModelRun{
		{Model: "virtual", Status: StatusOK, Server: ServerStats{Samples: samples(true, false, true)},
			Load: &load.Result{Timeline: []load.Second{{Second: 0, Requests: 1, LatencyTotal: time.Millisecond}}}},
		{Model: "peer:gin", Status: StatusOK, Server: ServerStats{Samples: samples(true, true)}},
		{Model: "unread", Status: StatusOK, Server: ServerStats{Samples: samples(false, false)}, Load: &load.Result{}},
	}}
	chart := func(title string) string {
		for _, snippet := range scenarioCharts(0, sc) {
			if strings.Contains(snippet, title) {
				return snippet
			}
		}
		t.Fatalf("no chart %q", title)
		return ""
	}
	executor := chart("executor: tasks running + queued")
	if !strings.Contains(executor, `"name":"virtual"`) || strings.Contains(executor, `"name":"peer:gin"`) || strings.Contains(executor, `"name":"unread"`) {
		t.Errorf("executor chart series: want virtual only:\n%.800s", executor)
	}
	if strings.Contains(executor, "999") || !strings.Contains(executor, "[2,7]") {
		t.Errorf("executor chart: want the samples read (7 at 2 s), not the one missed (999):\n%.800s", executor)
	}
	if limit := chart("adaptive limit over time"); strings.Contains(limit, "999") || !strings.Contains(limit, "[2,7]") {
		t.Errorf("limit chart: want the samples read (7 at 2 s), not the one missed (999):\n%.800s", limit)
	}
	// A run whose generator kept no timeline has no latency over time.
	if latency := chart("latency over time"); !strings.Contains(latency, `"name":"virtual"`) || strings.Contains(latency, `"name":"unread"`) {
		t.Errorf("latency over time series: want virtual only:\n%.800s", latency)
	}
	if rss := chart("server RSS over time"); !strings.Contains(rss, "[1,321]") {
		t.Errorf("RSS chart: want the sample whose runtime was not read (321 MiB at 1 s):\n%.800s", rss)
	}
}

// TestHTMLShowsACrashedServersStderr: the HTML report shows the last lines
// of a crashed server's stderr, and none for a run that did not crash or a
// crashed run that left none.
func TestHTMLShowsACrashedServersStderr(t *testing.T) {
	r := sampleReport()
	r.Scenarios[0].Runs[0].Stderr = []string{"an ok run's chatter"}
	r.Scenarios[0].Runs[2].Stderr = []string{"the crash's last words"}
	page := func() string {
		var b bytes.Buffer
		if err := WriteHTML(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	got := page()
	if strings.Count(got, "last lines of the server's stderr") != 1 || !strings.Contains(got, "the crash&#39;s last words") || strings.Contains(got, "chatter") {
		t.Errorf("page: want one stderr block, the crashed run's:\n%s", excerpt(got, "stderr"))
	}
	r.Scenarios[0].Runs[2].Stderr = nil
	if got := page(); strings.Contains(got, "last lines of the server") {
		t.Errorf("page: a stderr block for a crashed run that left none:\n%s", excerpt(got, "stderr"))
	}
}

// excerpt is the part of s around its first sub.
func excerpt(s, sub string) string {
	i := max(strings.Index(s, sub)-200, 0)
	return s[i:min(i+600, len(s))]
}
