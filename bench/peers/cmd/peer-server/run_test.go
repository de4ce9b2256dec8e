package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"
)

// started is a peer server running in-process, as loom bench would see it.
type started struct {
	appURL, metricsURL string
	stop               func() error // cancels run's context and returns its error
}

// start runs the server with args and waits for its "listening" line.
func start(t *testing.T, args ...string) started {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, in := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, in)
		in.Close()
		done <- err
	}()
	stop := func() error {
		cancel()
		return <-done
	}

	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read listening line: %v (run: %v)", err, stop())
	}
	// Nothing else is written; drain in case that changes, so run never
	// blocks on the pipe.
	go func() { _, _ = io.Copy(io.Discard, out) }()

	var appAddr, metricsAddr string
	if _, err := fmt.Sscanf(line, "listening http=%s metrics=%s\n", &appAddr, &metricsAddr); err != nil {
		stop()
		t.Fatalf("listening line %q: %v", line, err)
	}
	return started{appURL: "http://" + appAddr + "/", metricsURL: "http://" + metricsAddr + "/", stop: stop}
}

// get fetches url with a client that keeps no connection open afterwards.
func get(t *testing.T, url string) (status int, body string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body of %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

func TestRunServesWorkloads(t *testing.T) {
	const nap = 20 * time.Millisecond
	for i, fw := range frameworkNames {
		if framework(i).actors() {
			continue // actor-echo only: TestRunServesActorEcho
		}
		for _, tc := range []struct {
			workload string
			body     string
			atLeast  time.Duration
		}{
			{"hello", helloBody, 0},
			{"sleep", sleepBody, nap},
		} {
			if framework(i).native() && tc.workload == "sleep" {
				continue // hello and TechEmpower only
			}
			t.Run(fw+"/"+tc.workload, func(t *testing.T) {
				s := start(t, "-framework", fw, "-workload", tc.workload, "-sleep", nap.String())

				began := time.Now()
				status, body := get(t, s.appURL)
				took := time.Since(began)
				if status != http.StatusOK {
					t.Errorf("GET / status = %d; want 200", status)
				}
				if body != tc.body {
					t.Errorf("GET / body = %q; want %q", body, tc.body)
				}
				// A lower bound only: the sleep must have happened.
				if took < tc.atLeast {
					t.Errorf("GET / took %v; want at least %v", took, tc.atLeast)
				}

				if status, _ := get(t, s.appURL+"missing"); status != http.StatusNotFound {
					t.Errorf("GET /missing status = %d; want 404", status)
				}

				status, body = get(t, s.metricsURL)
				if status != http.StatusOK {
					t.Errorf("GET metrics status = %d; want 200", status)
				}
				var snap struct{ Goroutines int64 }
				if err := json.Unmarshal([]byte(body), &snap); err != nil {
					t.Errorf("metrics body %q: %v", body, err)
				} else if snap.Goroutines <= 0 {
					t.Errorf("metrics goroutines = %d; want > 0", snap.Goroutines)
				}

				if err := s.stop(); err != nil {
					t.Errorf("run after cancel = %v; want nil", err)
				}
			})
		}
	}
}

// Each actor library serves GET /echo with the messages one request moved,
// the body loom bench's actor-echo scenario expects, also with more
// requests at once than there are pairs (they wait for one).
func TestRunServesActorEcho(t *testing.T) {
	for _, fw := range []string{"protoactor", "hollywood"} {
		t.Run(fw, func(t *testing.T) {
			s := start(t, "-framework", fw, "-workload", "actor-echo", "-pairs", "2")
			want := fmt.Sprintf("echoed=%d\n", actorEchoRounds*50*2)
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
			var wg sync.WaitGroup
			for range 5 {
				wg.Go(func() {
					resp, err := client.Get(s.appURL + "echo")
					if err != nil {
						t.Error(err)
						return
					}
					defer resp.Body.Close()
					b, err := io.ReadAll(resp.Body)
					if err != nil || resp.StatusCode != http.StatusOK || string(b) != want {
						t.Errorf("GET /echo = %d %q, %v; want 200 %q", resp.StatusCode, b, err, want)
					}
				})
			}
			wg.Wait()
			if status, _ := get(t, s.appURL); status != http.StatusNotFound {
				t.Errorf("GET / status = %d; want 404 (actor-echo is served at /echo)", status)
			}
			if err := s.stop(); err != nil {
				t.Errorf("run after cancel = %v; want nil", err)
			}
		})
	}
}

func TestRunServesBlock(t *testing.T) {
	const nap = 20 * time.Millisecond
	s := start(t, "-workload", "block", "-sleep", nap.String())
	began := time.Now()
	status, body := get(t, s.appURL+"block")
	if took := time.Since(began); status != http.StatusOK || body != blockBody || took < nap {
		t.Errorf("GET /block = %d %q after %v; want 200 %q after at least %v", status, body, took, blockBody, nap)
	}
	if status, _ := get(t, s.appURL); status != http.StatusNotFound {
		t.Errorf("GET / status = %d; want 404 (block is served at /block)", status)
	}
	if err := s.stop(); err != nil {
		t.Errorf("run after cancel = %v; want nil", err)
	}
}

// TestRunDrainsInFlight checks that a shutdown lets a sleeping request
// finish instead of cutting it off.
func TestRunDrainsInFlight(t *testing.T) {
	s := start(t, "-framework", "nethttp", "-workload", "sleep", "-sleep", "1s")
	type result struct {
		status int
		body   string
		err    error
	}
	wrote := make(chan struct{})
	got := make(chan result, 1)
	go func() {
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(wrote) }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, s.appURL, nil)
		if err != nil {
			got <- result{err: err}
			return
		}
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Do(req)
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{resp.StatusCode, string(b), err}
	}()
	select {
	case <-wrote:
	case r := <-got:
		t.Fatalf("request ended before it was written: %v", r.err)
	}
	// The request is on the wire; give the server a moment to accept the
	// connection so that the shutdown below has something to drain.
	time.Sleep(200 * time.Millisecond)
	if err := s.stop(); err != nil {
		t.Errorf("run after cancel = %v; want nil", err)
	}
	r := <-got
	if r.err != nil || r.status != http.StatusOK || r.body != sleepBody {
		t.Errorf("in-flight request got %d %q, %v; want 200 %q", r.status, r.body, r.err, sleepBody)
	}
}

func TestRunBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-framework", "koa"}, `-framework: unknown framework "koa"`},
		{[]string{"-framework", "fasthttp", "-workload", "sleep"}, "-framework fasthttp: serves hello and the TechEmpower workloads only, not sleep"},
		{[]string{"-framework", "protoactor", "-workload", "db"}, "-framework protoactor: serves the actor-echo workload only, not db"},
		{[]string{"-workload", "db", "-db-pool", "0"}, "-db-pool 0: want at least one"},
		{[]string{"-workload", "cpu"}, `-workload: unknown workload "cpu"`},
		{[]string{"-sleep", "-1s"}, "-sleep -1s: must be between 0 and 30s"},
		{[]string{"-sleep", "1m"}, "-sleep 1m0s: must be between 0 and 30s"},
		{[]string{"-sleep", "soon"}, "-sleep"},
		{[]string{"-workload", "block", "-framework", "gin"}, "-workload block: served by nethttp only, not gin"},
		{[]string{"-max-threads", "-1"}, "-max-threads -1: must not be negative"},
		{[]string{"-framework", "hollywood"}, "-framework hollywood: serves the actor-echo workload only, not hello"},
		{[]string{"-workload", "actor-echo", "-framework", "chi"}, "-workload actor-echo: served by protoactor and hollywood only, not chi"},
		{[]string{"-workload", "actor-echo", "-framework", "protoactor", "-pairs", "0"}, "-pairs 0: want at least one"},
		{[]string{"-bogus"}, "-bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-addr", "127.0.0.1:-5"}, "listen -addr"},
		{[]string{"-metrics-addr", "no-such-host.invalid:1"}, "listen -metrics-addr"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out strings.Builder
			err := run(context.Background(), tc.args, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run(%q) = %v; want an error containing %q", tc.args, err, tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("run(%q) wrote %q; want nothing on stdout", tc.args, out.String())
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), []string{"-h"}, &out); err != nil {
		t.Fatalf("run(-h) = %v; want nil", err)
	}
	for _, name := range []string{"-framework", "-workload", "-sleep", "-addr", "-metrics-addr"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("usage lacks %s:\n%s", name, out.String())
		}
	}
}

func TestParseConfigDefaults(t *testing.T) {
	cfg, err := parseConfig(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := config{framework: netHTTP, workload: hello, sleep: 100 * time.Millisecond, pairs: 64, dbPool: 16, addr: "127.0.0.1:0", metricsAddr: "127.0.0.1:0"}
	if cfg != want {
		t.Errorf("parseConfig(nil) = %+v; want %+v", cfg, want)
	}
	if _, err := parseConfig([]string{"-help"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseConfig(-help) = %v; want flag.ErrHelp", err)
	}
}

// FuzzParseConfig checks that any command line either parses into a config
// whose names round-trip, or fails with an error; it never panics.
func FuzzParseConfig(f *testing.F) {
	f.Add("-framework", "gin", "-sleep", "1s")
	f.Add("-workload", "sleep", "-framework", "echo")
	f.Add("-sleep", "-3ms", "x", "")
	f.Add("-workload", "actor-echo", "-framework", "hollywood")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		cfg, err := parseConfig([]string{a, b, c, d}, io.Discard)
		if err != nil {
			return
		}
		if fw, err := parseFramework(cfg.framework.String()); err != nil || fw != cfg.framework {
			t.Errorf("framework %v does not round-trip: %v, %v", cfg.framework, fw, err)
		}
		if wl, err := parseWorkload(cfg.workload.String()); err != nil || wl != cfg.workload {
			t.Errorf("workload %v does not round-trip: %v, %v", cfg.workload, wl, err)
		}
		if cfg.sleep < 0 || cfg.sleep > maxSleep {
			t.Errorf("sleep %v accepted; want 0..%v", cfg.sleep, maxSleep)
		}
	})
}
