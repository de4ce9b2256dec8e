package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// countingServer is an httptest server that counts the requests it receives
// and answers each with handle.
func countingServer(t *testing.T, handle func(n int64, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := count.Add(1)
		handle(n, w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &count
}

func hello(_ int64, w http.ResponseWriter, _ *http.Request) {
	w.Write([]byte("Hello World!"))
}

func mustRun(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestClosedLoopLatencyMatchesServer(t *testing.T) {
	// The server sleeps 100 ms and records how long it really slept: time.Sleep
	// overshoots by up to a millisecond or so, and that is the latency the
	// server injected, which the generator must report: never less, and not
	// much more. On a busy 2-core machine waking the client's goroutine can
	// take several milliseconds, part of what a client sees, so the upper
	// bound is 20%: counting twice, or from before the request was sent,
	// still lands far above it.
	const sleep = 100 * time.Millisecond
	var mu sync.Mutex
	var slept []time.Duration
	srv, _ := countingServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		start := time.Now()
		time.Sleep(sleep)
		d := time.Since(start)
		mu.Lock()
		slept = append(slept, d)
		mu.Unlock()
		w.Write([]byte("slow"))
	})
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Connections: 16, Requests: 160})
	if res.Requests != 160 {
		t.Fatalf("served %d; want 160 (errors %+v)", res.Requests, res.Errors)
	}
	slices.Sort(slept)
	injected := slept[len(slept)/2]
	if p50 := res.Latency.P50; p50 < sleep || p50 < injected*95/100 || p50 > injected*120/100 {
		t.Errorf("p50 = %s; want from 95%% to 120%% of the injected %s (and at least %s)", p50, injected, sleep)
	}
	t.Logf("p50 %s, injected %s", res.Latency.P50, injected)
	if got := res.Percentile(50); got != res.Latency.P50 {
		t.Errorf("Percentile(50) = %s; want Latency.P50 %s", got, res.Latency.P50)
	}
	// The timeline's latency per second: every served request slept, and
	// the seconds together hold the run's mean and maximum (the histogram
	// keeps them to 0.1%).
	var total, longest time.Duration
	var served int64
	for _, s := range res.Timeline {
		if s.Requests > 0 && s.MeanLatency() < sleep {
			t.Errorf("second %d: mean latency %s; want at least %s", s.Second, s.MeanLatency(), sleep)
		}
		total, served, longest = total+s.LatencyTotal, served+s.Requests, max(longest, s.LatencyMax)
	}
	if mean := total / time.Duration(max(served, 1)); mean < res.Latency.Mean*99/100 || mean > res.Latency.Mean*101/100 {
		t.Errorf("timeline mean latency %s; want the run's %s ± 1%%", mean, res.Latency.Mean)
	}
	if longest < res.Latency.Max*99/100 || longest > res.Latency.Max*101/100 {
		t.Errorf("timeline max latency %s; want the run's %s ± 1%%", longest, res.Latency.Max)
	}
}

func TestRequestsStopsExactlyAtN(t *testing.T) {
	for _, tc := range []struct{ conns, n int }{{1, 50}, {7, 1000}, {64, 10}} {
		t.Run(fmt.Sprintf("c%d_n%d", tc.conns, tc.n), func(t *testing.T) {
			srv, count := countingServer(t, hello)
			res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Connections: tc.conns, Requests: int64(tc.n)})
			if got := count.Load(); got != int64(tc.n) {
				t.Errorf("server saw %d requests; want %d", got, tc.n)
			}
			if res.Requests != int64(tc.n) || res.Sent != int64(tc.n) {
				t.Errorf("served %d, sent %d; want %d each", res.Requests, res.Sent, tc.n)
			}
			var inTimeline int64
			for _, s := range res.Timeline {
				inTimeline += s.Requests
			}
			if inTimeline != int64(tc.n) {
				t.Errorf("timeline holds %d requests; want %d", inTimeline, tc.n)
			}
			if got := res.Status[200]; got != int64(tc.n) {
				t.Errorf("status 200 count %d; want %d", got, tc.n)
			}
			if want := int64(tc.n) * int64(len("Hello World!")); res.Bytes <= want {
				t.Errorf("bytes %d; want more than the bodies alone (%d)", res.Bytes, want)
			}
		})
	}
}

func TestDurationStopsClosedLoop(t *testing.T) {
	srv, _ := countingServer(t, hello)
	start := time.Now()
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Connections: 4, Duration: 500 * time.Millisecond})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run took %s; want about 500ms", took)
	}
	if res.Requests == 0 || res.Errors.Total() != 0 {
		t.Errorf("served %d with errors %+v; want some and none", res.Requests, res.Errors)
	}
	if res.Elapsed < 500*time.Millisecond || res.Elapsed > 5*time.Second {
		t.Errorf("elapsed %s; want about 500ms", res.Elapsed)
	}
}

func TestUnexpectedStatusAndBodyAreErrors(t *testing.T) {
	// Request n gets 500 when n%3 == 0, else 200 with "good" when n is even,
	// "bad" when odd.
	srv, _ := countingServer(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		switch {
		case n%3 == 0:
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte("good but 500"))
		case n%2 == 0:
			w.Write([]byte("good"))
		default:
			w.Write([]byte("bad"))
		}
	})
	const n = 90
	var want500, wantBad, wantGood int64
	for i := int64(1); i <= n; i++ {
		switch {
		case i%3 == 0:
			want500++
		case i%2 == 0:
			wantGood++
		default:
			wantBad++
		}
	}
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Connections: 3, Requests: n, ExpectBody: []byte("good")})
	if res.Errors.Status != want500 || res.Errors.Body != wantBad || res.Requests != wantGood {
		t.Errorf("status errors %d, body errors %d, served %d; want %d, %d, %d",
			res.Errors.Status, res.Errors.Body, res.Requests, want500, wantBad, wantGood)
	}
	if res.Non2xx != want500 {
		t.Errorf("non-2xx %d; want %d", res.Non2xx, want500)
	}
	if res.Status[500] != want500 || res.Status[200] != wantGood+wantBad {
		t.Errorf("status counts %v; want 500:%d 200:%d", res.Status, want500, wantGood+wantBad)
	}

	accept500, err := ParseStatus("200,500")
	if err != nil {
		t.Fatal(err)
	}
	res = mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Requests: 30, ExpectStatus: accept500})
	if res.Errors.Total() != 0 || res.Requests != 30 {
		t.Errorf("with 500 expected: served %d, errors %+v; want 30 and none", res.Requests, res.Errors)
	}
}

func TestConnectionRefusedIsReported(t *testing.T) {
	addr := refusedAddr(t)

	res := mustRun(t, Config{Targets: []Target{{URL: "http://" + addr + "/"}}, Connections: 2, Requests: 5})
	if res.Errors.Refused != 5 || res.Requests != 0 {
		t.Errorf("refused %d, served %d; want 5 and 0 (errors %+v)", res.Errors.Refused, res.Requests, res.Errors)
	}

	res = mustRun(t, Config{Targets: []Target{{URL: "http://" + addr + "/"}}, Connections: 2, Duration: 300 * time.Millisecond})
	if res.Errors.Refused == 0 || res.Errors.Total() != res.Errors.Refused {
		t.Errorf("errors %+v; want only refused, at least one", res.Errors)
	}

	res = mustRun(t, Config{Targets: []Target{{URL: "http://" + addr + "/"}}, Rate: 50, Duration: 200 * time.Millisecond})
	if res.Errors.Refused != 10 {
		t.Errorf("open loop: refused %d; want 10 (errors %+v)", res.Errors.Refused, res.Errors)
	}
}

func TestRequestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv, _ := countingServer(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release) // before srv.Close, which waits for handlers
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Connections: 3, Requests: 3, Timeout: 100 * time.Millisecond})
	if res.Errors.Timeout != 3 {
		t.Errorf("timeouts %d; want 3 (errors %+v)", res.Errors.Timeout, res.Errors)
	}
}

func TestContextCancelStopsRun(t *testing.T) {
	srv, _ := countingServer(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(10 * time.Second):
		case <-r.Context().Done():
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, Config{Targets: []Target{{URL: srv.URL}}, Connections: 4})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run took %s after cancel; want prompt return", took)
	}
	if res.Errors.Total() != 0 {
		t.Errorf("errors %+v; want requests cut off by cancel not counted", res.Errors)
	}
}

// oneShotServer answers one request per connection with keep-alive framing
// and then closes the connection without saying so: the client finds out on
// its next request, which must go again on a new connection.
func oneShotServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var count atomic.Int64
	url := tcpServer(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		var got []byte
		for !strings.Contains(string(got), "\r\n\r\n") {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			got = append(got, buf[:n]...)
		}
		count.Add(1)
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	})
	return url, &count
}

func TestServerClosingKeepAliveIsRetried(t *testing.T) {
	url, count := oneShotServer(t)
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Connections: 2, Requests: 40})
	if res.Requests != 40 || res.Errors.Total() != 0 {
		t.Errorf("served %d, errors %+v; want 40 and none", res.Requests, res.Errors)
	}
	if count.Load() != 40 {
		t.Errorf("server answered %d; want 40", count.Load())
	}
	if res.Reconnects < 30 {
		t.Errorf("reconnects %d; want most of 40", res.Reconnects)
	}
}

func TestConnectionCloseHeader(t *testing.T) {
	srv, _ := countingServer(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		if n%5 == 0 {
			w.Header().Set("Connection", "close")
		}
		w.Write([]byte("Hello World!"))
	})
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Requests: 50, ExpectBody: []byte("World")})
	if res.Requests != 50 || res.Errors.Total() != 0 {
		t.Errorf("served %d, errors %+v; want 50 and none", res.Requests, res.Errors)
	}
	if res.Connects != 10 || res.Reconnects != 9 {
		t.Errorf("connects %d, reconnects %d; want 10 and 9", res.Connects, res.Reconnects)
	}
}

func TestMixOfTargets(t *testing.T) {
	var gets, posts atomic.Int64
	srv, _ := countingServer(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			gets.Add(1)
			w.Write([]byte("[]"))
		case http.MethodPost:
			body := make([]byte, 64)
			n, _ := r.Body.Read(body)
			if string(body[:n]) != `{"title":"x"}` || r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			posts.Add(1)
			w.WriteHeader(http.StatusCreated)
		}
	})
	targets := []Target{
		{URL: srv.URL + "/todos"},
		{Method: "POST", URL: srv.URL + "/todos", Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"title":"x"}`)},
	}
	res := mustRun(t, Config{Targets: targets, Connections: 2, Requests: 100})
	if res.Requests != 100 || gets.Load() != 50 || posts.Load() != 50 {
		t.Errorf("served %d, gets %d, posts %d; want 100, 50, 50 (errors %+v)", res.Requests, gets.Load(), posts.Load(), res.Errors)
	}
}

func TestChunkedAndLargeBodies(t *testing.T) {
	big := strings.Repeat("x", 100_000) + "needle"
	srv, _ := countingServer(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		if n%2 == 0 { // chunked: flushing before the end forces it
			w.Write([]byte(big[:50_000]))
			w.(http.Flusher).Flush()
			w.Write([]byte(big[50_000:]))
			return
		}
		w.Write([]byte(big))
	})
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Connections: 2, Requests: 20, ExpectBody: []byte("needle")})
	if res.Requests != 20 || res.Errors.Total() != 0 {
		t.Errorf("served %d, errors %+v; want 20 and none", res.Requests, res.Errors)
	}
	if res.Bytes < 20*int64(len(big)) {
		t.Errorf("bytes %d; want at least %d", res.Bytes, 20*len(big))
	}
}

func TestManyConnections(t *testing.T) {
	// The server holds every request until all the connections have one in
	// flight, so the run can only finish if the generator really keeps that
	// many connections open at once. (The race detector allows 8128
	// goroutines, client and server together; the CLI is measured at 10,000.)
	const conns = 1000
	all := make(chan struct{})
	srv, _ := countingServer(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == conns {
			close(all)
		}
		select {
		case <-all:
		case <-r.Context().Done():
		}
	})
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Connections: conns, Requests: conns, Timeout: 40 * time.Second})
	if res.Requests != conns || res.Connects != conns {
		t.Errorf("served %d over %d connections; want %d over %d (errors %+v, limits %v)",
			res.Requests, res.Connects, conns, conns, res.Errors, res.Limits)
	}
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want error
	}{
		{"no targets", Config{}, ErrBadConfig},
		{"negative rate", Config{Targets: []Target{{URL: "http://x/"}}, Rate: -1}, ErrBadConfig},
		{"NaN rate", Config{Targets: []Target{{URL: "http://x/"}}, Rate: math.NaN()}, ErrBadConfig},
		{"infinite rate", Config{Targets: []Target{{URL: "http://x/"}}, Rate: math.Inf(1)}, ErrBadConfig},
		{"negative pipeline", Config{Targets: []Target{{URL: "http://x/"}}, Pipeline: -1}, ErrBadConfig},
		{"pipeline in open loop", Config{Targets: []Target{{URL: "http://x/"}}, Pipeline: 2, Rate: 10}, ErrBadConfig},
		{"pipeline with phases", Config{Targets: []Target{{URL: "http://x/"}}, Pipeline: 2, Phases: []Phase{{Rate: 1, Duration: 1}}}, ErrBadConfig},
		{"pipeline to two addresses", Config{Targets: []Target{{URL: "http://x/"}, {URL: "http://y/"}}, Pipeline: 2}, ErrBadConfig},
		{"ftp", Config{Targets: []Target{{URL: "ftp://x/"}}}, ErrBadTarget},
		{"no host", Config{Targets: []Target{{URL: "http:///x"}}}, ErrBadTarget},
		{"bad method", Config{Targets: []Target{{Method: "G T", URL: "http://x/"}}}, ErrBadTarget},
		{"bad header", Config{Targets: []Target{{URL: "http://x/", Header: http.Header{"X": {"a\r\nb"}}}}}, ErrBadTarget},
		{"colon in a header name", Config{Targets: []Target{{URL: "http://x/", Header: http.Header{"X:Y": {"z"}}}}}, ErrBadTarget},
		{"colon in a method", Config{Targets: []Target{{Method: "GE:T", URL: "http://x/"}}}, ErrBadTarget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), tc.cfg)
			if !errors.Is(err, tc.want) {
				t.Errorf("Run: %v; want %v", err, tc.want)
			}
		})
	}
	// Two addresses are refused only to a pipelined run.
	for _, pipeline := range []int{0, 1} {
		if _, err := newRunner(Config{Targets: []Target{{URL: "http://x/"}, {URL: "http://y/"}}, Pipeline: pipeline}); err != nil {
			t.Errorf("two addresses, Pipeline %d: %v; want them accepted", pipeline, err)
		}
	}
}

// TestConfigEdges takes each numeric field of Config exactly at its limit
// (zero, which has a documented meaning, or the smallest rate) and one past
// it.
func TestConfigEdges(t *testing.T) {
	target := []Target{{URL: "http://127.0.0.1:1/"}}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // in the error; empty: accepted
	}{
		{"connections 0", Config{Connections: 0}, ""},
		{"connections -1", Config{Connections: -1}, "connections -1"},
		{"requests 0", Config{Requests: 0}, ""},
		{"requests -1", Config{Requests: -1}, "requests -1"},
		{"duration 0", Config{Duration: 0}, ""},
		{"duration -1ns", Config{Duration: -1}, "duration -1ns"},
		{"rate 0", Config{Rate: 0}, ""},
		{"smallest rate", Config{Rate: math.SmallestNonzeroFloat64}, ""},
		{"rate below 0", Config{Rate: -math.SmallestNonzeroFloat64}, "rate -5e-324"},
		{"largest rate", Config{Rate: math.MaxFloat64}, ""},
		{"max conns 0", Config{MaxConns: 0}, ""},
		{"max conns -1", Config{MaxConns: -1}, "max conns -1"},
		{"timeout -1ns (none)", Config{Timeout: -1}, ""},
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

// TestConfigZeroMeansItsDefault checks that each zero Config's fields give
// a meaning reaches the run as its number: one connection, 10,000 at most in open
// loop, 30 s for a request and for a connection attempt; a negative
// Timeout bounds neither.
func TestConfigZeroMeansItsDefault(t *testing.T) {
	target := []Target{{URL: "http://127.0.0.1:1/"}}
	r, err := newRunner(Config{Targets: target})
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.Connections != 1 || r.cfg.MaxConns != 10000 {
		t.Errorf("connections %d, max conns %d; want 1 and 10000", r.cfg.Connections, r.cfg.MaxConns)
	}
	if r.timeout != 30*time.Second || r.dialer.Timeout != 30*time.Second {
		t.Errorf("timeout %s, dial timeout %s; want 30s and 30s", r.timeout, r.dialer.Timeout)
	}
	r, err = newRunner(Config{Targets: target, Timeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.timeout > 0 || r.dialer.Timeout != 0 {
		t.Errorf("Timeout -1: timeout %s, dial timeout %s; want none and none", r.timeout, r.dialer.Timeout)
	}
}

// TestSwitchingProtocolsIsNotServed answers a request with 101, a final
// status below 200: it is counted under its code and as a status error.
func TestSwitchingProtocolsIsNotServed(t *testing.T) {
	url := tcpServer(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n")
	})
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Requests: 1})
	if res.Requests != 0 || res.Errors.Status != 1 || res.Status[101] != 1 {
		t.Errorf("served %d, status errors %d, statuses %v; want 0, 1 and one 101", res.Requests, res.Errors.Status, res.Status)
	}
}

// parkedForADialSlot counts the goroutines blocked in worker.connect itself,
// which is where a worker waits for one of the dial slots.
func parkedForADialSlot() int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, line := range strings.Split(g, "\n")[1:] {
			if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "runtime.") {
				continue
			}
			if strings.HasPrefix(line, "github.com/loomrt/loom/load.(*worker).connect(") {
				n++
			}
			break
		}
	}
	return n
}

// TestDialsRunAtMost128AtATime holds every connection attempt of a
// 200-connection run in the dialer until each worker is either in an
// attempt or waiting for a slot: exactly 128 attempts are in flight, as
// docs/load.md says, and once they are let go every connection opens.
func TestDialsRunAtMost128AtATime(t *testing.T) {
	const conns, slots = 200, 128
	srv, _ := countingServer(t, hello)
	r, err := newRunner(Config{Targets: []Target{{URL: srv.URL}}, Connections: conns, Requests: conns})
	if err != nil {
		t.Fatal(err)
	}
	var dialling atomic.Int64
	release := make(chan struct{})
	r.dialer.ControlContext = func(ctx context.Context, _, _ string, _ syscall.RawConn) error {
		dialling.Add(1)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := r.run(context.Background())
		done <- outcome{res, err}
	}()
	var in, parked int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		in, parked = int(dialling.Load()), parkedForADialSlot()
		if in+parked >= conns {
			break
		}
	}
	close(release)
	o := <-done
	if in != slots || parked != conns-slots {
		t.Errorf("%d attempts in flight, %d workers waiting for a slot; want %d and %d", in, parked, slots, conns-slots)
	}
	if o.err != nil {
		t.Fatalf("run: %v", o.err)
	}
	if o.res.Connects != conns || o.res.Requests != conns {
		t.Errorf("%d connects, %d served; want %d and %d", o.res.Connects, o.res.Requests, conns, conns)
	}
}
