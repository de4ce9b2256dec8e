package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/harness/runtimestats"
	"github.com/loomrt/loom/load"
)

// Tests added for the mutation pass over bench's part B (docs/testing.md):
// each guards a comparison or a branch that a planted bug changed unseen.

// TestSummarisePeaksAndDifferences: peaks are taken over every sample, the
// runtime's only over those it answered, and CPU and GC are differences
// between the first and last (GC: first and last answered) samples.
func TestSummarisePeaksAndDifferences(t *testing.T) {
	samples := []Sample{
		{RSSBytes: 10, Threads: 3, CPUSeconds: 1.0, GCCycles: 100, Goroutines: 99, NotInGo: 99}, // runtime did not answer
		{RSSBytes: 30, Threads: 2, CPUSeconds: 1.25, RuntimeOK: true, Goroutines: 5, NotInGo: 4, GCCycles: 7},
		{RSSBytes: 20, Threads: 6, CPUSeconds: 1.5, RuntimeOK: true, Goroutines: 8, NotInGo: 1, GCCycles: 9},
		{RSSBytes: 5, Threads: 1, CPUSeconds: 2.5, RuntimeOK: true, Goroutines: 2, NotInGo: 0, GCCycles: 12},
	}
	st := summarise(samples, 1)
	want := ServerStats{
		PeakRSSBytes: 30, PeakThreads: 6, PeakGoroutines: 8, PeakNotInGo: 4,
		CPUSeconds: 1.5, GCCycles: 5, RuntimeUnavailable: 1,
	}
	st.Samples = nil
	if !reflect.DeepEqual(st, want) {
		t.Errorf("summarise = %+v; want %+v", st, want)
	}
	if st := summarise(nil, 0); st.CPUSeconds != 0 || st.GCCycles != 0 {
		t.Errorf("summarise(nil) = %+v; want zero", st)
	}
}

// TestSamplerReadsProcessAndRuntime samples this test process with a real
// runtimestats listener: the executor's figures reach the sample, and a
// reading the listener did not give in time is counted as missed.
func TestSamplerReadsProcessAndRuntime(t *testing.T) {
	srv := httptest.NewServer(runtimestats.HandlerWith(func(s *runtimestats.Snapshot) {
		s.ExecutorLimit, s.ExecutorRunning, s.ExecutorQueued = 7, 3, 2
		s.ExecutorRejected, s.ExecutorExpired = 5, 1
	}))
	defer srv.Close()
	s := startSampler(context.Background(), os.Getpid(), strings.TrimPrefix(srv.URL, "http://"), time.Now())
	// A loaded machine may miss a reading's 200 ms; wait for one that came.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.mu.Lock()
		ok := false
		for _, smp := range s.samples {
			ok = ok || smp.RuntimeOK
		}
		s.mu.Unlock()
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	st := s.Stop()
	if len(st.Samples) < 2 {
		t.Fatalf("%d samples; want the loop's and Stop's", len(st.Samples))
	}
	missed := 0
	var got *Sample
	for i, smp := range st.Samples {
		if smp.RSSBytes == 0 || smp.Threads == 0 {
			t.Errorf("sample %d: %+v; want this process's memory and threads", i, smp)
		}
		if !smp.RuntimeOK {
			missed++
			continue
		}
		got = &st.Samples[i]
	}
	if st.RuntimeUnavailable != missed {
		t.Errorf("RuntimeUnavailable %d; %d samples lack the runtime's figures", st.RuntimeUnavailable, missed)
	}
	if got == nil {
		t.Fatal("no sample read the runtimestats listener in 30 s")
	}
	if got.Limit != 7 || got.InFlight != 3 || got.Queued != 2 || got.Rejected != 5 || got.Expired != 1 || got.Goroutines == 0 {
		t.Errorf("sample %+v; want limit 7, 3 in flight, 2 queued, 5 rejected, 1 expired, goroutines", *got)
	}
}

// TestSamplerWithoutRuntimeMissesNothing: a server with no runtimestats
// listener (a peer) has samples from /proc alone, none counted as missed.
func TestSamplerWithoutRuntimeMissesNothing(t *testing.T) {
	s := startSampler(context.Background(), os.Getpid(), "", time.Now())
	st := s.Stop()
	if len(st.Samples) == 0 || st.RuntimeUnavailable != 0 {
		t.Errorf("%d samples, %d missed; want samples and none missed", len(st.Samples), st.RuntimeUnavailable)
	}
	if st.Samples[0].RuntimeOK {
		t.Errorf("sample %+v read a runtime it was not given", st.Samples[0])
	}
}

// TestSamplerStopsWhenTheProcessIsGone: a pid with no process gives no
// sample, and the loop ends by itself.
func TestSamplerStopsWhenTheProcessIsGone(t *testing.T) {
	s := startSampler(context.Background(), 1<<30, "", time.Now())
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("sampler of a missing process still running after 30 s")
	}
	if st := s.Stop(); len(st.Samples) != 0 {
		t.Errorf("%d samples of a missing process", len(st.Samples))
	}
}

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
	newProgress(nil, true, jobs).begin(0, jobs[0]) // no writer: nothing, no panic
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

// TestLineWatcherEdges: an empty line before the listening line does not
// stop the search, and the buffer of a child that never ends a line is
// dropped only past 64 KiB.
func TestLineWatcherEdges(t *testing.T) {
	w := &lineWatcher{found: make(chan [2]string, 1)}
	w.Write([]byte("\n\nlistening http=127.0.0.1:9 metrics=127.0.0.1:10\n"))
	select {
	case got := <-w.found:
		if got != [2]string{"127.0.0.1:9", "127.0.0.1:10"} {
			t.Errorf("found %v; want both addresses", got)
		}
	default:
		t.Error("listening line after empty lines not found")
	}

	w = &lineWatcher{found: make(chan [2]string, 1)}
	w.Write(bytes.Repeat([]byte("x"), 64<<10))
	if len(w.buf) != 64<<10 {
		t.Errorf("buffer of 64 KiB without a newline: %d bytes kept; want all", len(w.buf))
	}
	w.Write([]byte("x"))
	if len(w.buf) != 0 {
		t.Errorf("buffer of 64 KiB + 1 without a newline: %d bytes kept; want none", len(w.buf))
	}
}

// TestStderrLogEdges: empty lines are lines; a line of exactly lineLimit
// bytes is kept whole, one byte more is cut; an unterminated run of bytes
// becomes a line only past lineLimit; at most fatalLines fatal lines are
// kept.
func TestStderrLogEdges(t *testing.T) {
	l := newStderrLog()
	l.Write([]byte("a\n\nb\n"))
	if got := l.Tail(); !reflect.DeepEqual(got, []string{"a", "", "b"}) {
		t.Errorf("Tail() = %q; want a, empty, b and no empty unterminated line", got)
	}

	exact := strings.Repeat("x", lineLimit)
	l = newStderrLog()
	l.Write([]byte(exact + "\n" + exact + "y\n"))
	if got := l.Tail(); !reflect.DeepEqual(got, []string{exact, exact + "…"}) {
		t.Errorf("Tail() of lines of %d and %d bytes = %q; want the first whole, the second cut", lineLimit, lineLimit+1, got)
	}

	l = newStderrLog()
	l.Write([]byte(exact))
	l.Write([]byte("yz\n"))
	if got := l.Tail(); !reflect.DeepEqual(got, []string{exact + "…"}) {
		t.Errorf("Tail() of %d bytes then \"yz\\n\" = %q; want one line, cut", lineLimit, got)
	}

	l = newStderrLog()
	for i := range fatalLines + 1 {
		fmt.Fprintf(l, "panic: %d\n", i)
	}
	if got := l.Fatal(); len(got) != fatalLines || got[fatalLines-1] != fmt.Sprintf("panic: %d", fatalLines-1) {
		t.Errorf("Fatal() = %q; want the first %d", got, fatalLines)
	}
}

// TestSamplerCountsMissedReadings: every reading of a metrics listener
// that answers with an error is counted as missed.
func TestSamplerCountsMissedReadings(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	s := startSampler(context.Background(), os.Getpid(), strings.TrimPrefix(srv.URL, "http://"), time.Now())
	st := s.Stop()
	if len(st.Samples) == 0 || st.RuntimeUnavailable != len(st.Samples) {
		t.Errorf("%d samples, %d missed; want every one missed", len(st.Samples), st.RuntimeUnavailable)
	}
}

// TestServeInProcessEndsWithoutError: Serve serves the scenario and its
// metrics, and returns nil once ctx ends: the executor's shutdown and the
// metrics listener's close are not errors.
func TestServeInProcessEndsWithoutError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &lineWatcher{found: make(chan [2]string, 1)}
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeConfig{Scenario: "test-ok", Model: "pool:2", Scenarios: testCatalogue()}, w)
	}()
	var addrs [2]string
	select {
	case addrs = <-w.found:
	case err := <-done:
		t.Fatalf("Serve returned %v before listening", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Serve not listening after 30 s")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for _, url := range []string{"http://" + addrs[0] + "/", "http://" + addrs[1] + "/"} {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s: %s %q; want 200 and a body", url, resp.Status, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v after ctx ended; want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve still serving 30 s after ctx ended")
	}
}

// TestUnloadedNote: a run with both p99s gets their ratio; a run of a plan
// with an unloaded phase but no reference says so, unless it crashed or
// failed; a plan without the phase gets no note.
func TestUnloadedNote(t *testing.T) {
	p99 := func(d time.Duration) []Percentile { return []Percentile{{Percentile: 99, Latency: d}} }
	sc := ScenarioResult{
		Plan: Plan{UnloadedRate: 200, UnloadedDuration: 5 * time.Second},
		Runs: []ModelRun{
			{Model: "adaptive", Status: StatusOK, Latency: p99(60 * time.Millisecond), Unloaded: p99(20 * time.Millisecond)},
			{Model: "pool", Status: StatusOK, Latency: p99(60 * time.Millisecond), UnloadedErrors: 3},
			{Model: "limit", Status: StatusOK, Unloaded: p99(20 * time.Millisecond), UnloadedErrors: 4},
			{Model: "threads", Status: StatusCrashed, Latency: p99(time.Millisecond)},
			{Model: "virtual", Status: StatusFailed},
		},
	}
	want := "p99 ÷ unloaded p99 (200 req/s for 5s on the same server first): adaptive 60ms ÷ 20ms = 3.0×; " +
		"pool no unloaded reference (3 of its requests failed); limit no unloaded reference (4 of its requests failed)"
	if got := unloadedNote(sc); got != want {
		t.Errorf("unloadedNote =\n%q; want\n%q", got, want)
	}
	sc.Plan.UnloadedRate = 0
	sc.Runs = sc.Runs[1:]
	if got := unloadedNote(sc); got != "" {
		t.Errorf("unloadedNote without an unloaded phase = %q; want none", got)
	}
}

func TestOr(t *testing.T) {
	if or("a", "b") != "a" || or("", "b") != "b" {
		t.Errorf(`or("a", "b") = %q, or("", "b") = %q; want a, b`, or("a", "b"), or("", "b"))
	}
}

// TestStepEdges: within's band includes its edges; a settling window may
// end exactly at the phase's end and includes a sample at its own end;
// servedAt interpolates between samples, from 0 before the first;
// afterSeconds calls 0 s settled.
func TestStepEdges(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want bool
	}{{49.9, false}, {50, true}, {150, true}, {150.1, false}} {
		if got := within(tt.v, 100, 0.5); got != tt.want {
			t.Errorf("within(%v, 100, 0.5) = %v; want %v", tt.v, got, tt.want)
		}
	}

	w := settleWindow
	times := []time.Duration{0, w / 2, w}
	if got := firstSettled(0, w, times, []float64{100, 100, 100}, 100, 0.1); got != 0 {
		t.Errorf("firstSettled with a window ending at the phase's end = %v; want 0", got)
	}
	if got := firstSettled(0, w, times, []float64{100, 100, 0}, 100, 0.1); got != -1 {
		t.Errorf("firstSettled with the window's last sample out of band = %v; want -1", got)
	}

	at := servedAt([]ClientSample{{At: time.Second, Served: 10}, {At: 3 * time.Second, Served: 30}})
	for _, tt := range []struct {
		t    time.Duration
		want float64
	}{{0, 0}, {500 * time.Millisecond, 5}, {time.Second, 10}, {2 * time.Second, 20}, {3 * time.Second, 30}, {4 * time.Second, 30}} {
		if got := at(tt.t); got != tt.want {
			t.Errorf("servedAt(%v) = %v; want %v", tt.t, got, tt.want)
		}
	}
	if got := servedAt([]ClientSample{{At: 0, Served: 5}})(-time.Second); got != 5 {
		t.Errorf("servedAt before a sample at 0 = %v; want its count, 5", got)
	}
	if servedAt(nil) != nil {
		t.Error("servedAt(nil) is not nil")
	}

	if got := afterSeconds(0); got != "settled within 0.0 s" {
		t.Errorf("afterSeconds(0) = %q", got)
	}
	if got := afterSeconds(-1); got != "not settled before the phase ended" {
		t.Errorf("afterSeconds(-1) = %q", got)
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
	})
	want := []string{"10 of 100 idle connections held (a, d): fd limit", "20 of 100 idle connections held (c): fd limit"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("idleNotes = %q; want %q", got, want)
	}
}
