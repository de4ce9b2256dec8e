package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// A blocking route runs its handler inside loom.Blocking: past the bound,
// a request is answered 503 with Retry-After, and its handler never runs.
func TestBlockingRoute(t *testing.T) {
	loom.SetBlockingLimit(1, loom.FullReject)
	t.Cleanup(func() { loom.SetBlockingLimit(0, loom.FullWait) })
	app := newApp(t)
	inside, release := make(chan struct{}), make(chan struct{})
	app.Get("/cgo", func(w http.ResponseWriter, r *http.Request) error {
		inside <- struct{}{}
		<-release
		return nil
	}, web.WithBlocking())
	app.Get("/plain", text("ok"))

	first := make(chan int)
	go func() { first <- do(t, app, "GET", "/cgo", "").Code }()
	<-inside // exactly at the bound: one runs
	if _, running := loom.BlockingLimit(); running != 1 {
		t.Errorf("calls inside Blocking = %d; want 1", running)
	}
	rec := do(t, app, "GET", "/cgo", "") // one past it
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("second /cgo: %d, Retry-After %q; want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	// A route not marked blocking does not count against the bound.
	if rec := do(t, app, "GET", "/plain", ""); rec.Code != http.StatusOK {
		t.Errorf("/plain while /cgo holds the bound: %d; want 200", rec.Code)
	}
	close(release)
	if got := <-first; got != http.StatusOK {
		t.Errorf("first /cgo: %d; want 200", got)
	}
}

// deadline wraps a route's handler so that its request's context has
// already passed its deadline, as a timeout decorator's would.
func deadline(d time.Duration) web.Option {
	return web.WithDecorators(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	})
}

func TestExpiredRequestIs503(t *testing.T) {
	t.Run("before admission", func(t *testing.T) {
		app := newApp(t)
		ran := false
		app.Get("/", func(http.ResponseWriter, *http.Request) error { ran = true; return nil }, deadline(-time.Second))
		if rec := do(t, app, "GET", "/", ""); rec.Code != http.StatusServiceUnavailable || ran {
			t.Errorf("request past its deadline: %d, handler ran %v; want 503, not run", rec.Code, ran)
		}
	})
	t.Run("told before the context's timer", func(t *testing.T) {
		// Adaptive drops a queued task whose deadline has passed before the
		// context's own timer ends it: Run returns the deadline error while
		// ctx.Err() is still nil. TestExpiredRequestIs503/while_queued hit
		// that about once in twenty runs.
		app := newApp(t, web.WithExecutor(expiringExecutor{}))
		ran := false
		app.Get("/", func(http.ResponseWriter, *http.Request) error { ran = true; return nil })
		if rec := do(t, app, "GET", "/", ""); rec.Code != http.StatusServiceUnavailable || ran {
			t.Errorf("request its executor found past its deadline: %d, handler ran %v; want 503, not run", rec.Code, ran)
		}
	})
	t.Run("while queued", func(t *testing.T) {
		e := loom.Adaptive(loom.WithLimitRange(1, 1), loom.WithQueue(1))
		t.Cleanup(func() { _ = e.Shutdown(t.Context()) })
		app := newApp(t, web.WithExecutor(e))
		inside, release := make(chan struct{}), make(chan struct{})
		app.Get("/hold", func(http.ResponseWriter, *http.Request) error {
			inside <- struct{}{}
			<-release
			return nil
		})
		ran := false
		app.Get("/late", func(http.ResponseWriter, *http.Request) error { ran = true; return nil }, deadline(20*time.Millisecond))
		held := make(chan int)
		go func() { held <- do(t, app, "GET", "/hold", "").Code }()
		<-inside
		late := make(chan *httptest.ResponseRecorder)
		go func() { late <- do(t, app, "GET", "/late", "") }()
		for e.Stats().Queued != 1 {
			time.Sleep(100 * time.Microsecond)
		}
		time.Sleep(30 * time.Millisecond) // past /late's deadline while it waits
		close(release)
		rec := <-late
		if rec.Code != http.StatusServiceUnavailable || ran {
			t.Errorf("/late expired in the queue: %d, handler ran %v; want 503, not run", rec.Code, ran)
		}
		if got := <-held; got != http.StatusOK {
			t.Errorf("/hold: %d; want 200", got)
		}
		if got := e.Stats().Expired; got != 1 {
			t.Errorf("Stats.Expired = %d; want 1", got)
		}
	})
}

// expiringExecutor drops every task with context.DeadlineExceeded, as an
// executor does that finds a request's deadline passed before the request's
// context has ended.
type expiringExecutor struct{}

var _ loom.Executor = expiringExecutor{}

func (expiringExecutor) Go(context.Context, loom.Task) error  { return context.DeadlineExceeded }
func (expiringExecutor) Run(context.Context, loom.Task) error { return context.DeadlineExceeded }
func (expiringExecutor) Shutdown(context.Context) error       { return nil }
func (expiringExecutor) Stats() loom.Stats                    { return loom.Stats{} }
