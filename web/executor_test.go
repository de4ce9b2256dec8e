package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// blockOne occupies e's only slot until release is closed.
func blockOne(t *testing.T, e loom.Executor) (release func()) {
	t.Helper()
	started, unblock := make(chan struct{}), make(chan struct{})
	if err := e.Go(context.Background(), func(context.Context) {
		close(started)
		<-unblock
	}); err != nil {
		t.Fatal(err)
	}
	<-started
	var once sync.Once
	return func() { once.Do(func() { close(unblock) }) }
}

func TestFullExecutorRejectsWith503(t *testing.T) {
	full := loom.Limit(1) // no queue: a second task is rejected
	defer full.Shutdown(context.Background())
	release := blockOne(t, full)
	defer release()

	app := newApp(t)
	var ran atomic.Bool
	app.Get("/limited", func(w http.ResponseWriter, r *http.Request) error {
		ran.Store(true)
		return nil
	}, web.Executor(full))
	app.Get("/free", text("free"))

	rec := do(t, app, "GET", "/limited", "")
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("got %d with Retry-After %q; want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	if !strings.Contains(rec.Body.String(), "busy") {
		t.Errorf("got body %q; want a short busy message", rec.Body.String())
	}
	if ran.Load() {
		t.Error("the handler ran on a full executor")
	}
	// Isolation: the full executor does not affect routes on the default one.
	if rec := do(t, app, "GET", "/free", ""); rec.Code != 200 {
		t.Errorf("GET /free while /limited is full: got %d; want 200", rec.Code)
	}
	if got := full.Stats().Rejected; got != 1 {
		t.Errorf("Stats().Rejected = %d; want 1", got)
	}
}

func TestClientGoneBeforeStartSkipsHandler(t *testing.T) {
	t.Run("already gone", func(t *testing.T) {
		app := newApp(t, web.AccessLog())
		var ran atomic.Bool
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error { ran.Store(true); return nil })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		req := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		if ran.Load() {
			t.Error("the handler ran for a client that had gone")
		}
		if rec.Body.Len() != 0 {
			t.Errorf("got body %q; want nothing written", rec.Body.String())
		}
	})
	t.Run("gone while queued", func(t *testing.T) {
		waiting := loom.Limit(1, loom.Queue(1), loom.Full(loom.FullWait))
		defer waiting.Shutdown(context.Background())
		release := blockOne(t, waiting)
		defer release()

		var logs logBuffer
		app := newApp(t, logs.logger(), web.AccessLog())
		var ran atomic.Bool
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error { ran.Store(true); return nil }, web.Executor(waiting))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		rec := httptest.NewRecorder()
		go func() {
			defer close(done)
			app.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
		}()
		// Wait until the request is queued behind the blocked task, then leave.
		for deadline := time.Now().Add(10 * time.Second); waiting.Stats().Queued == 0; {
			if time.Now().After(deadline) {
				t.Fatal("the request never queued")
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		release() // the queued request now gets its slot, and must not run
		<-done
		if ran.Load() {
			t.Error("the handler ran for a client that left while queued")
		}
		if !strings.Contains(logs.String(), "status=499") {
			t.Errorf("access log lacks status=499:\n%s", logs.String())
		}
	})
}

func TestDefaultExecutorFromEnv(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR", "")
	t.Setenv("LOOM_EXECUTOR_HTTP", "pool:3")
	app, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	app.Get("/", text("pooled"))
	if rec := do(t, app, "GET", "/", ""); rec.Body.String() != "pooled" {
		t.Errorf("got %q; want %q", rec.Body.String(), "pooled")
	}
	s := app.Executor().Stats()
	if s.Kind != "pool" || s.Submitted != 1 {
		t.Errorf("default executor: got kind %q with %d tasks; want pool with 1", s.Kind, s.Submitted)
	}
	if err := app.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The App made the pool, so its Shutdown stopped it.
	if err := app.Executor().Go(context.Background(), func(context.Context) {}); err == nil {
		t.Error("the App's own executor still admits tasks after App.Shutdown")
	}
}

func TestBadExecutorSpecIsAnError(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR_HTTP", "pool:lots")
	_, err := web.New()
	if err == nil || !strings.Contains(err.Error(), "LOOM_EXECUTOR_HTTP") {
		t.Errorf("got %v; want an error naming LOOM_EXECUTOR_HTTP", err)
	}
}

func TestUserExecutorStaysTheUsers(t *testing.T) {
	e := loom.Pool(2)
	defer e.Shutdown(context.Background())
	app, err := web.New(web.WithExecutor(e))
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.Go(context.Background(), func(context.Context) {}); err != nil {
		t.Errorf("the caller's executor was shut down by the App: %v", err)
	}
}

func TestNewExecutorIsolatesARoute(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR_REPORTS", "")
	app := newApp(t)
	slow, err := app.NewExecutor("reports", "limit:1")
	if err != nil {
		t.Fatal(err)
	}
	if s := slow.Stats(); s.Kind != "limit" || s.Name != "reports" {
		t.Errorf("got %q named %q; want limit named reports", s.Kind, s.Name)
	}
	entered, leave := make(chan struct{}), make(chan struct{})
	app.Get("/report", func(w http.ResponseWriter, r *http.Request) error {
		close(entered)
		<-leave
		_, err := io.WriteString(w, "report")
		return err
	}, web.Executor(slow))
	app.Get("/fast", text("fast"))

	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- do(t, app, "GET", "/report", "") }()
	<-entered
	if rec := do(t, app, "GET", "/report", ""); rec.Code != 503 {
		t.Errorf("second /report while the first runs: got %d; want 503", rec.Code)
	}
	if rec := do(t, app, "GET", "/fast", ""); rec.Code != 200 {
		t.Errorf("/fast while /report holds its executor: got %d; want 200", rec.Code)
	}
	close(leave)
	if rec := <-done; rec.Body.String() != "report" {
		t.Errorf("got %q; want %q", rec.Body.String(), "report")
	}

	t.Setenv("LOOM_EXECUTOR_REPORTS", "pool:x")
	if _, err := app.NewExecutor("reports", "limit:1"); err == nil || !strings.Contains(err.Error(), "LOOM_EXECUTOR_REPORTS") {
		t.Errorf("got %v; want an error naming LOOM_EXECUTOR_REPORTS", err)
	}
}

func TestGroupExecutorAndDecorators(t *testing.T) {
	pool := loom.Pool(1, loom.Name("api"))
	defer pool.Shutdown(context.Background())
	app := newApp(t)
	tag := func(name string) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Add("X-Trail", name)
				next.ServeHTTP(w, r)
			})
		}
	}
	app.Use(tag("app"))
	api := app.Group("/api", web.Executor(pool), web.Use(tag("group")))
	v1 := api.Group("/v1")
	v1.Use(tag("v1"))
	v1.Get("/ping", text("pong"), web.Use(tag("route")))
	app.Get("/plain", text("plain"))

	rec := do(t, app, "GET", "/api/v1/ping", "")
	if got, want := strings.Join(rec.Header().Values("X-Trail"), ","), "app,group,v1,route"; got != want {
		t.Errorf("decorator order: got %s; want %s", got, want)
	}
	if rec.Body.String() != "pong" {
		t.Errorf("got %q; want pong", rec.Body.String())
	}
	if got := pool.Stats().Submitted; got != 1 {
		t.Errorf("group executor ran %d tasks; want 1", got)
	}
	rec = do(t, app, "GET", "/plain", "")
	if got := strings.Join(rec.Header().Values("X-Trail"), ","); got != "app" {
		t.Errorf("a root route got decorators %q; want only app", got)
	}
	if rec := do(t, app, "GET", "/missing", ""); rec.Header().Get("X-Trail") != "app" {
		t.Errorf("a 404 got decorators %q; want app (App.Use wraps everything)", rec.Header().Get("X-Trail"))
	}
}

func TestExecutorSpecOption(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR", "pool:x") // ignored: the spec is explicit
	app, err := web.New(web.ExecutorSpec("limit:4"))
	if err != nil {
		t.Fatal(err)
	}
	if s := app.Executor().Stats(); s.Kind != "limit" {
		t.Errorf("got kind %q; want limit", s.Kind)
	}
	if err := app.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := web.New(web.ExecutorSpec("pool:-1")); err == nil {
		t.Error("a bad spec made an App; want an error")
	}
}
