package metrics_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
	"github.com/loomrt/loom/web/metrics"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func text(s string) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// TestWebDoesNotLinkPrometheus checks that web, and so a program importing
// web and not this package, does not link Prometheus or WebSockets
// (examples/hello's test checks a whole program).
func TestWebDoesNotLinkPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range []string{"github.com/loomrt/loom/web"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.Contains(dep, "prometheus") || strings.Contains(dep, "coder/websocket") {
				t.Errorf("%s links %s; want it only in programs that import web/metrics or web/websocket", pkg, dep)
			}
		}
	}
}

func TestMetricsEndpoint(t *testing.T) {
	app := webtest.NewApp(t)
	metrics.Mount(app, "/metrics")
	app.Get("/hello", text("hi"))
	for range 3 {
		webtest.Do(t, app, "GET", "/hello", "")
	}
	webtest.Do(t, app, "GET", "/missing", "")
	rec := webtest.Do(t, app, "GET", "/metrics", "")
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: got %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`loom_http_requests_total{method="GET",route="GET /hello",status="200"} 3`,
		`loom_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`loom_http_request_duration_seconds_count{route="GET /hello"} 3`,
		`loom_executor_submitted_total{executor=`,
		`kind="virtual"`,
		`loom_executor_rejected_total`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestMetricsPathMustBeAPath(t *testing.T) {
	defer func() {
		if v := fmt.Sprint(recover()); !strings.HasPrefix(v, "web: ") || !strings.Contains(v, `"metrics"`) {
			t.Errorf("Mount(app, \"metrics\"): got panic %q; want a web: panic naming the path", v)
		}
	}()
	metrics.Mount(webtest.NewApp(t), "metrics")
}

// TestMetricsCountPanics checks that recovered panics of handlers and of
// decorators reach the counter through the Observer.
func TestMetricsCountPanics(t *testing.T) {
	boom := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("decorator boom") })
	}
	app := webtest.NewApp(t)
	metrics.Mount(app, "/metrics")
	app.Get("/handler", func(http.ResponseWriter, *http.Request) error { panic("handler boom") })
	app.Get("/decorator", text("unreachable"), web.WithDecorators(boom))
	for _, path := range []string{"/handler", "/decorator"} {
		if rec := webtest.Do(t, app, "GET", path, ""); rec.Code != 500 {
			t.Errorf("GET %s: got %d; want 500", path, rec.Code)
		}
	}
	body := webtest.Do(t, app, "GET", "/metrics", "").Body.String()
	if !strings.Contains(body, "loom_http_panics_total 2") {
		t.Errorf("metrics lack loom_http_panics_total 2:\n%s", body)
	}
}

func TestMetricsWithExecutorsOfOneName(t *testing.T) {
	// Two executors reporting the same name and kind would give Prometheus
	// two series with one label set, and it refuses the whole scrape.
	app := webtest.NewApp(t)
	metrics.Mount(app, "/metrics")
	for _, route := range []string{"/a", "/b"} {
		e := loom.Pool(1, loom.WithName("reports"))
		defer e.Shutdown(context.Background())
		app.Get(route, text("hi"), web.WithExecutor(e))
	}
	rec := webtest.Do(t, app, "GET", "/metrics", "")
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: got %d; want 200\n%s", rec.Code, rec.Body.String())
	}
	body := rec.Body.String()
	for _, want := range []string{`executor="reports",kind="pool"`, `executor="reports-2",kind="pool"`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if err := app.Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
}

// TestMetricsShowTheThreadWatch trips a thread watch (a high-water mark of
// one thread, a low-water mark no count falls below) and checks that the
// scrape shows it tripped, with its marks, and the request it refused
// counted against the route's executor.
func TestMetricsShowTheThreadWatch(t *testing.T) {
	app := webtest.NewApp(t)
	m := metrics.New(app)
	app.Observe(m)
	guarded := loom.Virtual(loom.WithName("guarded"))
	defer guarded.Shutdown(context.Background())
	app.Get("/hello", text("hi"), web.WithExecutor(guarded))
	scrape := func() string {
		t.Helper()
		rec := webtest.Do(t, m.Handler(), "GET", "/metrics", "")
		if rec.Code != 200 {
			t.Fatalf("scrape: got %d\n%s", rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	before := loom.WatchedThreads().Episodes

	w := &loom.ThreadWatch{High: 1e-9, Low: 1e-10, Logger: slog.New(slog.DiscardHandler)}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if rec := webtest.Do(t, app, "GET", "/hello", ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("GET /hello while the watch is tripped: got %d; want 503", rec.Code)
	}
	s := w.Stats()
	body := scrape()
	for _, want := range []string{
		"loom_thread_watch_running 1",
		"loom_thread_watch_tripped 1",
		fmt.Sprintf("loom_thread_watch_limit_threads %d", s.Limit),
		"loom_thread_watch_high_threads 0", // a fraction of a thread
		fmt.Sprintf("loom_thread_watch_episodes_total %d", before+1),
		`loom_executor_rejected_by_thread_watch_total{executor="guarded",kind="virtual"} 1`,
		`loom_executor_rejected_total{executor="guarded",kind="virtual"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics while tripped lack %q", want)
		}
	}
	for _, name := range []string{"loom_thread_watch_threads", "loom_thread_watch_threads_in_use", "loom_thread_watch_peak_threads"} {
		if !regexp.MustCompile(`(?m)^` + name + ` [1-9]`).MatchString(body) {
			t.Errorf("metrics lack a positive %s", name)
		}
	}

	w.Close()
	body = scrape()
	for _, want := range []string{"loom_thread_watch_running 0", "loom_thread_watch_tripped 0"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics after the watch closed lack %q", want)
		}
	}
}
