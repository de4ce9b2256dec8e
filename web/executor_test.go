package web_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
	}, web.WithExecutor(full))
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
		app := newApp(t, web.WithAccessLog())
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
		waiting := loom.Limit(1, loom.WithQueue(1), loom.WithFull(loom.FullWait))
		defer waiting.Shutdown(context.Background())
		release := blockOne(t, waiting)
		defer release()

		var logs logBuffer
		app := newApp(t, logs.logger(), web.WithAccessLog())
		var ran atomic.Bool
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error { ran.Store(true); return nil }, web.WithExecutor(waiting))
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
	s := app.Executors()[0].Stats()
	if s.Kind != "pool" || s.Submitted != 1 {
		t.Errorf("default executor: got kind %q with %d tasks; want pool with 1", s.Kind, s.Submitted)
	}
	if err := app.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The App made the pool, so its Shutdown stopped it.
	if err := app.Executors()[0].Go(context.Background(), func(context.Context) {}); err == nil {
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

func TestExecutorFromEnvIsolatesARoute(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR_REPORTS", "")
	app := newApp(t)
	entered, leave := make(chan struct{}), make(chan struct{})
	app.Get("/report", func(w http.ResponseWriter, r *http.Request) error {
		close(entered)
		<-leave
		_, err := io.WriteString(w, "report")
		return err
	}, web.WithExecutorFromEnv("reports", "limit:1"))
	app.Get("/fast", text("fast"))
	// A second route naming the executor shares it.
	app.Get("/report2", text("report2"), web.WithExecutorFromEnv("reports", "limit:1"))
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	executors := app.Executors()
	if len(executors) != 2 {
		t.Fatalf("got %d executors; want the default and reports", len(executors))
	}
	slow := executors[1]
	if s := slow.Stats(); s.Kind != "limit" || s.Name != "reports" {
		t.Errorf("got %q named %q; want limit named reports", s.Kind, s.Name)
	}

	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- do(t, app, "GET", "/report", "") }()
	<-entered
	if rec := do(t, app, "GET", "/report", ""); rec.Code != 503 {
		t.Errorf("second /report while the first runs: got %d; want 503", rec.Code)
	}
	if rec := do(t, app, "GET", "/report2", ""); rec.Code != 503 {
		t.Errorf("/report2 while /report holds the shared executor: got %d; want 503", rec.Code)
	}
	if rec := do(t, app, "GET", "/fast", ""); rec.Code != 200 {
		t.Errorf("/fast while /report holds its executor: got %d; want 200", rec.Code)
	}
	close(leave)
	if rec := <-done; rec.Body.String() != "report" {
		t.Errorf("got %q; want %q", rec.Body.String(), "report")
	}
	if err := app.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := slow.Go(context.Background(), func(context.Context) {}); err == nil {
		t.Error("the App's reports executor still admits tasks after App.Shutdown")
	}
}

// TestExecutorFromEnvBadSpec checks that a route's executor spec that does
// not parse is reported by Err and stops Serve, and that the route answers
// 500 meanwhile.
func TestExecutorFromEnvBadSpec(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR_REPORTS", "pool:x")
	var logs logBuffer
	app := newApp(t, logs.logger())
	app.Group("/reports", web.WithExecutorFromEnv("reports", "limit:1")).Get("/daily", text("daily"))
	err := app.Err()
	if err == nil || !strings.Contains(err.Error(), "LOOM_EXECUTOR_REPORTS") {
		t.Fatalf("Err: got %v; want an error naming LOOM_EXECUTOR_REPORTS", err)
	}
	if rec := do(t, app, "GET", "/reports/daily", ""); rec.Code != 500 {
		t.Errorf("route on the broken executor: got %d; want 500", rec.Code)
	}
	if !strings.Contains(logs.String(), "LOOM_EXECUTOR_REPORTS") {
		t.Errorf("the 500 was not logged with its cause:\n%s", logs.String())
	}
	ln, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	if serr := app.Serve(context.Background(), ln); serr == nil || !strings.Contains(serr.Error(), "LOOM_EXECUTOR_REPORTS") {
		t.Errorf("Serve: got %v; want the configuration error", serr)
	}
	if _, derr := net.Dial("tcp", ln.Addr().String()); derr == nil {
		t.Error("Serve left its listener open after refusing to serve")
	}
}

func TestExecutorFromEnvOneFallbackPerName(t *testing.T) {
	app := newApp(t)
	app.Get("/a", text("a"), web.WithExecutorFromEnv("reports", "limit:1"))
	defer func() {
		if v := fmt.Sprint(recover()); !strings.HasPrefix(v, "web: ") || !strings.Contains(v, `"reports"`) {
			t.Errorf("got panic %q; want a web: panic naming the executor", v)
		}
	}()
	app.Get("/b", text("b"), web.WithExecutorFromEnv("reports", "pool:2"))
}

func TestGroupExecutorAndDecorators(t *testing.T) {
	pool := loom.Pool(1, loom.WithName("api"))
	defer pool.Shutdown(context.Background())
	tag := func(name string) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Add("X-Trail", name)
				next.ServeHTTP(w, r)
			})
		}
	}
	app := newApp(t, web.WithDecorators(tag("app")))
	api := app.Group("/api", web.WithExecutor(pool), web.WithDecorators(tag("group")))
	v1 := api.Group("/v1", web.WithDecorators(tag("v1")))
	v1.Get("/ping", text("pong"), web.WithDecorators(tag("route")))
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
		t.Errorf("a 404 got decorators %q; want app (Use given to New wraps everything)", rec.Header().Get("X-Trail"))
	}
}

func TestExecutorFromEnvAtNew(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR", "")
	t.Setenv("LOOM_EXECUTOR_HTTP", "")
	app, err := web.New(web.WithExecutorFromEnv("http", "limit:4"))
	if err != nil {
		t.Fatal(err)
	}
	if s := app.Executors()[0].Stats(); s.Kind != "limit" {
		t.Errorf("got kind %q; want limit", s.Kind)
	}
	// The narrowest level wins: a route's Executor over the App's default.
	route := loom.Pool(1)
	defer route.Shutdown(context.Background())
	app.Get("/", text("x"), web.WithExecutor(route))
	do(t, app, "GET", "/", "")
	if got := route.Stats().Completed; got != 1 {
		t.Errorf("the route's executor ran %d tasks; want 1", got)
	}
	if err := app.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := web.New(web.WithExecutorFromEnv("http", "pool:-1")); err == nil {
		t.Error("a bad fallback spec made an App; want an error")
	}
}

// ranThenFailed is an executor that runs each task on the caller's
// goroutine and then reports it rejected, as no loom executor does.
type ranThenFailed struct{ loom.Executor }

func (ranThenFailed) Run(ctx context.Context, t loom.Task) error {
	t(ctx)
	return loom.ErrRejected
}

// TestExecutorErrorAfterTheHandlerRan: an error from an executor that ran
// the handler all the same adds nothing to the handler's response.
// (route.go, ServeHTTP's ran.)
func TestExecutorErrorAfterTheHandlerRan(t *testing.T) {
	e := loom.Virtual()
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	app := newApp(t)
	app.Get("/", text("ok"), web.WithExecutor(ranThenFailed{e}))
	if rec := do(t, app, "GET", "/", ""); rec.Code != http.StatusOK || rec.Body.String() != "ok" {
		t.Errorf("got %d %q; want 200 %q", rec.Code, rec.Body.String(), "ok")
	}
}

// droppedAtDeadline is an executor that holds each task unrun until its
// context ends, then reports an error of its own, not the context's.
type droppedAtDeadline struct{ loom.Executor }

func (droppedAtDeadline) Run(ctx context.Context, t loom.Task) error {
	<-ctx.Done()
	return errors.New("dropped from the queue")
}

// TestRequestDeadlinePassedInTheQueue: a request whose deadline (a
// decorator's timeout) passes while it waits its turn is a 503, whatever
// error the executor gives for it. (route.go, ServeHTTP's ctx.Err().)
func TestRequestDeadlinePassedInTheQueue(t *testing.T) {
	e := loom.Pool(1) // one that waits: a virtual executor's tasks get no deadline to wait for
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	app := newApp(t, web.WithDecorators(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), time.Millisecond)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}))
	app.Get("/", text("ok"), web.WithExecutor(droppedAtDeadline{e}))
	if rec := do(t, app, "GET", "/", ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("got %d %q; want 503", rec.Code, rec.Body.String())
	}
}
