package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// The formats of the reports' tables, each at the edges where it changes
// unit or precision.

func TestFmtLatency(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "–"},
		{0, "–"}, // no figure: the run served nothing
		{1, "0µs"},
		{999 * time.Microsecond, "999µs"},
		{time.Millisecond, "1ms"},
		{1500 * time.Microsecond, "1.5ms"},
		{123456 * time.Microsecond, "123ms"},
		{time.Second - time.Millisecond, "999ms"},
		{time.Second, "1.00s"},
		{2500 * time.Millisecond, "2.50s"},
	}
	for _, tt := range tests {
		if got := fmtLatency(tt.d); got != tt.want {
			t.Errorf("fmtLatency(%v) = %q; want %q", tt.d, got, tt.want)
		}
	}
}

func TestFmtBytes(t *testing.T) {
	tests := []struct {
		b    uint64
		want string
	}{
		{0, "–"}, // not measured
		{1, "0 KiB"},
		{1<<20 - 1, "1023 KiB"},
		{1 << 20, "1.0 MiB"},
		{20<<20 + 1<<19, "20.5 MiB"},
		{1<<30 - 1<<20, "1023.0 MiB"},
		{1 << 30, "1.00 GiB"},
		{3<<30 + 1<<28, "3.25 GiB"},
	}
	for _, tt := range tests {
		if got := fmtBytes(tt.b); got != tt.want {
			t.Errorf("fmtBytes(%d) = %q; want %q", tt.b, got, tt.want)
		}
	}
}

func TestFmtRatioAndCount(t *testing.T) {
	for _, tt := range []struct {
		r    float64
		want string
	}{{-1, "–"}, {0, "–"}, {0.004, "0.00"}, {0.5, "0.50"}, {2, "2.00"}} {
		if got := fmtRatio(tt.r); got != tt.want {
			t.Errorf("fmtRatio(%v) = %q; want %q", tt.r, got, tt.want)
		}
	}
	for _, tt := range []struct {
		n    int64
		want string
	}{{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-1234, "-1,234"}} {
		if got := fmtCount(tt.n); got != tt.want {
			t.Errorf("fmtCount(%d) = %q; want %q", tt.n, got, tt.want)
		}
	}
}

func TestRateAndPercent(t *testing.T) {
	for _, tt := range []struct {
		perSecond float64
		want      string
	}{{0, "0.0"}, {0.9, "0.9"}, {38.44, "38.4"}, {99.9, "99.9"}, {100, "100"}, {1234.4, "1,234"}, {1234.6, "1,235"}} {
		if got := rate(tt.perSecond); got != tt.want {
			t.Errorf("rate(%v) = %q; want %q", tt.perSecond, got, tt.want)
		}
	}
	// Whole percentages, except near 100% (where 98.5% and 99% differ) and
	// below 10%.
	for _, tt := range []struct {
		ratio float64
		want  string
	}{
		{0, "0.0%"}, {0.05, "5.0%"}, {0.0994, "9.9%"}, {0.1, "10%"}, {0.42, "42%"}, {0.5, "50%"}, {0.953, "95.3%"},
		{0.96, "96%"}, {0.985, "98.5%"}, {0.9995, "100%"}, {0.9996, "100%"}, {1, "100%"}, {1.5, "150%"},
	} {
		if got := percent(tt.ratio); got != tt.want {
			t.Errorf("percent(%v) = %q; want %q", tt.ratio, got, tt.want)
		}
	}
}

func TestJoinAnd(t *testing.T) {
	for _, tt := range []struct {
		items []string
		want  string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a and b"}, {[]string{"a", "b", "c"}, "a, b and c"}} {
		if got := joinAnd(tt.items); got != tt.want {
			t.Errorf("joinAnd(%q) = %q; want %q", tt.items, got, tt.want)
		}
	}
}

// TestCompareWithoutOldFigures: a run that served nothing before, or had
// no latency, gives ratios of 0 (shown "–"), not a division by zero.
func TestCompareWithoutOldFigures(t *testing.T) {
	old := &Report{Scenarios: []ScenarioResult{{Name: "s", Runs: []ModelRun{{Model: "virtual", Status: StatusCrashed}}}}}
	cur := &Report{Scenarios: []ScenarioResult{{Name: "s", Runs: []ModelRun{{Model: "virtual", Status: StatusOK, Throughput: 100,
		Latency: []Percentile{{99, time.Millisecond}}}}}}}
	changes := Compare(old, cur)
	if len(changes) != 1 {
		t.Fatalf("got %d changes; want 1", len(changes))
	}
	c := changes[0]
	if c.Ratio != 0 || c.P99Ratio != 0 || math.IsNaN(c.Ratio) || math.IsNaN(c.P99Ratio) {
		t.Errorf("old run served nothing: got Ratio %v, P99Ratio %v; want 0 and 0", c.Ratio, c.P99Ratio)
	}
}

// TestWriteComparisonFlags checks each row's flag at the edges: a ratio of
// exactly Regression or 1/Regression is no change, a fall or a rise that is
// not significant is none either, a run that served nothing before has no
// ratio to flag, and a run that stopped being ok is a regression whatever
// its throughput.
func TestWriteComparisonFlags(t *testing.T) {
	sig := Comparison{Difference: Significant, P: 0.008}
	changes := []Change{
		{Scenario: "s", Model: "m-slower", OldStatus: StatusOK, NewStatus: StatusOK, OldThroughput: 100, NewThroughput: 89, Ratio: 0.89, Comparison: sig},
		{Scenario: "s", Model: "m-slower-noise", OldStatus: StatusOK, NewStatus: StatusOK, OldThroughput: 100, NewThroughput: 50, Ratio: 0.5,
			Comparison: Comparison{Difference: Noisy, P: 0.4}},
		{Scenario: "s", Model: "m-slower-once", OldStatus: StatusOK, NewStatus: StatusOK, OldThroughput: 100, NewThroughput: 50, Ratio: 0.5},
		{Scenario: "s", Model: "m-at-regression", OldStatus: StatusOK, NewStatus: StatusOK, OldThroughput: 100, NewThroughput: 90, Ratio: Regression, Comparison: sig},
		{Scenario: "s", Model: "m-same", OldStatus: StatusOK, NewStatus: StatusOK, OldThroughput: 100, NewThroughput: 100, Ratio: 1, Comparison: sig},
		{Scenario: "s", Model: "m-up-edge", OldStatus: StatusOK, NewStatus: StatusOK, OldThroughput: 90, NewThroughput: 100, Ratio: 1 / Regression, Comparison: sig},
		{Scenario: "s", Model: "m-up", OldStatus: StatusOK, NewStatus: StatusOK, OldThroughput: 100, NewThroughput: 120, Ratio: 1.2, Comparison: sig},
		{Scenario: "s", Model: "m-up-noise", OldStatus: StatusOK, NewStatus: StatusOK, OldThroughput: 100, NewThroughput: 150, Ratio: 1.5,
			Comparison: Comparison{Difference: Noisy, P: 0.4}},
		// Rounds of 0 against rounds that served differ significantly; with
		// no old throughput there is no ratio to call a regression on.
		{Scenario: "s", Model: "m-was-nothing", OldStatus: StatusCrashed, NewStatus: StatusOK, NewThroughput: 50, Comparison: sig},
		{Scenario: "s", Model: "m-broke", OldStatus: StatusOK, NewStatus: StatusErrors, OldThroughput: 100, NewThroughput: 150, Ratio: 1.5},
	}
	var b bytes.Buffer
	regressions, err := WriteComparison(&b, changes)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"m-slower": "REGRESSION", "m-slower-noise": "", "m-slower-once": "", "m-at-regression": "", "m-same": "", "m-up-edge": "", "m-up-noise": "",
		"m-up": "faster", "m-was-nothing": "status crashed → ok", "m-broke": "REGRESSION, status ok → errors",
	}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[1 : 1+len(changes)] {
		fields := strings.Fields(line)
		model := fields[1]
		flag := ""
		if i := strings.Index(line, "REGRESSION"); i >= 0 {
			flag = line[i:]
		} else if i := strings.Index(line, "faster"); i >= 0 {
			flag = line[i:]
		} else if i := strings.Index(line, "status"); i >= 0 {
			flag = line[i:]
		}
		if flag != want[model] {
			t.Errorf("%s: flagged %q; want %q", model, flag, want[model])
		}
	}
	if regressions != 2 {
		t.Errorf("regressions = %d; want 2 (m-slower, m-broke)\n%s", regressions, b.String())
	}
}

// TestTableRow: the status column says why a run crashed or failed, and the
// runtime's figures are "–" when its metrics never answered.
func TestTableRow(t *testing.T) {
	for _, tt := range []struct {
		run        ModelRun
		status     string
		goroutines string
	}{
		{ModelRun{Status: StatusOK, Failure: "ignored", Server: ServerStats{PeakGoroutines: 12}}, "ok", "12"},
		{ModelRun{Status: StatusErrors, Failure: "4 unexpected status"}, "errors", "–"},
		{ModelRun{Status: StatusCrashed, Failure: "fatal error: boom\nmore"}, "crashed: fatal error: boom", "–"},
		{ModelRun{Status: StatusFailed, Failure: "no listening line"}, "failed: no listening line", "–"},
	} {
		for _, wide := range []bool{false, true} {
			row := tableRow(tt.run, wide, Unit{})
			header := tableHeader(wide, Unit{})
			if len(row) != len(header) {
				t.Fatalf("wide %t: %d cells for %d columns", wide, len(row), len(header))
			}
			cell := func(name string) string { return row[indexOf(header, name)] }
			if got := cell("status"); got != tt.status {
				t.Errorf("wide %t, %s run: status cell %q; want %q", wide, tt.run.Status, got, tt.status)
			}
			if got := cell("peak goroutines"); got != tt.goroutines {
				t.Errorf("wide %t, %s run: peak goroutines %q; want %q", wide, tt.run.Status, got, tt.goroutines)
			}
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	panic("no column " + v)
}
