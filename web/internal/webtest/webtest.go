// Package webtest holds the helpers web's sub-packages (web/metrics,
// web/websocket) share in their tests: an App that cleans up after itself,
// and one request served in memory.
package webtest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// NewApp returns an App on a virtual executor of its own that logs nothing,
// with opts after those two. It fails t if web.New does, and shuts the App,
// then the executor, down at t's cleanup.
func NewApp(t testing.TB, opts ...web.Option) *web.App {
	t.Helper()
	e := loom.Virtual()
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	quiet := web.Logger(slog.New(slog.DiscardHandler))
	app, err := web.New(append([]web.Option{web.Executor(e), quiet}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Shutdown(context.Background()) })
	return app
}

// Do serves one request, method target with body, on h in memory and
// returns what h wrote.
func Do(t testing.TB, h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, strings.NewReader(body)))
	return rec
}
