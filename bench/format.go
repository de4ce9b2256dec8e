package bench

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// The formats tables share.

func fmtLatency(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}

func fmtBytes(b uint64) string {
	switch {
	case b == 0:
		return "–"
	case b < 1<<20:
		return fmt.Sprintf("%d KiB", b>>10)
	case b < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	}
}

func fmtRatio(r float64) string {
	if r <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", r)
}

func fmtCount[T int | int64 | uint64](n T) string {
	if n == 0 {
		return "0"
	}
	return count(int64(n))
}

// tableHeader and tableRow give the columns of the per-scenario table. The
// terminal's is narrow; the wide one, in Markdown and HTML, adds p90, p99.9,
// peak goroutines in system calls and GC cycles. The rate is in unit. The
// rate and p99 are medians over the rounds, each followed by its range;
// "÷ best" is marked "~" where the test finds no significant difference
// from the best (Standing).
func tableHeader(wide bool, unit Unit) []string {
	if !wide {
		return []string{"model", unit.String(), "range", "÷ limit", "÷ best", "p50", "p99", "p99 range", "max", "errors",
			"peak RSS", "peak threads", "peak goroutines", "CPU s", "status"}
	}
	return []string{"model", unit.String(), "range", "÷ limit", "÷ best", "p50", "p90", "p99", "p99 range", "p99.9", "max", "errors",
		"peak RSS", "peak threads", "peak goroutines", "in syscalls", "CPU s", "GCs", "status"}
}

func tableRow(r ModelRun, wide bool, unit Unit) []string {
	status := string(r.Status)
	if r.Status == StatusCrashed || r.Status == StatusFailed {
		status += ": " + firstLine(r.Failure, 60)
	}
	runtimeFigure := func(n uint64) string {
		if r.Server.PeakGoroutines == 0 { // the metrics listener never answered
			return "–"
		}
		return fmtCount(n)
	}
	cpu := fmt.Sprintf("%.1f", r.Server.CPUSeconds)
	rateRange, p99Range := "–", "–"
	if s := r.ThroughputSpread; s.Rounds > 1 {
		rateRange = rate(unit.of(s.Min)) + "–" + rate(unit.of(s.Max))
	}
	if s := r.P99Spread; s.Rounds > 1 {
		p99Range = fmtLatency(time.Duration(s.Min)) + "–" + fmtLatency(time.Duration(s.Max))
	}
	toBest := fmtRatio(r.RatioToBest)
	switch r.Standing {
	case StandingTie, StandingAtLimit, StandingNoisy, StandingUncalled:
		toBest += " ~"
	}
	if !wide {
		return []string{
			r.Model, rate(unit.of(r.Throughput)), rateRange, fmtRatio(r.RatioToLimit), toBest,
			fmtLatency(r.LatencyAt(50)), fmtLatency(r.LatencyAt(99)), p99Range, fmtLatency(r.LatencyAt(100)),
			fmtCount(r.Errors), fmtBytes(r.Server.PeakRSSBytes), fmtCount(r.Server.PeakThreads),
			runtimeFigure(r.Server.PeakGoroutines), cpu, status,
		}
	}
	return []string{
		r.Model, rate(unit.of(r.Throughput)), rateRange, fmtRatio(r.RatioToLimit), toBest,
		fmtLatency(r.LatencyAt(50)), fmtLatency(r.LatencyAt(90)), fmtLatency(r.LatencyAt(99)), p99Range,
		fmtLatency(r.LatencyAt(99.9)), fmtLatency(r.LatencyAt(100)),
		fmtCount(r.Errors), fmtBytes(r.Server.PeakRSSBytes), fmtCount(r.Server.PeakThreads),
		runtimeFigure(r.Server.PeakGoroutines), runtimeFigure(r.Server.PeakNotInGo), cpu,
		runtimeFigure(r.Server.GCCycles), status,
	}
}

// writeTable writes rows as columns aligned to the right, each line led by
// indent and stripped of trailing blanks.
func writeTable(w io.Writer, indent string, rows [][]string) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line == "" {
			continue
		}
		out.WriteString(indent + strings.TrimRight(line, " \n") + "\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}
