package web_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// serveApp serves app on a free loopback port; stop cancels Serve's context
// and returns Serve's error.
var serveApp = webtest.Serve

func TestGracefulShutdownFinishesInFlightRequests(t *testing.T) {
	app := newApp(t, web.WithShutdownGrace(10*time.Second))
	entered := make(chan struct{})
	app.Get("/slow", func(w http.ResponseWriter, r *http.Request) error {
		close(entered)
		time.Sleep(200 * time.Millisecond)
		_, err := io.WriteString(w, "finished")
		return err
	})
	url, stop := serveApp(t, app)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	got := webtest.GetAsync(client, url+"/slow")
	<-entered
	if err := stop(); err != nil {
		t.Errorf("Serve returned %v; want nil after a clean shutdown", err)
	}
	r := <-got
	if r.Err != nil || r.Status != 200 || r.Body != "finished" {
		t.Errorf("in-flight request: got %d %q %v; want 200 finished", r.Status, r.Body, r.Err)
	}
	if _, err := client.Get(url + "/slow"); err == nil {
		t.Error("the server still accepts requests after shutdown")
	}
}

func TestShutdownGraceRunsOut(t *testing.T) {
	app := newApp(t, web.WithShutdownGrace(50*time.Millisecond))
	err := stopWithAStuckRequest(t, app)
	if err == nil || !strings.Contains(err.Error(), "graceful shutdown") {
		t.Errorf("got %v; want an error saying the graceful shutdown ran out", err)
	}
}

// stopWithAStuckRequest serves app with a GET /stuck whose handler blocks,
// stops the server while a request is inside that handler, then lets the
// handler return, waits for the request to end, and returns stop's error.
func stopWithAStuckRequest(t *testing.T, app *web.App) error {
	t.Helper()
	entered, leave := make(chan struct{}), make(chan struct{})
	app.Get("/stuck", func(w http.ResponseWriter, r *http.Request) error {
		close(entered)
		<-leave
		return nil
	})
	url, stop := serveApp(t, app)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := client.Get(url + "/stuck"); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	err := stop()
	close(leave)
	<-done
	return err
}

// TestServerDefaults: the defaults docs/web.md states reach the server, by
// their numbers: 10 s to read a request's head, 120 s idle, 1 MiB of
// headers; and, for an engine, 30 s to write, 30 s for a body of at most
// 10 MiB.
func TestServerDefaults(t *testing.T) {
	configured := make(chan *http.Server, 1)
	app := newApp(t, web.WithServerConfig(func(s *http.Server) { configured <- s }))
	_, stop := serveApp(t, app)
	got := <-configured
	if got.ReadHeaderTimeout != 10*time.Second || got.IdleTimeout != 120*time.Second || got.MaxHeaderBytes != 1<<20 {
		t.Errorf("got ReadHeaderTimeout %v IdleTimeout %v MaxHeaderBytes %d; want 10s, 2m0s, %d", got.ReadHeaderTimeout, got.IdleTimeout, got.MaxHeaderBytes, 1<<20)
	}
	if err := stop(); err != nil {
		t.Error(err)
	}

	var engine settingsEngine
	app = newApp(t, web.WithEngine(&engine))
	app.Post("/", func(w http.ResponseWriter, r *http.Request) error { return nil })
	_, stop = serveApp(t, app)
	_ = stop()
	if s := engine.got; s.WriteTimeout != 30*time.Second || s.BodyTimeout != 30*time.Second || s.BodyLimit != 10<<20 {
		t.Errorf("engine got WriteTimeout %v BodyTimeout %v BodyLimit %d; want 30s, 30s, %d", s.WriteTimeout, s.BodyTimeout, s.BodyLimit, 10<<20)
	}
}

// settingsEngine records the settings an App gives its engine, and serves
// nothing.
type settingsEngine struct{ got web.EngineSettings }

func (*settingsEngine) Name() string { return "settings" }

func (e *settingsEngine) NewServer(_ *http.Server, s web.EngineSettings) (web.EngineServer, error) {
	e.got = s
	return nil, errors.New("settingsEngine serves nothing")
}

func TestListenError(t *testing.T) {
	app := newApp(t)
	err := app.ListenAndServe(context.Background(), "127.0.0.1:-1")
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("got %v; want a listen error", err)
	}
}

func TestAccessLog(t *testing.T) {
	var logs logBuffer
	app := newApp(t, logs.logger(), web.WithAccessLog())
	app.Get("/users/{id}", text("ann"))
	do(t, app, "GET", "/users/7?x=1", "")
	do(t, app, "GET", "/nowhere", "")
	log := logs.String()
	for _, want := range []string{
		`msg=request method=GET path=/users/7 route="GET /users/{id}" status=200 bytes=3`,
		`path=/nowhere route="" status=404`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("access log lacks %q:\n%s", want, log)
		}
	}
}

func TestShutdownGraceMustNotBeNegative(t *testing.T) {
	_, err := web.New(web.WithExecutor(loom.Virtual()), web.WithShutdownGrace(-time.Second))
	if err == nil || !strings.Contains(err.Error(), "shutdown grace -1s is negative") {
		t.Errorf("New with WithShutdownGrace(-1s): got %v; want an error saying the grace is negative", err)
	}
	app, err := web.New(web.WithExecutor(loom.Virtual()), web.WithShutdownGrace(0))
	if err != nil {
		t.Fatalf("New with WithShutdownGrace(0) (the default): %v", err)
	}
	if err := app.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestPprof(t *testing.T) {
	app := newApp(t, web.WithPprof())
	rec := do(t, app, "GET", "/debug/pprof/cmdline", "")
	if rec.Code != 200 || rec.Body.Len() == 0 {
		t.Errorf("GET /debug/pprof/cmdline: got %d with %d bytes", rec.Code, rec.Body.Len())
	}
	if rec := do(t, app, "GET", "/debug/pprof/", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), "goroutine") {
		t.Errorf("GET /debug/pprof/: got %d", rec.Code)
	}
	// The named profiles are served by the index handler below its path:
	// what 'go tool pprof http://…/debug/pprof/heap' fetches.
	for _, profile := range []string{"heap", "goroutine?debug=1", "allocs", "block", "mutex", "threadcreate"} {
		if rec := do(t, app, "GET", "/debug/pprof/"+profile, ""); rec.Code != 200 || rec.Body.Len() == 0 {
			t.Errorf("GET /debug/pprof/%s: got %d with %d bytes; want 200 with a profile", profile, rec.Code, rec.Body.Len())
		}
	}
	if rec := do(t, newApp(t), "GET", "/debug/pprof/", ""); rec.Code != 404 {
		t.Errorf("pprof without the option: got %d; want 404", rec.Code)
	}
}

// TestServeReportsTheAppsShutdown has Serve give up on a handler that
// outlives the grace, on an executor the App made: Serve's error carries
// the App's Shutdown error (the executor abandoned the task), not only the
// HTTP server's. (server.go, Serve's a.Shutdown.)
func TestServeReportsTheAppsShutdown(t *testing.T) {
	app, err := web.New(web.WithShutdownGrace(50*time.Millisecond), web.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	err = stopWithAStuckRequest(t, app)
	if !errors.Is(err, loom.ErrAbandoned) {
		t.Errorf("Serve with a handler past the grace: got %v; want an error matching loom.ErrAbandoned", err)
	}
}
