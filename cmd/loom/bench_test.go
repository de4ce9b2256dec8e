package main

import (
	"context"
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
