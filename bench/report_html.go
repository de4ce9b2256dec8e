package bench

import (
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/loomrt/loom/bench/internal/echartsjs"
)

// WriteHTML writes the report as one self-contained page: the tables and
// verdicts, and per scenario charts of throughput per model (the median as
// a bar, the rounds as a box with whiskers), latency
// percentiles, and the server's RSS and OS threads over time. The charts are
// drawn by ECharts, inlined into the page, so it opens with no network.
func WriteHTML(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>loom bench: %s</title>\n",
		html.EscapeString(r.Started.Format("2006-01-02 15:04 UTC")))
	fmt.Fprint(ew, "<style>\nbody{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}\n"+
		"table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}"+
		"td:first-child,th:first-child,td:last-child{text-align:left}th{background:#f3f3f3}\n"+
		".verdict{background:#f6f8ff;border-left:4px solid #46c;padding:.5em 1em}.charts{display:flex;flex-wrap:wrap;gap:8px}"+
		"pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:12px}\n</style>\n")
	// The library goes first, inline: the chart scripts below call echarts.init.
	fmt.Fprintf(ew, "<script>%s</script>\n</head>\n<body>\n", echartsjs.Script)
	fmt.Fprintf(ew, "<h1>loom bench</h1>\n<p>Command: <code>%s</code><br>Machine: %s<br>Run: %s, %s</p>\n",
		html.EscapeString(or(r.Command, "loom bench")), html.EscapeString(r.Machine.String()),
		html.EscapeString(r.Started.Format("2006-01-02 15:04 UTC")), html.EscapeString(short(r.Finished.Sub(r.Started))))
	if line := roundsLine(r); line != "" {
		fmt.Fprintf(ew, "<p>%s.</p>\n", html.EscapeString(strings.ToUpper(line[:1])+line[1:]))
	}
	for _, note := range r.Notes {
		fmt.Fprintf(ew, "<p><em>%s</em></p>\n", html.EscapeString(note))
	}
	for i, sc := range r.Scenarios {
		writeScenarioHTML(ew, i, sc)
	}
	fmt.Fprintf(ew, "<p><small>Charts by Apache ECharts %s (Apache-2.0), inlined.</small></p>\n</body>\n</html>\n", echartsjs.Version)
	return ew.err
}

func writeScenarioHTML(w io.Writer, i int, sc ScenarioResult) {
	esc := html.EscapeString
	fmt.Fprintf(w, "<h2 id=\"%s\">%s</h2>\n<p>%s<br>Load: %s. Limit: %s.</p>\n",
		esc(sc.Name), esc(sc.Name), esc(sc.Workload), esc(describePlan(sc.Plan)), esc(sc.Limit.Formula))
	fmt.Fprintf(w, "<p><small>Seed: %s<br>Changed: %s</small></p>\n", esc(sc.Seed), esc(sc.Changes))
	fmt.Fprint(w, "<table>\n<tr>")
	for _, h := range tableHeader(true, sc.Unit) {
		fmt.Fprintf(w, "<th>%s</th>", esc(h))
	}
	fmt.Fprint(w, "</tr>\n")
	for _, run := range sc.Runs {
		fmt.Fprint(w, "<tr>")
		for _, cell := range tableRow(run, true, sc.Unit) {
			fmt.Fprintf(w, "<td>%s</td>", esc(cell))
		}
		fmt.Fprint(w, "</tr>\n")
	}
	fmt.Fprint(w, "</table>\n")
	if idle := idleTable(sc.Runs); idle != nil {
		fmt.Fprint(w, "<p>Idle connections:</p>\n<table>\n")
		for i, row := range idle {
			cell := map[bool]string{true: "th", false: "td"}[i == 0]
			fmt.Fprint(w, "<tr>")
			for _, c := range row {
				fmt.Fprintf(w, "<%s>%s</%s>", cell, esc(c), cell)
			}
			fmt.Fprint(w, "</tr>\n")
		}
		fmt.Fprint(w, "</table>\n")
		for _, note := range idleNotes(sc.Runs) {
			fmt.Fprintf(w, "<p><em>%s</em></p>\n", esc(note))
		}
	}
	fmt.Fprintf(w, "<p class=\"verdict\">%s</p>\n", esc(sc.Verdict))
	for _, run := range sc.Runs {
		if run.Status == StatusCrashed && len(run.Stderr) > 0 {
			fmt.Fprintf(w, "<details><summary>%s: last lines of the server's stderr</summary><pre>%s</pre></details>\n",
				esc(run.Model), esc(strings.Join(run.Stderr, "\n")))
		}
	}
	fmt.Fprint(w, "<div class=\"charts\">\n")
	for _, snippet := range scenarioCharts(i, sc) {
		fmt.Fprintln(w, snippet)
	}
	fmt.Fprint(w, "</div>\n")
}

// scenarioCharts renders a scenario's four charts as HTML snippets (a div
// and the script that draws into it).
func scenarioCharts(i int, sc ScenarioResult) []string {
	id := func(kind string) string { return fmt.Sprintf("s%d%s", i, kind) }
	size := func(kind string) charts.GlobalOpts {
		return charts.WithInitializationOpts(opts.Initialization{Width: "580px", Height: "340px", ChartID: id(kind)})
	}
	tooltip := charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"})
	legend := charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "bottom", Type: "scroll"})
	grid := charts.WithGridOpts(opts.Grid{Bottom: "70"})

	// Throughput per model in the scenario's unit, beside the limit when
	// there is one.
	throughput := charts.NewBar()
	subtitle := ""
	if sc.Limit.PerSecond > 0 {
		subtitle = "limit " + sc.Unit.format(sc.Limit.PerSecond)
	}
	// The grid holds the axis labels, which run to 10 digits in msg/s; one
	// series needs no legend, and the title names its unit.
	throughput.SetGlobalOptions(size("throughput"), tooltip,
		charts.WithGridOpts(opts.Grid{Bottom: "70", ContainLabel: opts.Bool(true)}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithTitleOpts(opts.Title{Title: sc.Name + ": throughput (" + sc.Unit.String() + ")", Subtitle: subtitle}),
		charts.WithXAxisOpts(opts.XAxis{AxisLabel: &opts.AxisLabel{Rotate: 30, Interval: "0"}}))
	// The bar is each model's median; a box over it spans its rounds:
	// whiskers at the lowest and highest, the box between the quartiles.
	var models []string
	var served []opts.BarData
	var spread []opts.BoxPlotData
	for _, run := range sc.Runs {
		models = append(models, run.Model)
		served = append(served, opts.BarData{Value: round(sc.Unit.of(run.Throughput), 1)})
		var five []float64
		for _, v := range fiveNumbers(run.throughputs()) {
			five = append(five, round(sc.Unit.of(v), 1))
		}
		spread = append(spread, opts.BoxPlotData{Value: five})
	}
	throughput.SetXAxis(models).AddSeries(sc.Unit.String(), served)
	rounds := charts.NewBoxPlot()
	rounds.SetXAxis(models).AddSeries(roundsSeries, spread)
	throughput.Overlap(rounds)

	// Latency percentile curves, on a log scale: tails differ by orders of
	// magnitude between models.
	latency := charts.NewLine()
	latency.SetGlobalOptions(size("latency"), tooltip, legend, grid,
		charts.WithTitleOpts(opts.Title{Title: "latency by percentile (ms)"}),
		charts.WithYAxisOpts(opts.YAxis{Type: "log", Name: "ms"}))
	var labels []string
	for _, p := range latencyPoints {
		labels = append(labels, percentileLabel(p))
	}
	latency.SetXAxis(labels)
	for _, run := range sc.Runs {
		if run.Requests == 0 {
			continue
		}
		var points []opts.LineData
		for _, p := range latencyPoints {
			points = append(points, opts.LineData{Value: round(float64(run.LatencyAt(p).Microseconds())/1000, 3)})
		}
		latency.AddSeries(run.Model, points)
	}

	// Where the offered rate changes, a vertical line on each time series.
	lineOpts := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)})}
	if len(sc.Plan.Phases) > 1 {
		var steps []opts.MarkLineNameXAxisItem
		var at time.Duration
		for _, ph := range sc.Plan.Phases[:len(sc.Plan.Phases)-1] {
			at += ph.Duration
			steps = append(steps, opts.MarkLineNameXAxisItem{Name: "step", XAxis: round(at.Seconds(), 2)})
		}
		lineOpts = append(lineOpts, charts.WithMarkLineNameXAxisItemOpts(steps...),
			charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"}}))
	}
	newTimeChart := func(kind, title, unit string) *charts.Line {
		y := opts.YAxis{Name: unit}
		if kind == "limit" {
			y.Type = "log" // from 10,000 down to the tens where it settles
		}
		line := charts.NewLine()
		line.SetGlobalOptions(size(kind), tooltip, legend, grid,
			charts.WithTitleOpts(opts.Title{Title: title}),
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "s"}),
			charts.WithYAxisOpts(y))
		return line
	}
	series := func(kind, title, unit string, value func(Sample) float64) *charts.Line {
		line := newTimeChart(kind, title, unit)
		for _, run := range sc.Runs {
			if kind == "limit" && !runHasLimit(run) {
				continue // the other models have no moving limit to draw
			}
			if kind == "executor" && (IsPeer(run.Model) || !runHasRuntime(run)) {
				continue // peers report no executor
			}
			var points []opts.LineData
			for _, s := range run.Server.Samples {
				if (kind == "executor" || kind == "limit") && !s.RuntimeOK {
					continue // not read in time: no figure, rather than a drop to 0
				}
				points = append(points, opts.LineData{Value: []any{round(s.At.Seconds(), 2), round(value(s), 2)}})
			}
			line.AddSeries(run.Model, points, lineOpts...)
		}
		return line
	}
	rss := series("rss", "server RSS over time (MiB)", "MiB", func(s Sample) float64 { return float64(s.RSSBytes) / (1 << 20) })
	threads := series("threads", "server OS threads over time", "threads", func(s Sample) float64 { return float64(s.Threads) })

	snippets := []render.ChartSnippet{throughput.RenderSnippet(), latency.RenderSnippet(), rss.RenderSnippet(), threads.RenderSnippet()}
	if hasLimit(sc) {
		snippets = append(snippets, series("limit", "adaptive limit over time (log scale)", "tasks",
			func(s Sample) float64 { return float64(s.Limit) }).RenderSnippet())
	}
	if len(sc.Plan.Phases) > 0 {
		// Goodput per half second, from the generator's counts.
		goodput := newTimeChart("goodput", "goodput over time ("+sc.Unit.String()+", per 0.5 s)", sc.Unit.String())
		for _, run := range sc.Runs {
			served := servedAt(run.Client)
			if served == nil {
				continue
			}
			var points []opts.LineData
			last := run.Client[len(run.Client)-1].At
			for t := goodputSlice; t <= last; t += goodputSlice {
				perSecond := sc.Unit.of((served(t) - served(t-goodputSlice)) / goodputSlice.Seconds())
				points = append(points, opts.LineData{Value: []any{round(t.Seconds(), 2), round(perSecond, 1)}})
			}
			goodput.AddSeries(run.Model, points, lineOpts...)
		}
		// Mean latency of the requests served in each second, from the
		// generator's timeline.
		latencyTime := newTimeChart("latencytime", "latency over time (mean per second, ms)", "ms")
		for _, run := range sc.Runs {
			if run.Load == nil || len(run.Load.Timeline) == 0 {
				continue
			}
			var points []opts.LineData
			for _, sec := range run.Load.Timeline {
				if sec.Requests > 0 {
					ms := float64(sec.MeanLatency().Microseconds()) / 1000
					points = append(points, opts.LineData{Value: []any{float64(sec.Second) + 0.5, round(ms, 2)}})
				}
			}
			latencyTime.AddSeries(run.Model, points, lineOpts...)
		}
		snippets = append(snippets, goodput.RenderSnippet(), latencyTime.RenderSnippet(),
			series("executor", "executor: tasks running + queued", "tasks",
				func(s Sample) float64 { return float64(s.InFlight + s.Queued) }).RenderSnippet())
	}
	var out []string
	for _, snip := range snippets {
		out = append(out, snip.Element+"\n"+snip.Script)
	}
	return out
}

// roundsSeries names the box-and-whisker series of the throughput chart.
const roundsSeries = "rounds: min, quartiles, max"

// fiveNumbers are the lowest value, the lower quartile, the median, the
// upper quartile and the highest, linearly interpolated between the
// sorted values: what a box and its whiskers draw.
func fiveNumbers(values []float64) []float64 {
	v := slices.Sorted(slices.Values(values))
	if len(v) == 0 {
		return []float64{0, 0, 0, 0, 0}
	}
	at := func(q float64) float64 {
		pos := q * float64(len(v)-1)
		i := int(pos)
		if i+1 >= len(v) {
			return v[len(v)-1]
		}
		return v[i] + (pos-float64(i))*(v[i+1]-v[i])
	}
	return []float64{v[0], at(0.25), at(0.5), at(0.75), v[len(v)-1]}
}

// hasLimit reports whether a run of sc reported an adaptive limit.
func hasLimit(sc ScenarioResult) bool {
	return slices.ContainsFunc(sc.Runs, runHasLimit)
}

func runHasRuntime(run ModelRun) bool {
	return slices.ContainsFunc(run.Server.Samples, func(s Sample) bool { return s.RuntimeOK })
}

// goodputSlice is the time slice of the goodput chart.
const goodputSlice = 500 * time.Millisecond

func runHasLimit(run ModelRun) bool {
	return slices.ContainsFunc(run.Server.Samples, func(s Sample) bool { return s.Limit > 0 })
}

func percentileLabel(p float64) string {
	if p == 100 {
		return "max"
	}
	return fmt.Sprintf("p%g", p)
}

func round(v float64, digits int) float64 {
	scale := 1.0
	for range digits {
		scale *= 10
	}
	return float64(int64(v*scale+0.5)) / scale
}
