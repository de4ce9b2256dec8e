package load

import (
	"context"
	"math"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestOpenLoopHoldsTheRate(t *testing.T) {
	const (
		rate     = 500
		duration = 3 * time.Second
		want     = rate * 3
	)
	var mu sync.Mutex
	var arrivals []time.Time
	srv, count := countingServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		now := time.Now()
		mu.Lock()
		arrivals = append(arrivals, now)
		mu.Unlock()
		w.Write([]byte("ok"))
	})
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Rate: rate, Duration: duration})

	// The schedule is fixed, so the count is exact: 3 s at 500/s is 1500.
	if got := count.Load(); got < want*99/100 || got > want*101/100 {
		t.Errorf("server saw %d requests; want %d ± 1%%", got, want)
	}
	if res.Scheduled != want || res.Sent != want || res.Requests != want {
		t.Errorf("scheduled %d, sent %d, served %d; want %d each", res.Scheduled, res.Sent, res.Requests, want)
	}
	// A machine too busy to keep the schedule says so by counting requests
	// late; then the arrival times measure the machine, not the schedule.
	if res.Late > want/20 {
		t.Logf("%d of %d requests late (a busy machine): arrival rate not checked", res.Late, want)
		return
	}
	// They must also arrive at that rate, not in bursts. Compare when the
	// first and the last quarter of the requests arrived, each against the
	// schedule, by their median lag: a median shrugs off the requests that a
	// busy machine delayed, where first-to-last arrival would not.
	slices.SortFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
	lag := func(from, to int) time.Duration {
		var lags []time.Duration
		for i := from; i < to; i++ {
			lags = append(lags, arrivals[i].Sub(arrivals[0])-time.Duration(i)*time.Second/rate)
		}
		slices.Sort(lags)
		return lags[len(lags)/2]
	}
	q := len(arrivals) / 4
	span := time.Duration(len(arrivals)-q) * time.Second / rate // between the quarters' centres
	drift := lag(len(arrivals)-q, len(arrivals)) - lag(0, q)
	got := rate * span.Seconds() / (span + drift).Seconds()
	t.Logf("measured rate %.2f/s, %d late, %d connections, elapsed %s", got, res.Late, res.Connections, res.Elapsed)
	if got < rate*0.99 || got > rate*1.01 {
		t.Errorf("requests arrived at %.1f/s; want %d/s ± 1%%", got, rate)
	}
}

func TestOpenLoopShowsAStall(t *testing.T) {
	// The server stalls once, for a whole second, half a second into the run:
	// request 100 holds a lock every request needs while it sleeps.
	const stall = time.Second
	var lock sync.Mutex
	handler := func(n int64, w http.ResponseWriter, _ *http.Request) {
		lock.Lock()
		if n == 100 {
			time.Sleep(stall)
		}
		lock.Unlock()
		w.Write([]byte("ok"))
	}

	// Open loop, 200/s for 2.5 s: the 200 requests due during the stall are
	// sent on schedule (on new connections) and all wait for it, the first
	// for the full second, the last for almost nothing. As latency counts from
	// each request's due time, 200 of 500 latencies spread evenly over 0-1 s,
	// so p99 is close to the whole stall.
	srv, _ := countingServer(t, handler)
	open := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Rate: 200, Duration: 2500 * time.Millisecond})
	if open.Requests != 500 {
		t.Fatalf("open loop served %d; want 500 (errors %+v)", open.Requests, open.Errors)
	}
	if open.Latency.P99 < stall/2 || open.Latency.P90 < stall/4 {
		t.Errorf("open loop p90 %s, p99 %s; want the 1 s stall to show (p99 over 500ms, p90 over 250ms)", open.Latency.P90, open.Latency.P99)
	}

	// The same server in a closed loop of 2 connections: while it stalls the
	// generator sends nothing, so only 2 requests see the stall among
	// thousands, and p99 hides it. This is coordinated omission.
	srv, _ = countingServer(t, handler)
	closed := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Connections: 2, Duration: 2 * time.Second})
	t.Logf("open p90 %s p99 %s; closed p99 %s max %s over %d requests", open.Latency.P90, open.Latency.P99, closed.Latency.P99, closed.Latency.Max, closed.Requests)
	if closed.Latency.Max < stall {
		t.Errorf("closed loop max %s; want the stall (%s) seen by some request", closed.Latency.Max, stall)
	}
	if closed.Requests > 200 && closed.Latency.P99 >= stall/2 {
		t.Errorf("closed loop p99 %s over %d requests; want it to hide the stall", closed.Latency.P99, closed.Requests)
	}
}

func TestOpenLoopRequestsAndMaxConns(t *testing.T) {
	srv, count := countingServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		time.Sleep(100 * time.Millisecond)
	})
	// 100/s with 100 ms responses needs about 10 connections; 3 make the
	// schedule slip, and the slipped requests count as late.
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Rate: 100, Requests: 60, MaxConns: 3})
	if count.Load() != 60 || res.Requests != 60 {
		t.Errorf("server saw %d, served %d; want 60 each", count.Load(), res.Requests)
	}
	if res.Connections > 3 {
		t.Errorf("connections %d; want at most 3", res.Connections)
	}
	if res.Late < 30 {
		t.Errorf("late %d; want most of 60 requests late with 3 connections", res.Late)
	}
	// The last request was due at 0.59 s but waits its turn: 60 × 100 ms
	// over 3 connections ends near 2 s, and its latency counts from 0.59 s.
	if res.Latency.Max < time.Second {
		t.Errorf("max latency %s; want over 1s as requests queued behind the cap", res.Latency.Max)
	}
}

// TestOpenLoopReusesAnIdleConnection: an open loop opens a connection only
// for a request that no idle worker, nor one still connecting, will take.
// Ten requests 100 ms apart to a server that answers at once find the
// first connection idle each time; a connection per request would be ten.
func TestOpenLoopReusesAnIdleConnection(t *testing.T) {
	srv, count := countingServer(t, hello)
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Rate: 10, Requests: 10, MaxConns: 50})
	if count.Load() != 10 || res.Requests != 10 {
		t.Fatalf("server saw %d, served %d; want 10 each", count.Load(), res.Requests)
	}
	// A machine stalled past 100 ms can make a request find the one
	// worker busy, and open a second: fewer than ten is the guard.
	if res.Connections >= 10 {
		t.Errorf("%d connections for 10 requests 100 ms apart; want fewer: the idle one takes the next", res.Connections)
	}
}

func TestProgressIsReported(t *testing.T) {
	srv, _ := countingServer(t, hello)
	var mu sync.Mutex
	var last Progress
	calls := 0
	mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Duration: 600 * time.Millisecond, Progress: func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		last = p
	}})
	mu.Lock()
	defer mu.Unlock()
	if calls < 2 || last.Done == 0 || last.Duration != 600*time.Millisecond {
		t.Errorf("%d progress calls, last %+v; want at least 2 with requests done", calls, last)
	}
}

// TestOpenLoopLastsItsPlannedLength guards the rate an open loop reports:
// the schedule's last request is due one slot before the end, and a run that
// stopped there (or at a tiny rate, after its only request) divided what it
// served by a shorter time than it was asked to run, reporting 3.6/s for
// --rate 3 -d 2s and thousands per second for --rate 1e-9.
func TestOpenLoopLastsItsPlannedLength(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       Config
		requests  int64
		length    time.Duration
		tolerance time.Duration // how much longer than length the run may take on a busy machine
	}{
		{"rate 3 for 2s", Config{Rate: 3, Duration: 2 * time.Second}, 6, 2 * time.Second, 10 * time.Second},
		{"rate 1e-9 for 300ms", Config{Rate: 1e-9, Duration: 300 * time.Millisecond}, 1, 300 * time.Millisecond, 10 * time.Second},
		// Request 1 would be due past what a time.Duration holds.
		{"rate 1e-12 for 300ms", Config{Rate: 1e-12, Duration: 300 * time.Millisecond}, 1, 300 * time.Millisecond, 10 * time.Second},
		// -n 3 at 10/s is three slots of 100 ms.
		{"3 requests at 10/s", Config{Rate: 10, Requests: 3}, 3, 300 * time.Millisecond, 10 * time.Second},
		{"3 requests at 10/s within 1s", Config{Rate: 10, Requests: 3, Duration: time.Second}, 3, 300 * time.Millisecond, 10 * time.Second},
		{"30 requests at 10/s within 1s", Config{Rate: 10, Requests: 30, Duration: time.Second}, 10, time.Second, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, count := countingServer(t, hello)
			cfg := tc.cfg
			cfg.Targets = []Target{{URL: srv.URL}}
			res := mustRun(t, cfg)
			if res.Scheduled != tc.requests || res.Requests != tc.requests || count.Load() != tc.requests {
				t.Errorf("scheduled %d, served %d, server saw %d; want %d each", res.Scheduled, res.Requests, count.Load(), tc.requests)
			}
			if res.Elapsed < tc.length || res.Elapsed > tc.length+tc.tolerance {
				t.Errorf("elapsed %s; want %s (up to %s more on a busy machine)", res.Elapsed, tc.length, tc.tolerance)
			}
			// Against the planned length the rate is at most requests/length.
			if limit := float64(tc.requests) / tc.length.Seconds(); res.RequestsPerSec > limit {
				t.Errorf("%.2f req/s; want at most %.2f (%d over %s)", res.RequestsPerSec, limit, tc.requests, tc.length)
			}
		})
	}
}

func TestScheduleSaturates(t *testing.T) {
	r := &runner{cfg: Config{Rate: 1e-12}, sched: singleRate(1e-12)}
	if got := r.at(1); got != math.MaxInt64 {
		t.Errorf("at(1) at 1e-12/s = %d; want MaxInt64 (never due), not a wrapped time", got)
	}
	r.cfg.Rate, r.sched = 2, singleRate(2)
	if got, want := r.at(3), 1500*time.Millisecond; got != want {
		t.Errorf("at(3) at 2/s = %s; want %s", got, want)
	}
}

func TestDueBeforeMatchesTheSchedule(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		d    time.Duration
		want int64
	}{
		{3, 2 * time.Second, 6},
		{3, 2*time.Second + 1, 7},
		{10, 300 * time.Millisecond, 3},
		// 0.28 s × 25/s is 7.000000000000001 in float64: the estimate is
		// one over, and request 7 is due at exactly 280 ms, not before.
		{25, 280 * time.Millisecond, 7},
		{1e-9, 2 * time.Second, 1},
		{1e-12, time.Hour, 1},
		{1000, 0, 0},
	} {
		r := &runner{cfg: Config{Rate: tc.rate}, sched: singleRate(tc.rate)}
		if got := r.dueBefore(tc.d); got != tc.want {
			t.Errorf("dueBefore(%s) at %g/s = %d; want %d", tc.d, tc.rate, got, tc.want)
		}
	}
}

func TestOpenProgressPlansTheLength(t *testing.T) {
	for _, tc := range []struct {
		cfg    Config
		length time.Duration
		total  int64
	}{
		{Config{Rate: 10, Requests: 3}, 300 * time.Millisecond, 3},
		{Config{Rate: 3, Duration: 2 * time.Second}, 2 * time.Second, 6},
		{Config{Rate: 3, Duration: 2 * time.Second, Requests: 4}, 1333333333, 4},
		{Config{Rate: 3}, 0, 0},
	} {
		r := &runner{cfg: tc.cfg, start: time.Now(), sched: singleRate(tc.cfg.Rate)}
		p := r.progress()
		if p.Duration != tc.length || p.Total != tc.total {
			t.Errorf("%+v: progress plans %s, %d requests; want %s, %d", tc.cfg, p.Duration, p.Total, tc.length, tc.total)
		}
	}
}

func TestOpenLoopCancelEndsTheWait(t *testing.T) {
	srv, _ := countingServer(t, hello)
	// Cancel once the first request finished, not on a timer: a busy machine
	// may start the run late, and a cancel before the first request would
	// (rightly) send none.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := func(p Progress) {
		if p.Done >= 1 {
			cancel()
		}
	}
	res, err := Run(ctx, Config{Targets: []Target{{URL: srv.URL}}, Rate: 1e-9, Duration: time.Hour, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	// The next request is due in an hour: only the cancel ends the run.
	if res.Requests != 1 || res.Elapsed > 30*time.Second {
		t.Errorf("served %d in %s; want 1, ended by the cancel", res.Requests, res.Elapsed)
	}
}

// TestOpenLoopWithoutTimeoutWaitsForItsResponses runs an open loop with no
// timeout (Timeout < 0), whose responses all come after the schedule ended:
// with no timeout there is no cut-off, so every request is served, and the
// run neither stops early nor trips over the missing cut-off timer.
func TestOpenLoopWithoutTimeoutWaitsForItsResponses(t *testing.T) {
	const n = 3
	all := make(chan struct{})
	srv, count := countingServer(t, func(i int64, w http.ResponseWriter, _ *http.Request) {
		if i == n {
			close(all)
		}
		// Answer once every request arrived, so after the schedule's end,
		// and half a second later still: a cut-off made at the schedule's
		// end, however late a busy machine runs it, comes first.
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			t.Errorf("request %d: the other requests did not arrive within 10s", i)
		}
		time.Sleep(500 * time.Millisecond)
	})
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Rate: 100, Requests: n, Timeout: -1})
	if res.Requests != n || count.Load() != n {
		t.Errorf("served %d, server saw %d; want %d each (errors %+v)", res.Requests, count.Load(), n, res.Errors)
	}
}

func TestOpenLoopTimeoutCountsFromTheSchedule(t *testing.T) {
	// The server takes 100 ms a request and the run may use 2 connections:
	// it serves 20/s of the 100/s due, so due requests queue in the
	// generator. Each request's 300 ms timeout runs from when it was due, so
	// no served request took longer than that, however long the queue; the
	// rest fail as timeouts, sent or not. Counting from when a request went
	// out instead serves requests seconds after they were due.
	const timeout = 300 * time.Millisecond
	srv, _ := countingServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		time.Sleep(100 * time.Millisecond)
		w.Write([]byte("ok"))
	})
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Rate: 100, Duration: time.Second,
		MaxConns: 2, Timeout: timeout})
	t.Logf("served %d, errors %+v, scheduled %d, sent %d, late %d, max latency %s",
		res.Requests, res.Errors, res.Scheduled, res.Sent, res.Late, res.Latency.Max)
	if res.Scheduled != 100 {
		t.Errorf("scheduled %d; want 100", res.Scheduled)
	}
	if got := res.Requests + res.Errors.Total(); got != res.Scheduled {
		t.Errorf("served %d + failed %d = %d; want every one of the %d requests due counted", res.Requests, res.Errors.Total(), got, res.Scheduled)
	}
	if failed := res.Errors.Timeout + res.Errors.TimeoutUnsent; failed != res.Errors.Total() || failed < 50 {
		t.Errorf("errors %+v; want only timeouts, at least 50 of them (the server serves 20 of the 100 in time at most)", res.Errors)
	}
	// The read deadline is the request's due time plus the timeout; the
	// slack is what reading the clock after the read may add on a busy
	// machine. Counting from the send instead, the slowest took seconds.
	if limit := 2 * timeout; res.Latency.Max > limit {
		t.Errorf("slowest served request took %s from when it was due; want at most %s", res.Latency.Max, limit)
	}
}

func TestOpenLoopGivesUpARequestWhoseTimeoutPassedUnsent(t *testing.T) {
	// A worker takes requests due long ago: 50 whose 5 s timeout passed a
	// minute back, and 5 due within the last second. Only the 5 reach the
	// server; the 50 fail as timeouts unsent.
	srv, count := countingServer(t, hello)
	r, err := newRunner(Config{Targets: []Target{{URL: srv.URL}}, Rate: 10, MaxConns: 1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	defer r.cancel()
	r.start = time.Now().Add(-60 * time.Second) // request i was due i/10 s after it
	due := make(chan int64, 55)
	for i := range int64(50) {
		due <- i // due 55 s to 60 s ago
	}
	for i := int64(595); i < 600; i++ {
		due <- i // due 0.1 s to 0.5 s ago
	}
	close(due)
	w := r.addWorker()
	r.starting.Add(1)
	w.openLoop(due)
	res, err := r.result(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors.TimeoutUnsent != 50 || res.Errors.Total() != 50 {
		t.Errorf("errors %+v; want 50 timeouts unsent and nothing else", res.Errors)
	}
	if res.Requests != 5 || res.Sent != 5 || count.Load() != 5 {
		t.Errorf("served %d, sent %d, server saw %d; want 5 each", res.Requests, res.Sent, count.Load())
	}
	if res.Late != 55 {
		t.Errorf("late %d; want 55 (all started over %s after they were due)", res.Late, LateAfter)
	}
}
