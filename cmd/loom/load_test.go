package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/goleak"

	"github.com/loomrt/loom/load"
)

// execLoad runs `loom load args...` and returns what it wrote to stdout.
func execLoad(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newLoadCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestLoadCommand(t *testing.T) {
	defer goleak.VerifyNone(t)
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("X-Test") == "yes" {
			posts.Add(1)
		}
		w.Write([]byte("Hello World!"))
	}))
	defer srv.Close()
	dir := t.TempDir()

	out, err := execLoad(t, "-n", "40", "-c", "4", srv.URL)
	if err != nil || !strings.Contains(out, "40 requests in") || !strings.Contains(out, "Requests/sec:") {
		t.Errorf("text run: err %v, output:\n%s\nwant 40 requests in a wrk-like summary", err, out)
	}

	// A schedule of phases: 20 requests, a pause, 10 more.
	out, err = execLoad(t, "--phases", "100:200ms,0:100ms,50:200ms", srv.URL)
	if err != nil || !strings.Contains(out, "30 requests in") || !strings.Contains(out, "100 req/s for 200ms, then 0 req/s for 100ms, then 50 req/s for 200ms") {
		t.Errorf("phases run: err %v, output:\n%s\nwant 30 requests over the three phases", err, out)
	}

	out, err = execLoad(t, "-n", "30", "-m", "POST", "-H", "X-Test: yes", "--body", "{}", "--expect-body", "World", "-o", "json", srv.URL)
	if err != nil {
		t.Fatalf("json run: %v", err)
	}
	var a load.Result
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("json output does not decode: %v", err)
	}
	if a.Requests != 30 || posts.Load() != 30 || a.Histogram == "" {
		t.Errorf("json run: requests %d, posts seen %d, histogram %d bytes; want 30, 30, some", a.Requests, posts.Load(), len(a.Histogram))
	}
	aPath := filepath.Join(dir, "a.json")
	os.WriteFile(aPath, []byte(out), 0o644)

	targets := filepath.Join(dir, "mix.txt")
	os.WriteFile(targets, []byte("GET "+srv.URL+"/\nPOST "+srv.URL+"/ {}\n  X-Test: yes\n"), 0o644)
	// One connection: each connection takes the mix round-robin from its
	// own start, so with several, one that sends twice while another sends
	// nothing tips the split (a flake: 6 POSTs of 10).
	out, err = execLoad(t, "--targets", targets, "-n", "10", "-c", "1", "-o", "json")
	if err != nil {
		t.Fatalf("targets run: %v", err)
	}
	bPath := filepath.Join(dir, "b.json")
	os.WriteFile(bPath, []byte(out), 0o644)
	if posts.Load() != 35 {
		t.Errorf("posts seen %d after the mix; want 35", posts.Load())
	}

	out, err = execLoad(t, "merge", "-o", "json", aPath, bPath)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	var merged load.Result
	if err := json.Unmarshal([]byte(out), &merged); err != nil || merged.Requests != 40 {
		t.Errorf("merged: err %v, requests %d; want 40", err, merged.Requests)
	}
}

func TestLoadCommandErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	notResult := filepath.Join(t.TempDir(), "other.json")
	os.WriteFile(notResult, []byte(`{"name": "something else"}`), 0o644)
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{}, "no URL"},
		{[]string{"-o", "xml", "http://x/"}, "output"},
		{[]string{"--expect-status", "abc", "http://x/"}, "expect-status"},
		{[]string{"-H", "novalue", "http://x/"}, "header"},
		{[]string{"--rate", "10", "-c", "5", "http://x/"}, "--max-conns"},
		{[]string{"--body", "a", "--body-file", "f", "http://x/"}, "not both"},
		{[]string{"--pipeline", "0", "http://x/"}, "--pipeline 0"},
		{[]string{"--pipeline", "4", "--rate", "10", "http://x/"}, "--pipeline is for the closed loop"},
		{[]string{"--pipeline", "4", "http://x/", "http://y/"}, "one connection"},
		{[]string{"--targets", "/nonexistent/file", "-n", "1"}, "targets"},
		{[]string{"ftp://x/"}, "scheme"},
		{[]string{"--cacert", "/nonexistent/ca.pem", "https://x/"}, "--cacert"},
		{[]string{"--cacert", notResult, "https://x/"}, "no PEM certificate"},
		{[]string{"--cacert", notResult, "-k", "https://x/"}, "not both"},
		{[]string{"--targets", "t.txt", "-m", "POST"}, "drop -m"},
		{[]string{"-n", "2", "http://127.0.0.1:1/"}, "no request served"},
		{[]string{"merge", "/nonexistent.json"}, "read result"},
		{[]string{"merge", notResult}, "not a loom load result"},
	} {
		_, err := execLoad(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("loom load %v: %v; want an error mentioning %q", tc.args, err, tc.mention)
		}
	}
}

// TestLoadHTTPS drives a TLS server: trusting its CA by --cacert, or
// skipping verification by -k, every request is served; trusting the
// system's roots alone, none is, and the command says why.
func TestLoadHTTPS(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			http.Error(w, "not over TLS", http.StatusBadRequest)
			return
		}
		w.Write([]byte("Hello World!"))
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	for _, args := range [][]string{{"--cacert", ca}, {"-k"}} {
		out, err := execLoad(t, append(args, "-n", "20", "-c", "2", srv.URL)...)
		if err != nil || !strings.Contains(out, "20 requests in") {
			t.Errorf("loom load %v: err %v, output:\n%s\nwant 20 requests", args, err, out)
		}
	}
	out, err := execLoad(t, "-n", "4", "-c", "2", srv.URL)
	if err == nil || !strings.Contains(out+err.Error(), "tls handshake") {
		t.Errorf("loom load without trusting the server: err %v, output:\n%s\nwant an error and the handshake's failure", err, out)
	}
}

// parseLoad parses `loom load args...` into the Config it would run,
// without running it.
func parseLoad(args ...string) (load.Config, error) {
	cmd := &cobra.Command{Use: "load"}
	var f loadFlags
	bindLoadFlags(cmd, &f)
	if err := cmd.ParseFlags(args); err != nil {
		return load.Config{}, err
	}
	return loadConfig(f, cmd.Flags().Args(), cmd.Flags().Changed)
}

// TestLoadFlagEdges takes each flag exactly at its limit, which is accepted,
// and one past it, which must be an error naming the flag and the value
// rather than a silent other meaning (-d 0s once ran 10 s, --rate 0 a closed
// loop, -m ” a GET).
func TestLoadFlagEdges(t *testing.T) {
	const url = "http://127.0.0.1:1/"
	for _, tc := range []struct {
		args []string
		want []string // substrings of the error; none: accepted
	}{
		{[]string{"-c", "1", url}, nil},
		{[]string{"-c", "0", url}, []string{"-c/--connections", "0"}},
		{[]string{"-n", "0", url}, nil},
		{[]string{"-n", "-1", url}, []string{"-n/--requests", "-1"}},
		{[]string{"-d", "1ns", url}, nil},
		{[]string{"-d", "0s", url}, []string{"-d/--duration", "0s"}},
		{[]string{"-d", "-1ns", url}, []string{"-d/--duration", "-1ns"}},
		{[]string{"--rate", "1e-300", url}, nil},
		{[]string{"--rate", "0", url}, []string{"--rate", "0"}},
		{[]string{"--rate", "-1", url}, []string{"--rate", "-1"}},
		{[]string{"--rate", "NaN", url}, []string{"--rate", "NaN"}},
		{[]string{"--rate", "+Inf", url}, []string{"--rate", "+Inf"}},
		{[]string{"--rate", "1", "--max-conns", "1", url}, nil},
		{[]string{"--rate", "1", "--max-conns", "0", url}, []string{"--max-conns", "0"}},
		{[]string{"--max-conns", "5", url}, []string{"--max-conns", "open loop"}},
		{[]string{"--phases", "500:1s,0:1s", "--max-conns", "5", url}, nil},
		{[]string{"--phases", "", url}, []string{"--phases", `""`}},
		{[]string{"--phases", "500:0s", url}, []string{"--phases", "phase 1: duration 0s"}},
		{[]string{"--phases", "500:1s,fast:1s", url}, []string{"--phases", `phase 2 "fast:1s"`}},
		{[]string{"--phases", "500:1s", "--rate", "5", url}, []string{"--rate or --phases, not both"}},
		{[]string{"--phases", "500:1s", "-c", "5", url}, []string{"-c is for the closed loop"}},
		{[]string{"--timeout", "0s", url}, nil},
		{[]string{"--timeout", "-1ns", url}, []string{"--timeout", "-1ns"}},
		{[]string{"-m", "X", url}, nil},
		{[]string{"-m", "", url}, []string{"-m/--method", `""`}},
		{[]string{"--body-file", "", url}, []string{"--body-file", `""`}},
		{[]string{"--targets", "", url}, []string{"--targets", `""`}},
		{[]string{"--expect-body", "x", url}, nil},
		{[]string{"--expect-body", "", url}, []string{"--expect-body", `""`}},
		{[]string{"-o", "json", url}, nil},
		{[]string{"-o", "xml", url}, []string{"-o/--output", "xml"}},
	} {
		_, err := parseLoad(tc.args...)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("loom load %q: %v; want it accepted", tc.args, err)
		case tc.want != nil && err == nil:
			t.Errorf("loom load %q: accepted; want an error naming %q", tc.args, tc.want)
		case tc.want != nil:
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("loom load %q: %v; want it to name %q", tc.args, err, w)
				}
			}
		}
	}
}

func TestLoadFlagDefaults(t *testing.T) {
	const url = "http://127.0.0.1:1/"
	for _, tc := range []struct {
		args     []string
		duration time.Duration
		timeout  time.Duration
	}{
		{[]string{url}, 10 * time.Second, 30 * time.Second},
		{[]string{"-n", "5", url}, 0, 30 * time.Second},
		{[]string{"-d", "2s", "--timeout", "0", url}, 2 * time.Second, -1}, // the flag's 0 is the library's "none"
		{[]string{"--phases", "5:1s,10:2s", url}, 0, 30 * time.Second},     // the phases set the length, not -d's default
	} {
		cfg, err := parseLoad(tc.args...)
		if err != nil {
			t.Fatalf("loom load %q: %v", tc.args, err)
		}
		if cfg.Duration != tc.duration || cfg.Timeout != tc.timeout {
			t.Errorf("loom load %q: duration %s, timeout %s; want %s, %s", tc.args, cfg.Duration, cfg.Timeout, tc.duration, tc.timeout)
		}
	}
}

// TestLoadInterruptedIsAnError: a run stopped by a signal (its context
// ended) still prints what it measured, but exits non-zero, as `loom bench`
// does, so that a script cannot take it for a finished run.
func TestLoadInterruptedIsAnError(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) == 20 {
			cancel() // the signal, after some requests were served
		}
		w.Write([]byte("Hello World!"))
	}))
	defer srv.Close()

	cmd := newLoadCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs([]string{"-c", "2", "-d", "1h", srv.URL})
	err := cmd.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "interrupted after") {
		t.Errorf("interrupted run: err %v; want an error saying it was interrupted", err)
	}
	if !strings.Contains(out.String(), "Requests/sec:") {
		t.Errorf("interrupted run printed:\n%s\nwant the partial result", out.String())
	}
}
