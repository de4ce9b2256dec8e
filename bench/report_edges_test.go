package bench

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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
	}
	for _, tt := range tests {
		if got := describePlan(tt.p); got != tt.want {
			t.Errorf("describePlan(%+v) = %q; want %q", tt.p, got, tt.want)
		}
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
