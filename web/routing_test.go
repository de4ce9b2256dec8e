package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// newApp returns an App on a virtual executor owned by the test.
func newApp(t testing.TB, opts ...web.AppOption) *web.App {
	t.Helper()
	e := loom.Virtual()
	t.Cleanup(func() { _ = e.Shutdown(t.Context()) })
	quiet := web.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	app, err := web.New(append([]web.AppOption{web.WithExecutor(e), quiet}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Shutdown(t.Context()) })
	return app
}

func text(s string) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// do serves one request in process and returns the recorder.
func do(t testing.TB, h http.Handler, method, target string, body string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestRouting(t *testing.T) {
	app := newApp(t)
	app.Get("/", text("root"))
	app.Get("/users/me", text("static"))
	app.Get("/users/{name}", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "user "+web.Param(r, "name").String())
		return err
	})
	app.Get("/files/{path...}", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "file "+r.PathValue("path"))
		return err
	})
	app.Post("/users/{name}", text("posted"))
	app.Handle("PURGE", "/cache", text("purged"))
	app.Handle("", "/any", text("any"))
	api := app.Group("/api")
	api.Put("/items/{id}", text("put"))
	api.Patch("/items/{id}", text("patch"))
	api.Delete("/items/{id}", text("delete"))
	api.Options("/items/{id}", text("options"))

	tests := []struct {
		method, target string
		status         int
		body           string
	}{
		{"GET", "/", 200, "root"},
		{"GET", "/users/me", 200, "static"},
		{"GET", "/users/ann", 200, "user ann"},
		{"GET", "/files/a/b/c.txt", 200, "file a/b/c.txt"},
		{"POST", "/users/ann", 200, "posted"},
		{"PURGE", "/cache", 200, "purged"},
		{"DELETE", "/any", 200, "any"},
		{"PUT", "/api/items/1", 200, "put"},
		{"PATCH", "/api/items/1", 200, "patch"},
		{"DELETE", "/api/items/1", 200, "delete"},
		{"OPTIONS", "/api/items/1", 200, "options"},
		{"HEAD", "/users/me", 200, ""},
		{"GET", "/nope", 404, ""},
		{"DELETE", "/users/ann", 405, ""},
	}
	for _, tt := range tests {
		rec := do(t, app, tt.method, tt.target, "")
		if rec.Code != tt.status {
			t.Errorf("%s %s: got status %d; want %d", tt.method, tt.target, rec.Code, tt.status)
		}
		if tt.body != "" && rec.Body.String() != tt.body {
			t.Errorf("%s %s: got body %q; want %q", tt.method, tt.target, rec.Body.String(), tt.body)
		}
	}
	rec := do(t, app, "DELETE", "/users/ann", "")
	if got, want := rec.Header().Get("Allow"), "GET, HEAD, POST"; got != want {
		t.Errorf("405 Allow: got %q; want %q", got, want)
	}
}

func TestRegistrationMistakesPanic(t *testing.T) {
	noop := func(w http.ResponseWriter, r *http.Request) error { return nil }
	tests := []struct {
		name     string
		register func(app *web.App)
	}{
		{"duplicate", func(app *web.App) { app.Get("/a", noop); app.Get("/a", noop) }},
		{"duplicate with other param name", func(app *web.App) { app.Get("/u/{id}", noop); app.Get("/u/{name}", noop) }},
		{"duplicate through a group", func(app *web.App) { app.Get("/api/x", noop); app.Group("/api").Get("/x", noop) }},
		{"no leading slash", func(app *web.App) { app.Get("a", noop) }},
		{"bad wildcard", func(app *web.App) { app.Get("/a/{b", noop) }},
		{"wildcard not last", func(app *web.App) { app.Get("/a/{rest...}/b", noop) }},
		{"bad method", func(app *web.App) { app.Handle("GE T", "/a", http.NotFoundHandler()) }},
		{"nil handler", func(app *web.App) { app.Handle("GET", "/a", nil) }},
		{"bad group prefix", func(app *web.App) { app.Group("api/") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				v := recover()
				msg, _ := v.(string)
				if !strings.HasPrefix(msg, "web: ") {
					t.Errorf("got panic %v; want a message starting with \"web: \"", v)
				}
			}()
			tt.register(newApp(t))
		})
	}
}

func TestSpecificityAndTrailingSlash(t *testing.T) {
	app := newApp(t)
	app.Get("/posts/{id}", text("param"))
	app.Get("/posts/latest", text("static"))
	app.Get("/posts/{id}/comments/{rest...}", text("wildcard"))
	app.Get("/dir/", text("dir"))
	tests := []struct {
		target string
		status int
		body   string
	}{
		{"/posts/latest", 200, "static"},
		{"/posts/7", 200, "param"},
		{"/posts/7/comments/a/b", 200, "wildcard"},
		{"/dir/", 200, "dir"},
		{"/dir/sub", 404, ""}, // a trailing slash is not a subtree
		{"/", 404, ""},
	}
	for _, tt := range tests {
		rec := do(t, app, "GET", tt.target, "")
		if rec.Code != tt.status || (tt.body != "" && rec.Body.String() != tt.body) {
			t.Errorf("GET %s: got %d %q; want %d %q", tt.target, rec.Code, rec.Body.String(), tt.status, tt.body)
		}
	}
}

func TestStdlibHandlersAndDecorators(t *testing.T) {
	app := newApp(t)
	app.Handle("GET", "/std", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "std")
	}))
	app.Handle("GET", "/strip/{path...}", http.StripPrefix("/strip", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.URL.Path)
	})))
	app.Get("/timeout", text("in time"), web.WithDecorators(func(next http.Handler) http.Handler {
		return http.TimeoutHandler(next, time.Minute, "too slow")
	}))
	mux := http.NewServeMux()
	mux.Handle("/app/", http.StripPrefix("/app", app))
	for target, want := range map[string]string{
		"/app/std":       "std",
		"/app/strip/a/b": "/a/b",
		"/app/timeout":   "in time",
	} {
		if rec := do(t, mux, "GET", target, ""); rec.Code != 200 || rec.Body.String() != want {
			t.Errorf("GET %s: got %d %q; want 200 %q", target, rec.Code, rec.Body.String(), want)
		}
	}
}

func TestStaticRouteDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race, sync.Pool drops items at random, so pooled values are reallocated")
	}
	app := newApp(t)
	noop := func(w http.ResponseWriter, r *http.Request) error { return nil }
	app.Get("/users/{id}", noop)
	app.Get("/users/me/settings", noop)
	req := httptest.NewRequest("GET", "/users/me/settings", nil)
	w := httptest.NewRecorder()
	app.ServeHTTP(w, req) // warm the pools
	if allocs := testing.AllocsPerRun(100, func() { app.ServeHTTP(w, req) }); allocs != 0 {
		t.Errorf("serving a static route allocated %.1f times per request; want 0", allocs)
	}
}

// TestWriteStringDoesNotAllocate guards the App's writer passing strings on:
// without WriteString, io.WriteString copies the string on every request.
func TestWriteStringDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race, sync.Pool drops items at random, so pooled values are reallocated")
	}
	for _, observed := range []bool{false, true} {
		app := newApp(t)
		if observed { // the App records the response twice: around the mux and around the handler
			app.Observe(observerFunc(func(*http.Request, web.Response) {}))
		}
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
			_, err := io.WriteString(w, "Hello World!")
			return err
		})
		req := httptest.NewRequest("GET", "/", nil)
		w := &stringWriter{header: http.Header{}}
		app.ServeHTTP(w, req) // warm the pools
		if allocs := testing.AllocsPerRun(100, func() { app.ServeHTTP(w, req) }); allocs != 0 {
			t.Errorf("observed %v: io.WriteString in a handler allocated %.1f times per request; want 0", observed, allocs)
		}
		if got, want := w.written, 102*len("Hello World!"); got != want {
			t.Errorf("observed %v: got %d bytes written through WriteString; want %d", observed, got, want)
		}
	}
}

// stringWriter is a ResponseWriter that takes strings without copying them,
// as *http.response does, and counts what it was given.
type stringWriter struct {
	header  http.Header
	written int
}

func (w *stringWriter) Header() http.Header { return w.header }
func (w *stringWriter) WriteHeader(int)     {}
func (w *stringWriter) Write(p []byte) (int, error) {
	w.written += len(p)
	return len(p), nil
}
func (w *stringWriter) WriteString(s string) (int, error) {
	w.written += len(s)
	return len(s), nil
}

type observerFunc func(*http.Request, web.Response)

func (f observerFunc) Observe(r *http.Request, resp web.Response) { f(r, resp) }
