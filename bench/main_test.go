package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/loomrt/loom/load"
	"github.com/loomrt/loom/web"
)

// serveEnv, set in a child's environment, makes the test binary a server
// under test (see serveForTest) instead of running tests: the runner's
// child processes are real processes, started from this binary.
const serveEnv = "LOOM_BENCH_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		os.Exit(serveForTest(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

// serveForTest parses the serve-scenario command line the runner builds
// and serves the test catalogue, as `loom serve-scenario` does.
func serveForTest(args []string) int {
	if len(args) < 2 || args[0] != "serve-scenario" {
		fmt.Fprintln(os.Stderr, "test server: want serve-scenario NAME, got", args)
		return 2
	}
	cfg := ServeConfig{Scenario: args[1], Scenarios: testCatalogue()}
	fs := flag.NewFlagSet("serve-scenario", flag.ContinueOnError)
	fs.StringVar(&cfg.Model, "model", "", "")
	fs.StringVar(&cfg.Addr, "addr", "", "")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "")
	fs.StringVar(&cfg.Dir, "dir", "", "")
	fs.BoolVar(&cfg.Quick, "quick", false, "")
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := Serve(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	return 0
}

// testCatalogue holds tiny scenarios that run in a fraction of a second.
func testCatalogue() []*Scenario {
	tiny := Plan{Models: []string{"virtual", "pool:2"}, Connections: 4, Duration: 300 * time.Millisecond, Timeout: 5 * time.Second}
	one := Plan{Models: []string{"virtual"}, Connections: 2, Duration: 300 * time.Millisecond, Timeout: 5 * time.Second}
	long := one // the server ends the run at the first request: time for it to come, on a busy machine
	long.Duration = 10 * time.Second
	slow := one
	slow.Duration, slow.Timeout = time.Second, 50*time.Millisecond
	idle := one
	idle.Idle, idle.Models = 20, []string{"virtual", "nbio/virtual"}
	withUnloaded := one
	withUnloaded.UnloadedRate, withUnloaded.UnloadedDuration = 50, 300*time.Millisecond
	warm := one
	warm.Warmup = 300 * time.Millisecond
	noLimit := func(Plan) Limit { return Limit{Formula: "none"} }
	marker := func(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
		app.Get("/", func(w http.ResponseWriter, _ *http.Request) error {
			_, err := io.WriteString(w, "test marker")
			return err
		})
		return nil, nil
	}
	return append([]*Scenario{
		{
			Name: "test-ok", Workload: "GET / answers with a marker", Full: tiny, Quick: tiny,
			Limit: noLimit, Targets: get("/"), ExpectBody: "marker", Serve: marker,
		},
		{
			Name: "test-unloaded", Workload: "GET / answers with a marker, after an unloaded phase", Full: withUnloaded, Quick: withUnloaded,
			Limit: noLimit, Targets: get("/"), ExpectBody: "marker", Serve: marker,
		},
		{
			Name: "test-404", Workload: "GET /missing, a route that does not exist", Full: tiny, Quick: tiny,
			Limit: noLimit, Targets: get("/missing"), ExpectBody: "marker", Serve: marker,
		},
		{
			Name: "test-crash", Workload: "GET / kills the server", Full: tiny, Quick: tiny,
			Limit: noLimit, Targets: get("/"), ExpectBody: "marker",
			Serve: func(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
				app.Get("/", func(w http.ResponseWriter, _ *http.Request) error {
					go func() { panic("test crash: the server died") }() // not recovered: the process dies
					time.Sleep(time.Second)
					return nil
				})
				return nil, nil
			},
		},
		// One fixture for each way runOne detects a failed server, each
		// alone, so that one way cannot hide another that is broken.
		{
			Name: "test-exit", Workload: "GET / exits without a word", Full: long, Quick: long,
			Limit: noLimit, Targets: get("/"), ExpectBody: "marker",
			Serve: func(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
				app.Get("/", func(w http.ResponseWriter, _ *http.Request) error {
					os.Exit(3)
					return nil
				})
				return nil, nil
			},
		},
		{
			Name: "test-fatal", Workload: "a fatal error line at the start, then GET / served as usual", Full: one, Quick: one,
			Limit: noLimit, Targets: get("/"), ExpectBody: "marker",
			Serve: func(ctx context.Context, app *web.App, p Plan, dir string) (func() error, error) {
				fmt.Fprintln(os.Stderr, "fatal error: test: dying slowly")
				return marker(ctx, app, p, dir)
			},
		},
		{
			Name: "test-timeout", Workload: "GET / never answers", Full: slow, Quick: slow,
			Limit: noLimit, Targets: get("/"), ExpectBody: "marker",
			Serve: func(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
				app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
					<-r.Context().Done() // the client gives up after the plan's Timeout
					return nil
				})
				return nil, nil
			},
		},
		{
			Name: "test-idle", Workload: "GET / answers with a marker, beside 20 idle connections",
			Full: idle, Quick: idle, Limit: noLimit, Targets: get("/"), ExpectBody: "marker", Serve: marker,
		},
		{
			Name: "test-cold", Workload: "GET / fails its first 5 requests with 503, then answers with a marker: a server that needs its warm-up",
			Full: warm, Quick: warm, Limit: noLimit, Targets: get("/"), ExpectBody: "marker",
			Serve: func(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
				var served atomic.Int64
				app.Get("/", func(w http.ResponseWriter, _ *http.Request) error {
					if served.Add(1) <= 5 {
						w.WriteHeader(http.StatusServiceUnavailable)
						return nil
					}
					_, err := io.WriteString(w, "test marker")
					return err
				})
				return nil, nil
			},
		},
		{
			Name: "test-engine", Workload: "GET / names the engine serving it; the marker is nbio's name", Full: one, Quick: one,
			Limit: noLimit, Targets: get("/"), ExpectBody: "engine=nbio",
			Serve: func(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
				app.Get("/", func(w http.ResponseWriter, _ *http.Request) error {
					_, err := io.WriteString(w, "engine="+app.EngineName())
					return err
				})
				return nil, nil
			},
		},
		{
			Name: "test-tls", Workload: "GET / says whether it came over TLS; the marker is TLS's", Full: one, Quick: one,
			Limit: noLimit, Targets: get("/"), ExpectBody: "tls=true",
			Serve: func(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
				app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
					_, err := fmt.Fprintf(w, "tls=%v", r.TLS != nil)
					return err
				})
				return nil, nil
			},
		},
		{
			Name: "test-own-models", Workload: "GET / names the model of its own vocabulary it serves, and LOOM_EXECUTOR; the marker is beta's",
			Full: one, Quick: one, Limit: noLimit, Targets: get("/"), ExpectBody: "model=beta executor=pool:3;",
			ServeModel: func(model string) (ServeFunc, error) {
				if model != "alpha" && model != "beta" && model != "virtual" {
					return nil, fmt.Errorf("model %q: want alpha, beta or virtual", model)
				}
				return func(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
					app.Get("/", func(w http.ResponseWriter, _ *http.Request) error {
						_, err := fmt.Fprintf(w, "model=%s executor=%s;", model, os.Getenv("LOOM_EXECUTOR"))
						return err
					})
					return nil, nil
				}, nil
			},
		},
		{
			Name: "test-sleep", Workload: "GET / sleeps 50 ms", Quick: Plan{
				// 1 s: a busy machine can take 300 ms to answer the first.
				Models: []string{"virtual", "pool:2"}, Connections: 4, Duration: time.Second,
				Service: 50 * time.Millisecond,
			},
			Limit: waitLimit, Targets: get("/"), ExpectBody: "Hello World!", Serve: serveSleep("/"),
		},
		{
			Name: "test-step", Workload: "GET / sleeps 20 ms; the offered rate steps up and back down", Quick: Plan{
				Models: []string{"adaptive", "virtual"},
				Phases: []load.Phase{
					{Rate: 40, Duration: 400 * time.Millisecond},
					{Rate: 120, Duration: 400 * time.Millisecond},
					{Rate: 40, Duration: 400 * time.Millisecond},
				},
				Duration: 1200 * time.Millisecond, Timeout: 5 * time.Second, Service: 20 * time.Millisecond,
			},
			Limit: noLimit, Targets: get("/"), ExpectBody: "Hello World!", Serve: serveSleep("/"),
		},
	}, dbTestScenarios()...)
}

// runTest runs the named test scenarios in child processes of this binary.
func runTest(t *testing.T, names ...string) *Report {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report, err := Run(context.Background(), Options{
		Scenarios:  names,
		Quick:      true,
		Executable: exe,
		Env:        []string{serveEnv + "=1"},
		Catalogue:  testCatalogue(),
		Command:    "go test",
		Rounds:     1,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return report
}
