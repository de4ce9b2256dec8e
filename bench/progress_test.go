package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/load"
)

func TestShort(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0s"},
		{1, "0s"}, // rounds to the millisecond
		{850 * time.Millisecond, "850ms"},
		{time.Second - time.Millisecond, "999ms"},
		{time.Second, "1.0s"},
		{12345 * time.Millisecond, "12.3s"},
		{time.Minute - time.Millisecond, "60.0s"},
		{time.Minute, "1m00s"},
		{4*time.Minute + 5*time.Second, "4m05s"},
		{61*time.Minute + 500*time.Millisecond, "61m01s"},
	} {
		if got := short(tt.d); got != tt.want {
			t.Errorf("short(%v) = %q; want %q", tt.d, got, tt.want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc\ndef", 10, "abc"},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"", 3, ""},
	} {
		if got := firstLine(tt.s, tt.n); got != tt.want {
			t.Errorf("firstLine(%q, %d) = %q; want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// TestProgressLines: the first run announces the count and the time
// expected; each line says the time left after it; a failed run's line
// carries the first line of its failure, an OK run's none.
func TestProgressLines(t *testing.T) {
	s := &Scenario{Name: "hello"}
	jobs := []job{
		{scenario: s, model: "virtual", expected: 2 * time.Second},
		{scenario: s, model: "pool", expected: 3 * time.Second},
	}
	var out bytes.Buffer
	p := newProgress(&out, false, jobs)
	if want := 5*time.Second + 2*RunOverhead; p.left[0] != want || p.left[1] != 3*time.Second+RunOverhead || p.left[2] != 0 {
		t.Errorf("left %v; want [%v %v 0]", p.left, want, 3*time.Second+RunOverhead)
	}
	p.update(load.Progress{Done: 1}) // not a terminal: draws nothing
	p.begin(0, jobs[0])
	p.end(0, jobs[0], ModelRun{Model: "virtual", Status: StatusOK, Failure: "ignored"})
	p.begin(1, jobs[1])
	p.end(1, jobs[1], ModelRun{Model: "pool", Status: StatusFailed, Failure: "it broke\nsecond line"})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("progress printed %d lines; want 3:\n%s", len(lines), out.String())
	}
	if want := "2 runs, about " + short(5*time.Second+2*RunOverhead); lines[0] != want {
		t.Errorf("first line %q; want %q", lines[0], want)
	}
	left := "~" + short(3*time.Second+RunOverhead) + " left"
	if !strings.HasPrefix(lines[1], "[1/2] hello") || !strings.Contains(lines[1], left) || !strings.HasSuffix(lines[1], "  ok") {
		t.Errorf("line %q; want run 1/2, %s, ok alone", lines[1], left)
	}
	if !strings.HasPrefix(lines[2], "[2/2] hello") || !strings.Contains(lines[2], "~0s left") || !strings.HasSuffix(lines[2], "failed: it broke") {
		t.Errorf("line %q; want run 2/2, ~0s left, the failure's first line", lines[2])
	}
	if strings.Contains(out.String(), "\r") {
		t.Errorf("progress off a terminal redrew a line: %q", out.String())
	}
	noWriter := newProgress(nil, true, jobs) // no writer: nothing, no panic
	noWriter.begin(0, jobs[0])
	noWriter.update(load.Progress{Done: 1})
	noWriter.end(0, jobs[0], ModelRun{Status: StatusOK})

	// A run that failed without saying why shows its status alone.
	out.Reset()
	p = newProgress(&out, false, jobs)
	p.begin(0, jobs[0])
	out.Reset()
	p.end(0, jobs[0], ModelRun{Model: "virtual", Status: StatusFailed})
	if line := strings.TrimSuffix(out.String(), "\n"); !strings.HasSuffix(line, "  failed") {
		t.Errorf("line %q; want it to end with the status alone, failed", line)
	}
}

// TestProgressBar: on a terminal the bar fills with the larger of the time
// and the requests done, never past full, and the time left in all adds the
// runs after this one.
func TestProgressBar(t *testing.T) {
	s := &Scenario{Name: "hello"}
	jobs := []job{{scenario: s, model: "virtual"}, {scenario: s, model: "pool", expected: 10 * time.Second}}
	for _, tt := range []struct {
		lp   load.Progress
		want string
	}{
		{load.Progress{}, "[--------------------]"},
		{load.Progress{Elapsed: time.Second, Duration: 4 * time.Second}, "[#####---------------]"},
		{load.Progress{Done: 3, Total: 4}, "[###############-----]"},
		{load.Progress{Elapsed: time.Second, Duration: 4 * time.Second, Done: 1, Total: 2}, "[##########----------]"},
		{load.Progress{Elapsed: 3 * time.Second, Duration: 4 * time.Second, Done: 1, Total: 2}, "[###############-----]"},
		{load.Progress{Elapsed: 8 * time.Second, Duration: 4 * time.Second}, "[####################]"},
		{load.Progress{Done: 9, Total: 4}, "[####################]"},
	} {
		var out bytes.Buffer
		p := newProgress(&out, true, jobs)
		p.begin(1, jobs[1])
		out.Reset()
		// An hour spent of a run expected to take none: no time left.
		p.started, p.expect = time.Now().Add(-time.Hour), 0
		p.update(tt.lp)
		if !strings.HasPrefix(out.String(), "\r\033[K[2/2]") || !strings.Contains(out.String(), tt.want) {
			t.Errorf("%+v drew %q; want bar %s", tt.lp, out.String(), tt.want)
		}
		if !strings.Contains(out.String(), "~0s left (~0s in all)") {
			t.Errorf("%+v drew %q; want ~0s left in all after the last run", tt.lp, out.String())
		}
	}
	var out bytes.Buffer
	p := newProgress(&out, true, jobs)
	p.begin(0, jobs[0])
	if all := "(~" + short(10*time.Second+RunOverhead) + " in all)"; !strings.Contains(out.String(), all) {
		t.Errorf("drew %q; want the next run's %s", out.String(), all)
	}
}
