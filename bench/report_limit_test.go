package bench

import (
	"strings"
	"testing"
	"time"
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
