package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/loomrt/loom/load"
)

// loadFlags are the options of `loom load`.
type loadFlags struct {
	connections  int
	requests     int64
	duration     time.Duration
	rate         float64
	phases       string
	maxConns     int
	pipeline     int
	timeout      time.Duration
	method       string
	headers      []string
	body         string
	bodyFile     string
	targets      string
	expectStatus string
	expectBody   string
	output       string
	caCert       string
	insecure     bool
}

// newLoadCmd builds `loom load` and its `merge` subcommand.
func newLoadCmd() *cobra.Command {
	var f loadFlags
	cmd := &cobra.Command{
		Use:   "load [flags] URL...",
		Short: "Load an HTTP server (closed loop like wrk, or open loop at a fixed rate)",
		Long: "Send HTTP/1.1 requests over keep-alive connections (TLS for https:// URLs) and report throughput, latency\n" +
			"percentiles (HDR histogram), status codes and errors by kind.\n\n" +
			"Closed loop (default): -c connections, each sending its next request when the previous\n" +
			"response arrives. Open loop (--rate): requests start on a fixed schedule whatever the\n" +
			"responses, and latency counts from when each was due (coordinated omission corrected).\n" +
			"Several URLs, or --targets FILE, make a round-robin mix. See docs/load.md.",
		Example: "  loom load -c 64 -d 10s http://127.0.0.1:8080/\n" +
			"  loom load --rate 2000 -d 30s --expect-status 2xx http://127.0.0.1:8080/\n" +
			"  loom load --phases 500:10s,2000:10s,500:10s http://127.0.0.1:8080/\n" +
			"  loom load -n 10000 -c 10000 --timeout 60s http://127.0.0.1:8080/\n" +
			"  loom load -m POST -H 'Content-Type: application/json' --body '{\"title\":\"x\"}' http://127.0.0.1:8080/todos\n" +
			"  loom load --cacert ca.pem -c 64 -d 10s https://127.0.0.1:8443/\n" +
			"  loom load --targets mix.txt -d 10s -o json > a.json\n" +
			"  loom load merge a.json b.json",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLoad(cmd.Context(), cmd, f, args)
		},
	}
	bindLoadFlags(cmd, &f)
	cmd.AddCommand(newLoadMergeCmd())
	return cmd
}

// bindLoadFlags defines the flags of `loom load` on cmd, stored in f.
func bindLoadFlags(cmd *cobra.Command, f *loadFlags) {
	fl := cmd.Flags()
	fl.IntVarP(&f.connections, "connections", "c", 10, "closed loop: connections, each with one request in flight")
	fl.Int64VarP(&f.requests, "requests", "n", 0, "stop after exactly this many requests (0: no count limit)")
	fl.DurationVarP(&f.duration, "duration", "d", 0, "stop after this long (default 10s when -n is not given)")
	fl.Float64Var(&f.rate, "rate", 0, "open loop: requests per second on a fixed schedule")
	fl.StringVar(&f.phases, "phases", "", "open loop whose rate changes: RATE:DURATION,… such as 500:10s,2000:10s (lasts their total)")
	fl.IntVar(&f.maxConns, "max-conns", 10000, "open loop: most connections to open")
	fl.IntVar(&f.pipeline, "pipeline", 1, "closed loop: requests each connection sends at once (HTTP/1.1 pipelining)")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "per request and per connection attempt (0: none); open loop: from when the request was due")
	fl.StringVarP(&f.method, "method", "m", "GET", "request method")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, `request header "Name: value" (repeatable)`)
	fl.StringVar(&f.body, "body", "", "request body")
	fl.StringVar(&f.bodyFile, "body-file", "", "read the request body from this file")
	fl.StringVar(&f.targets, "targets", "", "read the requests from this file (see docs/load.md)")
	fl.StringVar(&f.expectStatus, "expect-status", "2xx", `status codes that count as served, e.g. "200", "2xx", "200,201", "200-399"`)
	fl.StringVar(&f.expectBody, "expect-body", "", "substring the body must hold to count as served")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	fl.StringVar(&f.caCert, "cacert", "", "https://: trust the CA certificates in this PEM file (default: the system's roots)")
	fl.BoolVarP(&f.insecure, "insecure", "k", false, "https://: skip certificate verification (a loopback test server's self-signed certificate)")
}

// loadConfig turns flags and URLs into a load.Config.
func loadConfig(f loadFlags, urls []string, changed func(string) bool) (load.Config, error) {
	cfg := load.Config{
		Connections: f.connections,
		Requests:    f.requests,
		Duration:    f.duration,
		Rate:        f.rate,
		MaxConns:    f.maxConns,
		Pipeline:    f.pipeline,
		Timeout:     f.timeout,
	}
	if f.timeout == 0 {
		cfg.Timeout = -1 // the flag's 0 means none; the library's means its default
	}
	if err := checkLoadFlags(f, changed); err != nil {
		return cfg, err
	}
	var err error
	if f.phases != "" {
		phases, err := load.ParsePhases(f.phases)
		if err != nil {
			return cfg, fmt.Errorf("--phases: %w", err)
		}
		cfg.Phases = phases
	}
	if cfg.TLS, err = loadTLS(f); err != nil {
		return cfg, err
	}
	if cfg.Requests == 0 && cfg.Duration == 0 && len(cfg.Phases) == 0 {
		cfg.Duration = 10 * time.Second
	}
	expect, err := load.ParseStatus(f.expectStatus)
	if err != nil {
		return cfg, fmt.Errorf("--expect-status: %w", err)
	}
	cfg.ExpectStatus = expect
	if f.expectBody != "" {
		cfg.ExpectBody = []byte(f.expectBody)
	}

	header := http.Header{}
	for _, h := range f.headers {
		name, value, found := strings.Cut(h, ":")
		if !found || strings.TrimSpace(name) == "" {
			return cfg, fmt.Errorf("header %q: want \"Name: value\"", h)
		}
		header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	var body []byte
	switch {
	case f.bodyFile != "":
		if body, err = os.ReadFile(f.bodyFile); err != nil {
			return cfg, fmt.Errorf("body file: %w", err)
		}
	case f.body != "":
		body = []byte(f.body)
	}

	if f.targets != "" {
		if len(urls) > 0 {
			return cfg, errors.New("give URLs or --targets, not both")
		}
		if changed("method") || body != nil {
			return cfg, errors.New("--targets sets each request's method and body: drop -m, --body and --body-file")
		}
		file, err := os.Open(f.targets)
		if err != nil {
			return cfg, fmt.Errorf("targets: %w", err)
		}
		defer file.Close()
		if cfg.Targets, err = load.ParseTargets(file, filepath.Dir(f.targets)); err != nil {
			return cfg, err
		}
		for i := range cfg.Targets { // -H applies to every target; the file's own headers win
			t := &cfg.Targets[i]
			for name, values := range header {
				if t.Header == nil {
					t.Header = http.Header{}
				}
				if t.Header.Get(name) == "" {
					t.Header[name] = values
				}
			}
		}
		return cfg, nil
	}
	if len(urls) == 0 {
		return cfg, errors.New("no URL: give one or more, or --targets FILE")
	}
	for _, u := range urls {
		cfg.Targets = append(cfg.Targets, load.Target{Method: f.method, URL: u, Header: header, Body: body})
	}
	return cfg, nil
}

// loadTLS returns the TLS configuration --cacert and --insecure ask for,
// nil for neither (the system's roots).
func loadTLS(f loadFlags) (*tls.Config, error) {
	switch {
	case f.caCert != "" && f.insecure:
		return nil, errors.New("give --cacert or --insecure, not both")
	case f.insecure:
		return &tls.Config{InsecureSkipVerify: true}, nil
	case f.caCert != "":
		pem, err := os.ReadFile(f.caCert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in it", f.caCert)
		}
		return &tls.Config{RootCAs: pool}, nil
	}
	return nil, nil
}

// checkLoadFlags refuses values that would otherwise mean something other
// than what was typed: -d 0s (the 10 s default), --rate 0 (a closed loop),
// an empty -m (GET), and the like. Each error names the flag and its value.
func checkLoadFlags(f loadFlags, changed func(string) bool) error {
	switch {
	case f.output != "text" && f.output != "json":
		return fmt.Errorf("-o/--output %q: want text or json", f.output)
	case f.connections < 1:
		return fmt.Errorf("-c/--connections %d: want at least 1", f.connections)
	case f.requests < 0:
		return fmt.Errorf("-n/--requests %d: want at least 1, or 0 for no count limit", f.requests)
	case changed("duration") && f.duration <= 0:
		return fmt.Errorf("-d/--duration %s: want more than 0 (leave -d out to stop after -n requests)", f.duration)
	case changed("rate") && !(f.rate > 0 && !math.IsInf(f.rate, 1)):
		return fmt.Errorf("--rate %g: want a finite number of requests per second above 0 (leave --rate out for a closed loop)", f.rate)
	case f.maxConns < 1:
		return fmt.Errorf("--max-conns %d: want at least 1", f.maxConns)
	case f.pipeline < 1:
		return fmt.Errorf("--pipeline %d: want at least 1 (1: no pipelining)", f.pipeline)
	case f.pipeline > 1 && (f.rate > 0 || f.phases != ""):
		return errors.New("--pipeline is for the closed loop; an open loop sends each request when it is due")
	case f.timeout < 0:
		return fmt.Errorf("--timeout %s: want 0 (none) or more", f.timeout)
	case f.method == "":
		return errors.New(`-m/--method "": want a method such as GET or POST`)
	case f.rate > 0 && f.phases != "":
		return errors.New("give --rate or --phases, not both (each phase has its rate)")
	case (f.rate > 0 || f.phases != "") && changed("connections"):
		return errors.New("-c is for the closed loop; with --rate or --phases use --max-conns")
	case f.rate == 0 && f.phases == "" && changed("max-conns"):
		return errors.New("--max-conns is for the open loop (--rate, --phases); without it use -c")
	case f.body != "" && f.bodyFile != "":
		return errors.New("give --body or --body-file, not both")
	}
	// An empty value given explicitly is a mistake (an unset shell
	// variable, most likely), not a request for the default.
	for _, fl := range []struct{ name, value string }{
		{"body-file", f.bodyFile}, {"targets", f.targets}, {"expect-body", f.expectBody}, {"phases", f.phases},
	} {
		if changed(fl.name) && fl.value == "" {
			return fmt.Errorf(`--%s "": want a value, or leave the flag out`, fl.name)
		}
	}
	return nil
}

func runLoad(ctx context.Context, cmd *cobra.Command, f loadFlags, urls []string) error {
	cfg, err := loadConfig(f, urls, cmd.Flags().Changed)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	var bar *progressBar
	if file, ok := stderr.(*os.File); ok && term.IsTerminal(int(file.Fd())) {
		bar = &progressBar{w: stderr}
		cfg.Progress = bar.draw
	}
	res, err := load.Run(ctx, cfg)
	if bar != nil {
		bar.clear() // Run has returned: no more calls to draw
	}
	if err != nil {
		return err
	}
	if err := writeResult(cmd.OutOrStdout(), res, f.output); err != nil {
		return err
	}
	if err := servedSome(res); err != nil {
		return err
	}
	return interrupted(ctx, res)
}

// interrupted makes a run cut short by a signal an error (a non-zero exit,
// as for `loom bench`), after its partial result has been written, so that a
// script does not take a stopped run for a finished one.
func interrupted(ctx context.Context, res *load.Result) error {
	if ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("interrupted after %s: the result above covers only the part that ran", res.Elapsed.Round(time.Millisecond))
}

// servedSome makes a run in which every request failed an error (a non-zero
// exit), so that a script does not mistake it for a fast result.
func servedSome(res *load.Result) error {
	if res.Requests == 0 && res.Errors.Total() > 0 {
		return fmt.Errorf("no request served: %d failed", res.Errors.Total())
	}
	return nil
}

func writeResult(w io.Writer, res *load.Result, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.WriteText(w)
}

// newLoadMergeCmd builds `loom load merge`.
func newLoadMergeCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "merge a.json b.json...",
		Short:   "Merge JSON results of runs on several machines into one report",
		Example: "  loom load merge host1.json host2.json\n  loom load merge -o json host*.json > all.json",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("output %q: want text or json", output)
			}
			merged, err := mergeFiles(args)
			if err != nil {
				return err
			}
			return writeResult(cmd.OutOrStdout(), merged, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func mergeFiles(paths []string) (*load.Result, error) {
	var merged *load.Result
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read result: %w", err)
		}
		var r load.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("result %s: %w", p, err)
		}
		if r.Mode != load.Closed && r.Mode != load.Open {
			return nil, fmt.Errorf("result %s: not a loom load result (mode %q)", p, r.Mode)
		}
		if merged == nil {
			merged = &r
			continue
		}
		if err := merged.Merge(&r); err != nil {
			return nil, fmt.Errorf("result %s: %w", p, err)
		}
	}
	return merged, nil
}

// progressBar draws a one-line progress bar; it is only used when stderr is
// a terminal. draw is called from one goroutine at a time (load.Config.Progress).
type progressBar struct {
	w io.Writer
}

const progressWidth = 30

func (b *progressBar) draw(p load.Progress) {
	frac := -1.0
	switch {
	case p.Total > 0:
		frac = float64(p.Done) / float64(p.Total)
	case p.Duration > 0:
		frac = p.Elapsed.Seconds() / p.Duration.Seconds()
	}
	bar := strings.Repeat("?", progressWidth)
	if frac >= 0 {
		frac = min(frac, 1)
		filled := int(frac * progressWidth)
		bar = strings.Repeat("=", filled) + strings.Repeat(" ", progressWidth-filled)
	}
	fmt.Fprintf(b.w, "\r\033[K[%s] %5.1fs  %d requests  %d errors  %d connections",
		bar, p.Elapsed.Seconds(), p.Done, p.Errors, p.Conns)
}

func (b *progressBar) clear() {
	fmt.Fprint(b.w, "\r\033[K")
}
