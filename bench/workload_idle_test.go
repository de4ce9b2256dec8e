package bench

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestIdleReport: every format shows the idle table, one note per limit
// naming the models it held back, and the verdict's cost per connection.
func TestIdleReport(t *testing.T) {
	limited := "the file descriptor limit (RLIMIT_NOFILE 20000, less 64)"
	idle := func(perConn float64, before, with uint64) *IdleStats {
		return &IdleStats{Asked: 50000, Held: 19836, Limited: limited, RSSBefore: 14 << 20, RSSWithIdle: 14<<20 + uint64(perConn*19836),
			RSSPerConn: perConn, GoroutinesBefore: before, GoroutinesWithIdle: with, ThreadsBefore: 7, ThreadsWithIdle: 9}
	}
	sr := ScenarioResult{Name: "idle-conns", Plan: Plan{Connections: 100, Idle: 50000}, Runs: []ModelRun{
		{Model: "virtual", Status: StatusOK, Requests: 100, Throughput: 40000, Idle: idle(19.3*1024, 14, 19854)},
		{Model: "nbio/virtual", Status: StatusOK, Requests: 100, Throughput: 39000, Idle: idle(1.6*1024, 19, 21)},
	}}
	judge(&sr)
	r := &Report{Scenarios: []ScenarioResult{sr}}
	var md, text, page bytes.Buffer
	for _, err := range []error{WriteMarkdown(&md, r), WriteText(&text, r), WriteHTML(&page, r)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	wants := []string{"per idle conn", "19.3 KiB", "1.6 KiB", "14 → 19,854", "beside 50,000 idle",
		"19,836 of 50,000 idle connections held (virtual, nbio/virtual): " + limited,
		"an idle connection costs 19.3 KiB on virtual and 1.6 KiB (0.08×) on nbio/virtual"}
	for name, out := range map[string]string{"markdown": md.String(), "text": text.String(), "html": page.String()} {
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q", name, want)
			}
		}
		if n := strings.Count(out, "idle connections held"); n != 1 {
			t.Errorf("%s report: %d notes on the limit; want 1 for both models", name, n)
		}
	}
}

// TestIdleNotesOnePerLimit: one note per distinct limit, in the order the
// runs met it, naming every model it held back; a run held back alone
// gets its note too.
func TestIdleNotesOnePerLimit(t *testing.T) {
	held := func(n int, why string) *IdleStats { return &IdleStats{Asked: 100, Held: n, Limited: why} }
	got := idleNotes([]ModelRun{
		{Model: "a", Idle: held(10, "fd limit")},
		{Model: "b", Idle: &IdleStats{Asked: 100, Held: 100}},
		{Model: "c", Idle: held(20, "fd limit")},
		{Model: "d", Idle: held(10, "fd limit")},
		{Model: "e"}, // no idle phase
	})
	want := []string{"10 of 100 idle connections held (a, d): fd limit", "20 of 100 idle connections held (c): fd limit"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("idleNotes = %q; want %q", got, want)
	}
}

// TestIdleCount cuts the idle connections asked for to what the limit
// leaves beside the active ones, at the edge and past it, and not at all
// when no limit is known.
func TestIdleCount(t *testing.T) {
	for _, tc := range []struct{ asked, active, limit, want int }{
		{1000, 100, 0, 1000},
		{1000, 100, 5000, 1000},
		{1000, 100, 1100, 1000},
		{1000, 100, 1099, 999},
		{1000, 100, 100, 0},
		{1000, 100, 50, 0},
	} {
		if got := idleCount(tc.asked, tc.active, tc.limit); got != tc.want {
			t.Errorf("idleCount(%d asked, %d active, limit %d) = %d; want %d", tc.asked, tc.active, tc.limit, got, tc.want)
		}
	}
}

// TestRSSPerConn divides the RSS the idle connections added by how many
// were held, and gives 0 where there is nothing to divide.
func TestRSSPerConn(t *testing.T) {
	for _, tc := range []struct {
		held          int
		before, after uint64
		want          float64
	}{
		{10, 1000, 3000, 200},
		{1, 1000, 1500, 500},
		{10, 3000, 1000, -200}, // the RSS fell: said as it was measured
		{0, 1000, 3000, 0},
		{10, 1000, 0, 0}, // the RSS after could not be read
	} {
		if got := rssPerConn(tc.held, tc.before, tc.after); got != tc.want {
			t.Errorf("rssPerConn(%d, %d, %d) = %v; want %v", tc.held, tc.before, tc.after, got, tc.want)
		}
	}
}

// TestIdleVerdictLeavesOutRunsThatHeldNone: a run without an idle phase or
// one that held no idle connection has no cost to set beside the others.
func TestIdleVerdictLeavesOutRunsThatHeldNone(t *testing.T) {
	got := idleVerdict([]ModelRun{
		{Model: "a", Idle: &IdleStats{Held: 10, RSSPerConn: 2048}},
		{Model: "b", Idle: &IdleStats{Held: 0}},
		{Model: "c"},
		{Model: "d", Idle: &IdleStats{Held: 10, RSSPerConn: 1024}},
	})
	if want := "an idle connection costs 2.0 KiB on a and 1.0 KiB (0.50×) on d"; got != want {
		t.Errorf("idleVerdict = %q; want %q", got, want)
	}
}
