package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// newApp returns an App on a virtual executor owned by the test.
func newApp(t testing.TB, opts ...web.Option) *web.App {
	t.Helper()
	e := loom.Virtual()
	t.Cleanup(func() { _ = e.Shutdown(t.Context()) })
	quiet := web.Logger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	app, err := web.New(append([]web.Option{web.WithExecutor(e), quiet}, opts...)...)
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
		_, err := io.WriteString(w, "user "+web.Param(r, "name"))
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
