package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomrt/loom/bench"
)

// TestBenchQuickSmoke runs `loom bench --quick` on one scenario and two
// models, with real server processes, and checks that it completes and
// writes its files.
func TestBenchQuickSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	t.Setenv(mainEnv, "1") // the servers are this binary, run as loom
	dir := t.TempDir()
	err := run(context.Background(), []string{"bench", "--quick", "hello", "--models", "virtual,pool:4", "--peers=false", "--out", dir})
	if err != nil {
		t.Fatalf("loom bench: %v", err)
	}
	for _, name := range []string{"results.json", "report.md", "report.html"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v (want a non-empty file)", name, err)
		}
	}
	report, err := bench.ReadJSONFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Scenarios) != 1 || len(report.Scenarios[0].Runs) != 2 {
		t.Fatalf("report has %d scenarios; want hello with 2 runs", len(report.Scenarios))
	}
	for _, r := range report.Scenarios[0].Runs {
		if r.Status != bench.StatusOK || r.Requests == 0 {
			t.Errorf("%s: status %s, %d requests (%s); want ok", r.Model, r.Status, r.Requests, r.Failure)
		}
	}

	// The same file compared with itself: every ratio is 1, no regression.
	results := filepath.Join(dir, "results.json")
	if err := run(context.Background(), []string{"bench", "compare", results, results}); err != nil {
		t.Errorf("loom bench compare (same file): %v", err)
	}

	// The reports made again from results.json.
	again := t.TempDir()
	if err := run(context.Background(), []string{"bench", "report", results, "--out", again}); err != nil {
		t.Fatalf("loom bench report: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(again, "report.md"))
	if err != nil || !strings.Contains(string(md), "| model | req/s |") {
		t.Errorf("report.md from loom bench report: %v; want the table", err)
	}
}

func TestBenchList(t *testing.T) {
	if err := run(context.Background(), []string{"bench", "--list"}); err != nil {
		t.Errorf("loom bench --list: %v", err)
	}
}

func TestBenchErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "compare", missing, missing}, "missing.json"},
		{[]string{"bench", "compare", "one.json"}, "accepts 2 arg(s)"},
		{[]string{"bench", "no-such-scenario", "--peers=false"}, "no-such-scenario"},
		{[]string{"serve-scenario", "no-such-scenario"}, "no-such-scenario"},
	}
	for _, tt := range tests {
		err := run(context.Background(), tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("loom %s = %v; want an error containing %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}

// execBench runs `loom bench args...` and returns what it wrote to stderr,
// where every run prints its progress line.
func execBench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"bench"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return errOut.String(), err
}

// TestBenchRefusesBadFlagsBeforeRunning gives flag values that once ran
// something else (--models ',' every default model) or failed only after
// every run (--out): each must be an error naming the flag and its value,
// before any run starts.
func TestBenchRefusesBadFlagsBeforeRunning(t *testing.T) {
	t.Setenv(mainEnv, "1") // should a run start after all, its server is this binary
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := []string{"--quick", "hello", "--peers=false"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--models", ","}, []string{"--models", `","`, "empty"}},
		{[]string{"--models", ""}, []string{"--models", `""`}},
		{[]string{"--models", "virtual,,pool:4"}, []string{"--models", "model 2 is empty"}},
		{[]string{"--models", "virtual,"}, []string{"--models", "model 2 is empty"}},
		{[]string{"--models", "virtual", "--out", ""}, []string{"--out", `""`}},
		{[]string{"--models", "virtual", "--out", file}, []string{"--out", file, "not a directory"}},
		// Unwritable even for root: nothing can be created under a file.
		{[]string{"--models", "virtual", "--out", filepath.Join(file, "sub")}, []string{"--out", "not a directory"}},
	} {
		wantRefused(t, append(append([]string(nil), run...), tc.args...), tc.want)
	}
}

// wantRefused runs `loom bench args...` and wants an error naming each of
// want, with nothing printed before it: no run or build started.
func wantRefused(t *testing.T, args, want []string) {
	t.Helper()
	stderr, err := execBench(t, args...)
	if err == nil {
		t.Errorf("loom bench %q: accepted; want an error naming %q", args, want)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("loom bench %q: %v; want it to name %q", args, err, w)
		}
	}
	if stderr != "" {
		t.Errorf("loom bench %q printed %q before failing; want no run or build started", args, stderr)
	}
}

func TestBenchListRefusesASelection(t *testing.T) {
	for _, args := range [][]string{
		{"--list", "hello"},
		{"--list", "--models", "virtual"},
		{"--list", "--out", t.TempDir()},
	} {
		if _, err := execBench(t, args...); err == nil || !strings.Contains(err.Error(), "--list") {
			t.Errorf("loom bench %q: %v; want an error naming --list", args, err)
		}
	}
	if _, err := execBench(t, "--list", "--quick"); err != nil {
		t.Errorf("loom bench --list --quick: %v", err)
	}
}

// TestBenchListShowsIdleConnectionsAndEngines: idle-conns' idle connections
// and the nbio models are part of what --list says a run does.
func TestBenchListShowsIdleConnectionsAndEngines(t *testing.T) {
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"bench", "--list", "--quick"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"100 + 1000 idle", "virtual nbio/virtual"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("loom bench --list --quick lacks %q:\n%s", want, out.String())
		}
	}
}

// TestBenchOutLeavesNoEmptyDirectory checks that a directory --out created
// for a run that never started (an unknown scenario) is removed again.
func TestBenchOutLeavesNoEmptyDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "new")
	if _, err := execBench(t, "no-such-scenario", "--peers=false", "--out", out); err == nil {
		t.Fatal("loom bench no-such-scenario: accepted")
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat %s: %v; want it removed again", out, err)
	}
}

func TestBenchReportRefusesEmptyOut(t *testing.T) {
	if _, err := execBench(t, "report", "results.json", "--out", ""); err == nil || !strings.Contains(err.Error(), `--out ""`) {
		t.Errorf(`loom bench report --out "": %v; want an error naming --out ""`, err)
	}
}

// TestSaveReportRescuesResults makes the report directory fail after the
// run, as a directory replaced by a file would: results.json must be saved
// elsewhere and the error must say where.
func TestSaveReportRescuesResults(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	report := &bench.Report{Version: bench.ReportVersion, Command: "loom bench test"}
	_, err := saveReport(filepath.Join(file, "out"), report)
	if err == nil {
		t.Fatal("saveReport under a file: no error")
	}
	rescued, _ := filepath.Glob(filepath.Join(tmp, "loom-bench-results-*.json"))
	if len(rescued) != 1 || !strings.Contains(err.Error(), rescued[0]) {
		t.Fatalf("saveReport: %v, rescued %v; want one results file, named in the error", err, rescued)
	}
	got, err := bench.ReadJSONFile(rescued[0])
	if err != nil {
		t.Fatalf("rescued results: %v", err)
	}
	if got.Command != report.Command {
		t.Errorf("rescued results: command %q; want %q", got.Command, report.Command)
	}
}
