package bench

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loomrt/loom/internal/harness/browsertest"
)

// chartsState is a JavaScript expression whose value describes, as JSON,
// every ECharts instance of the page: its container's id, the series it
// holds with their values, and how many pixels its canvas has painted.
const chartsState = `JSON.stringify([...document.querySelectorAll("[_echarts_instance_]")].map(el => {
	const option = echarts.getInstanceByDom(el).getOption();
	const canvas = el.querySelector("canvas");
	let painted = 0;
	if (canvas && canvas.width > 0 && canvas.height > 0) {
		const rgba = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
		for (let i = 3; i < rgba.length; i += 4) {
			if (rgba[i] !== 0) painted++;
		}
	}
	return {
		id: el.id,
		series: (option.series || []).map(s => ({
			name: s.name,
			values: (s.data || []).map(d => d !== null && typeof d === "object" && "value" in d ? d.value : d),
		})),
		painted,
	};
}))`

type chartState struct {
	ID     string `json:"id"`
	Series []struct {
		Name   string            `json:"name"`
		Values []json.RawMessage `json:"values"`
	} `json:"series"`
	Painted int `json:"painted"`
}

// TestReportInBrowser opens report.html, as `loom bench` writes it, from
// disk in a headless Chromium, the way a reader opens it. Every chart must
// be an ECharts instance whose series hold the run's data and whose canvas
// is painted; the page must log no console error and make no network
// request at all beyond the file itself, since it is meant to be
// self-contained.
//
// A full `loom bench --quick` takes about two minutes, too long for every
// CI run under the race detector, so the report comes from the same code
// path — Run, then WriteFiles — over two tiny scenarios of the test
// catalogue with two models each, served by real child processes, and a
// tiny step load under adaptive, whose report adds the limit, goodput,
// latency and executor charts over time.
func TestReportInBrowser(t *testing.T) {
	report := runTest(t, "test-ok", "test-sleep", "test-step")
	// The first scenario counts in a unit of its own, as actor-echo counts
	// messages: its bars are in it.
	report.Scenarios[0].Unit = Unit{Name: "msg/s", PerRequest: 1000}
	paths, err := WriteFiles(t.TempDir(), report)
	if err != nil {
		t.Fatalf("WriteFiles: %v", err)
	}
	page := "file://" + filepath.ToSlash(paths[slices.IndexFunc(paths, func(p string) bool { return filepath.Base(p) == "report.html" })])

	var wantIDs []string
	for i, sc := range report.Scenarios {
		for _, run := range sc.Runs {
			if run.Status != StatusOK {
				t.Fatalf("%s under %s: %s (%s); want every run ok, so that every chart has data", sc.Name, run.Model, run.Status, run.Failure)
			}
		}
		for _, kind := range chartKinds(sc) {
			wantIDs = append(wantIDs, fmt.Sprintf("s%d%s", i, kind))
		}
	}
	if step := report.Scenarios[len(report.Scenarios)-1]; !slices.Contains(chartKinds(step), "limit") {
		t.Fatalf("%s: no adaptive limit sampled, so no limit chart to check", step.Name)
	}

	tab := browsertest.Start(t)
	tab.Do(t, "open report.html", chromedp.Navigate(page),
		// Charts paint on animation frames after the load: wait until every
		// chart has painted something.
		chromedp.Poll[chromedp.Void](fmt.Sprintf(
			`(s => s.length === %d && s.every(c => c.painted > 0))(JSON.parse(%s))`, len(wantIDs), chartsState)))

	var charts []chartState
	if err := json.Unmarshal([]byte(browsertest.Eval[string](t, tab, chartsState)), &charts); err != nil {
		t.Fatalf("the charts' state: %v", err)
	}
	var gotIDs []string
	for _, c := range charts {
		gotIDs = append(gotIDs, c.ID)
		if len(c.Series) == 0 {
			t.Errorf("chart %s has no series", c.ID)
		}
		for _, s := range c.Series {
			if len(s.Values) == 0 {
				t.Errorf("chart %s, series %q has no data", c.ID, s.Name)
			}
		}
	}
	if !slices.Equal(gotIDs, wantIDs) {
		t.Errorf("charts: got %q; want %q (4 per scenario, 8 for the step)", gotIDs, wantIDs)
	}

	// The throughput bars are the report's figures; the time series have a
	// series per model.
	for i, sc := range report.Scenarios {
		byID := map[string]chartState{}
		for _, c := range charts {
			byID[c.ID] = c
		}
		var want []float64
		var models []string
		for _, run := range sc.Runs {
			want = append(want, round(sc.Unit.of(run.Throughput), 1))
			models = append(models, run.Model)
		}
		bars := byID[fmt.Sprintf("s%dthroughput", i)]
		if len(bars.Series) != 2 || bars.Series[0].Name != sc.Unit.String() || bars.Series[1].Name != roundsSeries {
			t.Errorf("%s throughput chart: %d series, the first %q; want two, %q and %q", sc.Name, len(bars.Series), seriesName(bars),
				sc.Unit, roundsSeries)
		}
		if len(bars.Series) == 2 {
			for j, v := range bars.Series[1].Values {
				var five []float64
				if err := json.Unmarshal(v, &five); err != nil || len(five) != 5 || five[0] > five[2] || five[2] > five[4] {
					t.Errorf("%s throughput box %d: %s (%v); want min ≤ median ≤ max", sc.Name, j, v, err)
				}
			}
			var got []float64
			for _, v := range bars.Series[0].Values {
				var f float64
				if err := json.Unmarshal(v, &f); err != nil {
					t.Errorf("%s throughput bar %s: %v", sc.Name, v, err)
				}
				got = append(got, f)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s throughput bars: got %v; want %v %s", sc.Name, got, want, sc.Unit)
			}
		}
		for _, kind := range chartKinds(sc)[1:] {
			var got []string
			for _, s := range byID[fmt.Sprintf("s%d%s", i, kind)].Series {
				got = append(got, s.Name)
			}
			want := models
			if kind == "limit" {
				want = []string{"adaptive"} // the only model with a limit
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %s chart: got series %q; want %q", sc.Name, kind, got, want)
			}
		}
	}

	tab.CheckClean(t, "open report.html")
	for _, r := range tab.Requests() {
		if r.URL != page {
			t.Errorf("report.html made a request: %s; want none (the page is self-contained)", r)
		}
	}
	if len(tab.Requests()) == 0 {
		t.Errorf("no request recorded, not even the page's own: the recording is broken")
	}
}

func seriesName(c chartState) string {
	if len(c.Series) == 0 {
		return ""
	}
	return c.Series[0].Name
}

// chartKinds lists the charts report.html draws for sc, in order: four for
// every scenario, the adaptive limit when a run reported one, and goodput,
// latency and the executor's tasks over time for a load whose rate changes.
func chartKinds(sc ScenarioResult) []string {
	kinds := []string{"throughput", "latency", "rss", "threads"}
	if hasLimit(sc) {
		kinds = append(kinds, "limit")
	}
	if len(sc.Plan.Phases) > 0 {
		kinds = append(kinds, "goodput", "latencytime", "executor")
	}
	return kinds
}
