package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/internal/harness/runtimestats"
	"github.com/loomrt/loom/web"
	_ "github.com/loomrt/loom/web/nbio" // the nbio engine, for models "nbio/…"
)

// ServeConfig describes a server under test: what `loom serve-scenario`
// runs in the child process.
type ServeConfig struct {
	// Scenario names the scenario whose routes to serve.
	Scenario string
	// Model is the model the routes run on: an executor spec, after an
	// engine and a slash if not std ("nbio/pool:16"). Empty means
	// loom.FromEnv("HTTP", "") (LOOM_EXECUTOR_HTTP, else LOOM_EXECUTOR, else
	// virtual) on the engine LOOM_ENGINE names. A scenario with models of
	// its own (Scenario.ServeModel) reads one of them, empty meaning its
	// plan's first, and its routes run on virtual.
	Model string
	// Quick selects the scenario's quick plan.
	Quick bool
	// Addr and MetricsAddr are where to listen for the workload and for
	// runtimestats; "127.0.0.1:0" picks a free port.
	Addr, MetricsAddr string
	// Dir is an empty directory for the scenario's files; empty means a
	// temporary directory removed on return.
	Dir string
	// Scenarios is the catalogue to look the name up in; nil means
	// Catalogue().
	Scenarios []*Scenario
}

// NoThreadWatchEnv, set to 1 in a server's environment, serves the scenario
// without web's thread watch (web.WithoutThreadWatch): the control against
// which the watch's cost is measured.
const NoThreadWatchEnv = "LOOM_BENCH_NO_THREAD_WATCH"

// listeningPrefix starts the line a server under test prints on stdout once
// it accepts connections: "listening http=127.0.0.1:41234 metrics=127.0.0.1:41235".
const listeningPrefix = "listening "

// Serve runs the server under test until ctx ends, then shuts it down. Once
// both listeners are open it prints the listening line on out, which is how
// the runner learns the ports. It blocks; it returns an error when the
// scenario or model is unknown, a port is taken, or the shutdown is not
// clean.
func Serve(ctx context.Context, cfg ServeConfig, out io.Writer) (err error) {
	scenarios := cfg.Scenarios
	if scenarios == nil {
		scenarios = Catalogue()
	}
	sc, err := Lookup(scenarios, cfg.Scenario)
	if err != nil {
		return err
	}
	plan := sc.plan(cfg.Quick)
	if plan.MaxThreads > 0 {
		debug.SetMaxThreads(plan.MaxThreads)
	}
	var exec loom.Executor
	var appOpts []web.AppOption
	if os.Getenv(NoThreadWatchEnv) == "1" {
		appOpts = append(appOpts, web.WithoutThreadWatch())
	}
	engine := ""
	serve := sc.Serve
	switch {
	case sc.ServeModel != nil:
		// The model is the scenario's own; the routes only wait for it.
		model := cfg.Model
		if model == "" {
			model = plan.Models[0]
		}
		if serve, err = sc.ServeModel(model); err != nil {
			return err
		}
		exec = loom.Virtual()
	case cfg.Model == "":
		exec, err = loom.FromEnv("HTTP", "")
	default:
		if err := checkModel(cfg.Model); err != nil {
			return err
		}
		var spec string
		engine, spec = splitModel(cfg.Model)
		if e, _ := web.LookupEngine(engine); e != nil {
			appOpts = append(appOpts, web.WithEngine(e))
		}
		exec, err = loom.Parse(spec)
	}
	if err != nil {
		return err
	}
	defer func() {
		// In-flight handlers have had the app's grace; what is left is
		// cancelled rather than waited for.
		stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		if serr := exec.Shutdown(stop); serr != nil {
			err = errors.Join(err, fmt.Errorf("shut down executor: %w", serr))
		}
	}()

	dir := cfg.Dir
	if dir == "" {
		dir, err = os.MkdirTemp("", "loom-serve-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}

	if modelTLS(cfg.Model) {
		certFile, keyFile, err := writeCertificate(dir)
		if err != nil {
			return err
		}
		appOpts = append(appOpts, web.WithTLS(certFile, keyFile))
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// A short grace: the runner stops a server once its load has ended, and
	// requests still in flight then are ones nobody waits for.
	app, err := web.New(append(appOpts, web.WithExecutor(exec), web.WithLogger(logger), web.WithShutdownGrace(500*time.Millisecond),
		web.WithServerConfig(func(s *http.Server) {
			// Thousands of connections may sit in the listen backlog; the
			// default 10 s header timeout would cut them off.
			s.ReadHeaderTimeout = time.Minute
		}))...)
	if err != nil {
		return err
	}
	if engine != "" && app.EngineName() != engine {
		// std has no Engine value: LOOM_ENGINE overrode the model.
		return errors.Join(fmt.Errorf("model %q: %s=%q serves it on %s", cfg.Model, web.EngineEnv, os.Getenv(web.EngineEnv), app.EngineName()),
			app.Shutdown(context.WithoutCancel(ctx)))
	}
	cleanup, err := serve(ctx, app, plan, dir)
	if err != nil {
		return errors.Join(err, app.Shutdown(context.WithoutCancel(ctx)))
	}
	if cleanup != nil {
		defer func() { err = errors.Join(err, cleanup()) }()
	}

	addr, metricsAddr := or(cfg.Addr, "127.0.0.1:0"), or(cfg.MetricsAddr, "127.0.0.1:0")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errors.Join(fmt.Errorf("listen: %w", err), app.Shutdown(context.WithoutCancel(ctx)))
	}
	mln, err := net.Listen("tcp", metricsAddr)
	if err != nil {
		return errors.Join(fmt.Errorf("listen for metrics: %w", err), ln.Close(), app.Shutdown(context.WithoutCancel(ctx)))
	}
	// The executor's figures over time: the adaptive limit and what it
	// admits, queues and turns away.
	executor := func(s *runtimestats.Snapshot) {
		st := exec.Stats()
		s.ExecutorLimit = uint64(max(st.Limit, 0))
		s.ExecutorRunning, s.ExecutorQueued = uint64(max(st.Running, 0)), uint64(max(st.Queued, 0))
		s.ExecutorRejected, s.ExecutorExpired = st.Rejected, st.Expired
	}
	metrics := &http.Server{Handler: runtimestats.HandlerWith(executor), ReadHeaderTimeout: 10 * time.Second}
	metricsDone := make(chan error, 1)
	go func() { metricsDone <- metrics.Serve(mln) }()
	defer func() {
		err = errors.Join(err, metrics.Close())
		if merr := <-metricsDone; !errors.Is(merr, http.ErrServerClosed) {
			err = errors.Join(err, fmt.Errorf("serve metrics: %w", merr))
		}
	}()

	if _, err := fmt.Fprintf(out, "%shttp=%s metrics=%s\n", listeningPrefix, ln.Addr(), mln.Addr()); err != nil {
		return errors.Join(err, ln.Close(), app.Shutdown(context.WithoutCancel(ctx)))
	}
	return app.Serve(ctx, ln)
}

// parseListening reads the addresses from a listening line; ok is false
// for any other line.
func parseListening(line string) (httpAddr, metricsAddr string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(line), listeningPrefix)
	if !found {
		return "", "", false
	}
	for _, field := range strings.Fields(rest) {
		key, value, _ := strings.Cut(field, "=")
		switch key {
		case "http":
			httpAddr = value
		case "metrics":
			metricsAddr = value
		}
	}
	return httpAddr, metricsAddr, httpAddr != ""
}

func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
