package load

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// stepPhases is a step-load schedule in miniature: a pause, and phase
// lengths that are not whole slots of their rate.
var stepPhases = []Phase{
	{Rate: 100, Duration: 300 * time.Millisecond},   // 30 requests, at 0, 10, …, 290 ms
	{Rate: 0, Duration: 200 * time.Millisecond},     // none
	{Rate: 50, Duration: 205 * time.Millisecond},    // 11, at 500, 520, …, 700 ms
	{Rate: 1000, Duration: 10 * time.Millisecond},   // 10, at 705, 706, …, 714 ms
	{Rate: 3, Duration: 1000 * time.Millisecond},    // 3, at 715, 1048.3, 1381.6 ms
	{Rate: 1e-12, Duration: 100 * time.Millisecond}, // 1, at 1715 ms
}

// TestSchedulePhases counts the requests the schedule sends in each phase,
// by when each is due, with no clock involved.
func TestSchedulePhases(t *testing.T) {
	s := newSchedule(stepPhases)
	want := []int64{30, 0, 11, 10, 3, 1}
	if got := s.total(); got != 55 {
		t.Fatalf("total %d; want 55", got)
	}
	if got, want := s.length(), 1815*time.Millisecond; got != want {
		t.Errorf("length %s; want %s", got, want)
	}
	// Walk the requests in order, assigning each to the phase it is due in.
	counts := make([]int64, len(stepPhases))
	var phaseStart time.Duration
	k := 0
	prev := time.Duration(-1)
	for i := range s.total() {
		at := s.at(i)
		if at <= prev {
			t.Fatalf("request %d due at %s, not after request %d at %s", i, at, i-1, prev)
		}
		prev = at
		for at >= phaseStart+stepPhases[k].Duration {
			phaseStart += stepPhases[k].Duration
			k++
		}
		counts[k]++
	}
	for i := range want {
		if counts[i] != want[i] {
			t.Errorf("phase %d (%g/s for %s): %d requests due; want %d", i+1, stepPhases[i].Rate, stepPhases[i].Duration, counts[i], want[i])
		}
	}
	for _, tc := range []struct {
		i    int64
		want time.Duration
	}{
		{0, 0}, {29, 290 * time.Millisecond}, {30, 500 * time.Millisecond}, {40, 700 * time.Millisecond},
		{41, 705 * time.Millisecond}, {51, 715 * time.Millisecond}, {54, 1715 * time.Millisecond},
		{55, math.MaxInt64}, // past the end: never due
	} {
		if got := s.at(tc.i); got != tc.want {
			t.Errorf("at(%d) = %s; want %s", tc.i, got, tc.want)
		}
	}
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 0}, {1, 1}, {290 * time.Millisecond, 29}, {290*time.Millisecond + 1, 30},
		{500 * time.Millisecond, 30}, {500*time.Millisecond + 1, 31}, {time.Second, 51 + 1},
		{1815 * time.Millisecond, 55}, {time.Hour, 55},
	} {
		if got := s.dueBefore(tc.d); got != tc.want {
			t.Errorf("dueBefore(%s) = %d; want %d", tc.d, got, tc.want)
		}
	}
}

// One Rate is one phase that never ends, and keeps the schedule it had
// before phases existed: request i at i/Rate.
func TestSingleRateSchedule(t *testing.T) {
	s := singleRate(3)
	if s.length() != math.MaxInt64 || s.total() < 1<<30 {
		t.Errorf("length %s, total %d; want no end", s.length(), s.total())
	}
	if got, want := s.at(7), 2333333333*time.Nanosecond; got != want {
		t.Errorf("at(7) at 3/s = %s; want %s", got, want)
	}
	if got := singleRate(math.MaxFloat64).total(); got != math.MaxInt64 {
		t.Errorf("total at the largest rate %d; want MaxInt64 (saturated, not wrapped)", got)
	}
}

func TestBadPhases(t *testing.T) {
	target := []Target{{URL: "http://127.0.0.1:1/"}}
	ok := Phase{Rate: 10, Duration: time.Second}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // in the error; empty: accepted
	}{
		{"one phase", Config{Phases: []Phase{ok}}, ""},
		{"a pause", Config{Phases: []Phase{{Rate: 0, Duration: time.Second}, ok}}, ""},
		{"a pause last", Config{Phases: []Phase{ok, {Rate: 0, Duration: time.Second}}}, ""},
		{"rate and phases", Config{Rate: 5, Phases: []Phase{ok}}, "rate 5 and 1 phases: set one"},
		{"negative rate", Config{Phases: []Phase{ok, {Rate: -1, Duration: time.Second}}}, "phase 2: rate -1 < 0"},
		{"NaN rate", Config{Phases: []Phase{{Rate: math.NaN(), Duration: time.Second}}}, "phase 1: rate NaN is not a finite number"},
		{"infinite rate", Config{Phases: []Phase{{Rate: math.Inf(1), Duration: time.Second}}}, "phase 1: rate +Inf is not a finite number"},
		{"zero duration", Config{Phases: []Phase{ok, ok, {Rate: 10}}}, "phase 3: duration 0s; want > 0"},
		{"negative duration", Config{Phases: []Phase{{Rate: 10, Duration: -time.Second}}}, "phase 1: duration -1s; want > 0"},
		{"too long", Config{Phases: []Phase{{Rate: 1, Duration: math.MaxInt64 - 1}, ok}}, "phase 2: phases last longer than"},
		{"only pauses", Config{Phases: []Phase{{Duration: time.Second}, {Duration: time.Second}}}, "2 phases schedule no request"},
		// A phase at any positive rate sends its first request as it starts.
		{"a tiny rate", Config{Phases: []Phase{{Duration: time.Second}, {Rate: 1e-12, Duration: time.Second}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Targets = target
			_, err := newRunner(cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("newRunner: %v; want it accepted", err)
			case tc.want != "" && (!errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("newRunner: %v; want ErrBadConfig naming %q", err, tc.want)
			}
		})
	}
}

// A run with phases sends exactly the requests its schedule holds, ends
// with its last phase when neither Duration nor Requests is given, and
// reports the phases and their mean rate. Duration and Requests still end
// it early.
func TestOpenLoopRunsThePhases(t *testing.T) {
	phases := []Phase{{Rate: 100, Duration: 200 * time.Millisecond}, {Rate: 0, Duration: 100 * time.Millisecond}, {Rate: 50, Duration: 200 * time.Millisecond}}
	for _, tc := range []struct {
		name     string
		cfg      Config
		requests int64
	}{
		{"whole schedule", Config{Phases: phases}, 30},
		{"cut by duration", Config{Phases: phases, Duration: 250 * time.Millisecond}, 20},
		{"cut by requests", Config{Phases: phases, Requests: 25}, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, count := countingServer(t, hello)
			cfg := tc.cfg
			cfg.Targets = []Target{{URL: srv.URL}}
			res := mustRun(t, cfg)
			if res.Scheduled != tc.requests || res.Sent != tc.requests || res.Requests != tc.requests || count.Load() != tc.requests {
				t.Errorf("scheduled %d, sent %d, served %d, server saw %d; want %d each",
					res.Scheduled, res.Sent, res.Requests, count.Load(), tc.requests)
			}
			if res.Mode != Open || len(res.Phases) != len(phases) {
				t.Errorf("mode %s, phases %v; want open with %v", res.Mode, res.Phases, phases)
			}
		})
	}
}

func TestPhasesInProgressAndText(t *testing.T) {
	r, err := newRunner(Config{Targets: []Target{{URL: "http://127.0.0.1:1/"}}, Phases: stepPhases})
	if err != nil {
		t.Fatal(err)
	}
	r.start = time.Now()
	if p := r.progress(); p.Duration != 1815*time.Millisecond || p.Total != 55 {
		t.Errorf("progress plans %s, %d requests; want 1.815s, 55", p.Duration, p.Total)
	}
	res := &Result{Mode: Open, Rate: 10, Phases: []Phase{{Rate: 5, Duration: time.Second}, {Rate: 15, Duration: time.Second}}}
	var b bytes.Buffer
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "Open loop at 5 req/s for 1s, then 15 req/s for 1s (mean 10 req/s)"; !strings.Contains(b.String(), want) {
		t.Errorf("text:\n%s\nwant it to contain %q", b.String(), want)
	}
}

func TestMergePhases(t *testing.T) {
	a := []Phase{{Rate: 5, Duration: time.Second}, {Rate: 15, Duration: time.Second}}
	b := []Phase{{Rate: 1, Duration: time.Second}, {Rate: 2, Duration: time.Second}}
	got := mergePhases(a, b)
	if len(got) != 2 || got[0].Rate != 6 || got[1].Rate != 17 || a[0].Rate != 5 {
		t.Errorf("merged %v (a now %v); want rates 6 and 17, a unchanged", got, a)
	}
	if got := mergePhases(a, b[:1]); got != nil {
		t.Errorf("merged different schedules to %v; want nil", got)
	}
	if got := mergePhases(a, []Phase{{Rate: 1, Duration: time.Second}, {Rate: 2, Duration: 2 * time.Second}}); got != nil {
		t.Errorf("merged schedules changing at different times to %v; want nil", got)
	}
}

func TestParsePhases(t *testing.T) {
	got, err := ParsePhases("500:10s, 2000:1m30s,0:500ms,1e-3:1h")
	want := []Phase{{500, 10 * time.Second}, {2000, 90 * time.Second}, {0, 500 * time.Millisecond}, {1e-3, time.Hour}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ParsePhases: %v, %v; want %v", got, err, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"", `phase 1 "": want RATE:DURATION`},
		{"500", `phase 1 "500": want RATE:DURATION`},
		{"500:10s,", `phase 2 "": want RATE:DURATION`},
		{"fast:10s", `rate "fast" is not a number`},
		{"500:10", `duration "10" is not a Go duration`},
		{"500:10s,-1:1s", "phase 2: rate -1 < 0"},
		{"500:0s", "phase 1: duration 0s; want > 0"},
		{"NaN:1s", "phase 1: rate NaN is not a finite number"},
		{"0:1s", "1 phases schedule no request"},
	} {
		_, err := ParsePhases(tc.in)
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePhases(%q): %v; want ErrBadConfig naming %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParsePhases(f *testing.F) {
	for _, s := range []string{"500:10s,2000:10s,500:10s", "0:1s,1:1ms", "1e9:1ns", "1e12:1s", "x:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		phases, err := ParsePhases(s)
		if err != nil {
			if !errors.Is(err, ErrBadConfig) {
				t.Fatalf("error %v is not ErrBadConfig", err)
			}
			return
		}
		// What parses is a schedule Run accepts, whose requests are due in
		// order (at the same nanosecond, at rates above 1e9/s) and within
		// its length.
		if err := checkPhases(phases); err != nil {
			t.Fatalf("%q parsed to %v, which Run refuses: %v", s, phases, err)
		}
		sched := newSchedule(phases)
		prev := time.Duration(-1)
		for i := range min(sched.total(), 1000) {
			at := sched.at(i)
			if at < prev || at >= sched.length() {
				t.Fatalf("%q: request %d due at %s (the one before at %s, the schedule ends at %s)", s, i, at, prev, sched.length())
			}
			prev = at
		}
	})
}

// TestPhaseRequestsAtTheEdges counts the requests of a phase whose length
// is at or below zero, and at a slot's edge: a request due exactly at the
// end is not in the phase.
func TestPhaseRequestsAtTheEdges(t *testing.T) {
	for _, tc := range []struct {
		rate   float64
		length time.Duration
		want   int64
	}{
		{100, -time.Second, 0},
		{100, -1, 0},
		{100, 0, 0},
		{0, time.Second, 0},
		{100, 1, 1},
		{100, 10 * time.Millisecond, 1},
		{100, 10*time.Millisecond + 1, 2},
		{100, time.Second, 100},
	} {
		if got := phaseRequests(tc.rate, tc.length); got != tc.want {
			t.Errorf("phaseRequests(%g, %s) = %d; want %d", tc.rate, tc.length, got, tc.want)
		}
	}
	if got := singleRate(100).dueBefore(-time.Second); got != 0 {
		t.Errorf("dueBefore(-1s) at 100/s = %d; want 0", got)
	}
}
