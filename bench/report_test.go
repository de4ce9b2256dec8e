package bench

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sampleReport is a report made by hand: two scenarios, a capped model, a
// crashed one and one with errors.
func sampleReport() *Report {
	lat := func(p50, p99 time.Duration) []Percentile {
		return []Percentile{{50, p50}, {99, p99}, {100, 2 * p99}}
	}
	samples := func(rss uint64, threads int) []Sample {
		return []Sample{
			{At: 0, RSSBytes: rss, Threads: threads, RuntimeOK: true, Goroutines: 10},
			{At: 100 * time.Millisecond, RSSBytes: 2 * rss, Threads: 2 * threads, RuntimeOK: true, Goroutines: 110},
		}
	}
	sleep := ScenarioResult{
		Name: "cask-sleep", Workload: "GET / sleeps 100 ms",
		Plan:  Plan{Connections: 100, Duration: time.Second, Service: 100 * time.Millisecond},
		Limit: Limit{PerSecond: 1000, Formula: "100 connections ÷ 100ms = 1,000 req/s"},
		Runs: []ModelRun{
			{Model: "virtual", Status: StatusOK, Throughput: 987.5, Requests: 9875, Latency: lat(101*time.Millisecond, 110*time.Millisecond),
				Server: ServerStats{PeakRSSBytes: 20 << 20, PeakThreads: 9, PeakGoroutines: 210, Samples: samples(10<<20, 5)}},
			{Model: "pool:16", Status: StatusOK, Throughput: 158.25, Requests: 1582, ModelCap: 160, Latency: lat(600*time.Millisecond, 700*time.Millisecond),
				Server: ServerStats{PeakRSSBytes: 18 << 20, PeakThreads: 8, Samples: samples(9<<20, 4)}},
			{Model: "thread-per-task", Status: StatusCrashed, Failure: "fatal error: thread exhaustion (exit status 2)",
				Stderr: []string{"runtime: program exceeds 10000-thread limit", "fatal error: thread exhaustion"}},
			{Model: "limit:10", Status: StatusErrors, Throughput: 97, Requests: 970, Errors: 4000, ModelCap: 100,
				Failure: "4,000 unexpected status (503×4,000)", Latency: lat(100*time.Millisecond, 105*time.Millisecond)},
		},
	}
	cpu := ScenarioResult{
		Name: "cpu", Workload: "hash", Plan: Plan{Connections: 100, Duration: time.Second},
		Limit: Limit{Formula: "CPU-bound"},
		Runs: []ModelRun{
			{Model: "virtual", Status: StatusOK, Throughput: 2000, Requests: 2000, Latency: lat(40*time.Millisecond, 90*time.Millisecond)},
			{Model: "pool:16", Status: StatusOK, Throughput: 1950, Requests: 1950, Latency: lat(41*time.Millisecond, 95*time.Millisecond)},
		},
	}
	r := &Report{
		Version: ReportVersion, Command: "loom bench --quick", Quick: true,
		Started:   time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
		Finished:  time.Date(2026, 11, 30, 0, 1, 30, 0, time.UTC),
		Machine:   Machine{CPU: "Test CPU", Cores: 2, MemoryBytes: 24 << 30, GoVersion: "go1.26", OS: "Debian", Arch: "amd64"},
		Scenarios: []ScenarioResult{sleep, cpu},
	}
	for i := range r.Scenarios {
		judge(&r.Scenarios[i])
	}
	return r
}

func TestJudge(t *testing.T) {
	r := sampleReport()
	sleep, cpu := r.Scenarios[0], r.Scenarios[1]
	if got, want := sleep.Best, "virtual"; got != want {
		t.Errorf("cask-sleep best = %q; want %q", got, want)
	}
	ratios := []struct {
		run           ModelRun
		limit, toBest float64
	}{
		{sleep.Runs[0], 0.9875, 1},
		{sleep.Runs[1], 0.15825, 158.25 / 987.5},
		{sleep.Runs[2], 0, 0},
	}
	for _, tt := range ratios {
		if !near(tt.run.RatioToLimit, tt.limit) || !near(tt.run.RatioToBest, tt.toBest) {
			t.Errorf("%s: ratio to limit %.4f, to best %.4f; want %.4f, %.4f",
				tt.run.Model, tt.run.RatioToLimit, tt.run.RatioToBest, tt.limit, tt.toBest)
		}
	}
	for _, want := range []string{
		"virtual has the highest throughput, 988 req/s (98.8% of the 1,000 req/s limit)",
		"pool:16 is capped at 160 req/s by its 16 workers",
		"thread-per-task crashed: fatal error: thread exhaustion",
		"limit:10 is capped at 100 req/s by its limit of 10 (4,000 errors)",
	} {
		if !strings.Contains(sleep.Verdict, want) {
			t.Errorf("cask-sleep verdict %q\nlacks %q", sleep.Verdict, want)
		}
	}
	if want := "With one round a model, no difference can be called (the U test needs 4 rounds a model at α = 0.05; " +
		"see --rounds): virtual has the highest throughput, 2,000 req/s; pool:16 reaches 97.5% of virtual."; cpu.Verdict != want {
		t.Errorf("cpu verdict = %q; want %q", cpu.Verdict, want)
	}
}

func TestJudgeBreaksTiesOnLatency(t *testing.T) {
	sc := ScenarioResult{Runs: []ModelRun{
		{Model: "a", Status: StatusOK, Throughput: 1000, Requests: 1, Latency: []Percentile{{99, 300 * time.Millisecond}}},
		{Model: "b", Status: StatusOK, Throughput: 1001, Requests: 1, Latency: []Percentile{{99, 100 * time.Millisecond}}},
		{Model: "c", Status: StatusErrors, Throughput: 5000, Requests: 1, Errors: 9},
	}}
	judge(&sc)
	if got, want := sc.Best, "b"; got != want {
		t.Errorf("best = %q; want %q (a tie on throughput goes to the lower p99; c had errors)", got, want)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// loadedURL matches an element that would load something over the network.
var loadedURL = regexp.MustCompile(`(?i)<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*["']?(https?:)?//`)

func TestWriteHTML(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if m := loadedURL.FindString(page); m != "" {
		t.Errorf("page loads %q; want everything inline", m)
	}
	for _, want := range []string{
		"echarts.init(",                  // the charts are drawn
		`"name":"req/s"`,                 // the throughput series
		"987.5",                          // its data
		`"name":"thread-per-task"`,       // a series per model in the time charts
		"[0.1,20]",                       // an RSS sample: 0.1 s, 20 MiB
		"fatal error: thread exhaustion", // the crash
		"server OS threads over time",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "echarts.init("); n != 8 {
		t.Errorf("page draws %d charts; want 8 (4 per scenario)", n)
	}
}

func TestWriteMarkdownAndText(t *testing.T) {
	r := sampleReport()
	var md, text bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "text": text.String()} {
		for _, want := range []string{"cask-sleep", "pool:16", "0.99", "fatal error: thread exhaustion", r.Scenarios[0].Verdict, "20.0 MiB"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q", name, want)
			}
		}
	}
	if !strings.Contains(md.String(), "| model | req/s |") {
		t.Errorf("markdown report has no table header")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	report := runTest(t, "test-sleep")
	var first bytes.Buffer
	if err := WriteJSON(&first, report); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(bytes.NewReader(first.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var second bytes.Buffer
	if err := WriteJSON(&second, back); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() {
		t.Errorf("results.json changed on a round trip:\n%s\nthen\n%s", first.String(), second.String())
	}
	run := back.Scenarios[0].Runs[0]
	if run.Load == nil || run.Load.Histogram == "" {
		t.Fatalf("decoded run has no load result with a histogram")
	}
	if p50 := run.Load.Percentile(50); p50 < 50*time.Millisecond {
		t.Errorf("decoded histogram p50 = %v; want at least the 50 ms service time", p50)
	}
	if len(run.Server.Samples) == 0 {
		t.Errorf("decoded run has no samples")
	}
	for _, r := range back.Scenarios[0].Runs {
		// pool:2 at 4 connections of 50 ms each is capped at 2 ÷ 50 ms.
		if want := map[string]float64{"virtual": 0, "pool:2": 40}[r.Model]; r.ModelCap != want {
			t.Errorf("%s: ModelCap %v; want %v", r.Model, r.ModelCap, want)
		}
	}
	if back.Scenarios[0].Limit.PerSecond != 80 {
		t.Errorf("limit = %v; want 4 connections ÷ 50 ms = 80 req/s", back.Scenarios[0].Limit.PerSecond)
	}
}

func TestReadJSONRejectsOtherVersions(t *testing.T) {
	_, err := ReadJSON(strings.NewReader(`{"version": 99}`))
	if err == nil || !strings.Contains(err.Error(), "99") {
		t.Errorf("ReadJSON(version 99) = %v; want ErrVersion naming 99", err)
	}
	if _, err := ReadJSON(strings.NewReader(`{"version":`)); err == nil {
		t.Errorf("ReadJSON(truncated) = nil error; want one")
	}
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	paths, err := WriteFiles(dir, sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(paths), 3; got != want {
		t.Fatalf("WriteFiles wrote %d files; want %d", got, want)
	}
	if _, err := ReadJSONFile(paths[0]); err != nil {
		t.Errorf("ReadJSONFile(%s): %v", paths[0], err)
	}
}

func TestPrepareDir(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(base, "existing")
	clash := filepath.Join(base, "clash")
	for _, dir := range []string{existing, filepath.Join(clash, "results.json")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A directory holding the reports of an earlier run: they are replaced.
	earlier := filepath.Join(base, "earlier")
	if err := os.MkdirAll(earlier, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range reportFiles {
		if err := os.WriteFile(filepath.Join(earlier, f.name), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		dir     string
		created bool
		want    string // in the error; empty: accepted
	}{
		{"new", filepath.Join(base, "new", "deeper"), true, ""},
		{"existing", existing, false, ""},
		{"earlier reports", earlier, false, ""},
		{"a file", file, false, "not a directory"},
		// Root writes anywhere it has a directory: under a regular file
		// nothing can be created, whoever runs the test.
		{"under a file", filepath.Join(file, "out"), false, "not a directory"},
		{"report name taken by a directory", clash, false, "results.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created, err := PrepareDir(tc.dir)
			if created != tc.created {
				t.Errorf("PrepareDir(%s) created = %v; want %v", tc.dir, created, tc.created)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("PrepareDir(%s): %v; want it accepted", tc.dir, err)
				}
				if _, err := WriteFiles(tc.dir, sampleReport()); err != nil {
					t.Errorf("WriteFiles after PrepareDir(%s): %v", tc.dir, err)
				}
				entries, _ := os.ReadDir(tc.dir)
				if len(entries) != len(reportFiles) {
					t.Errorf("%s holds %d entries after writing; want the %d reports and no probe left", tc.dir, len(entries), len(reportFiles))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("PrepareDir(%s) = %v; want an error naming %q", tc.dir, err, tc.want)
			}
		})
	}
}

// TestReportsShowACrashedServersStderr: the Markdown and text reports add
// the last lines of a crashed server's stderr (8 and 5 of them), and only
// for a crashed run that left some.
func TestReportsShowACrashedServersStderr(t *testing.T) {
	r := sampleReport()
	crashed := &r.Scenarios[0].Runs[2]
	crashed.Stderr = nil
	for i := range 10 {
		crashed.Stderr = append(crashed.Stderr, "stderr line "+string(rune('a'+i)))
	}
	r.Scenarios[0].Runs[0].Stderr = []string{"an ok run's chatter"}
	r.Scenarios[0].Runs[3].Stderr = []string{"a run with errors' chatter"}
	var md, text bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, out, header string
		last              int
	}{
		{"markdown", md.String(), "thread-per-task: last lines of the server's stderr", 8},
		{"text", text.String(), "thread-per-task stderr (last lines)", 5},
	} {
		if strings.Count(tt.out, tt.header) != 1 {
			t.Errorf("%s report: want %q once:\n%s", tt.name, tt.header, tt.out)
		}
		for i := range 10 {
			line := "stderr line " + string(rune('a'+i))
			if got, want := strings.Contains(tt.out, line), i >= 10-tt.last; got != want {
				t.Errorf("%s report holds %q: %t; want %t (the last %d lines)", tt.name, line, got, want, tt.last)
			}
		}
		if strings.Contains(tt.out, "chatter") {
			t.Errorf("%s report shows the stderr of a run that did not crash:\n%s", tt.name, tt.out)
		}
	}

	crashed.Stderr = nil
	md.Reset()
	text.Reset()
	_ = WriteMarkdown(&md, r)
	_ = WriteText(&text, r)
	if strings.Contains(md.String(), "stderr") || strings.Contains(text.String(), "stderr") {
		t.Errorf("a crashed run without stderr got a stderr block:\n%s\n%s", md.String(), text.String())
	}
}

func TestDescribePlan(t *testing.T) {
	tests := []struct {
		p    Plan
		want string
	}{
		{Plan{Connections: 100}, "100 connections"},
		{Plan{Connections: 100, Duration: 15 * time.Second}, "100 connections, for 15s"},
		{Plan{Connections: 400, Requests: 20000, Duration: time.Minute}, "400 connections, 20,000 requests, at most 1m0s"},
		{Plan{Connections: 10, Requests: 5}, "10 connections, 5 requests"},
		{Plan{Rate: 2000, Duration: 1500 * time.Millisecond}, "open loop at 2,000 req/s, for 1.5s"},
		{Plan{Connections: 11000, Duration: time.Second, MaxThreads: 500}, "11,000 connections, for 1s, server thread limit 500"},
		{Plan{Connections: 256, Pipeline: 16, Duration: 4 * time.Second}, "256 connections pipelining 16 requests each, for 4s"},
	}
	for _, tt := range tests {
		if got := describePlan(tt.p); got != tt.want {
			t.Errorf("describePlan(%+v) = %q; want %q", tt.p, got, tt.want)
		}
	}
}

// TestReadJSONFile reads back what WriteFiles wrote, and names the path of
// a file that is not there.
func TestReadJSONFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteFiles(dir, sampleReport()); err != nil {
		t.Fatal(err)
	}
	r, err := ReadJSONFile(filepath.Join(dir, "results.json"))
	if err != nil || r == nil || len(r.Scenarios) != 2 || r.Scenarios[1].Name != "cpu" {
		t.Fatalf("ReadJSONFile: got %+v, %v; want the sample report's two scenarios", r, err)
	}
	missing := filepath.Join(dir, "missing.json")
	if _, err := ReadJSONFile(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("ReadJSONFile(missing): got %v; want fs.ErrNotExist naming the path", err)
	}
}

// TestMarkdownTableAndNotes: a Markdown table has its separator under the
// header only, and a scenario without an unloaded reference gets no note
// line.
func TestMarkdownTableAndNotes(t *testing.T) {
	var b bytes.Buffer
	writeMarkdownTable(&b, [][]string{{"a", "b|c"}, {"1", "2"}, {"3", "4"}})
	if want := "| a | b\\|c |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"; b.String() != want {
		t.Errorf("writeMarkdownTable:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteMarkdown(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\n.\n") {
		t.Errorf("markdown report has an empty note line:\n%s", b.String())
	}
}
