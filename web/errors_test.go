package web_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loomrt/loom/web"
)

// logBuffer is a slog destination tests can read while handlers write.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() web.AppOption {
	return web.WithLogger(slog.New(slog.NewTextHandler(b, nil)))
}

func TestErrors(t *testing.T) {
	secret := errors.New("dial tcp 10.0.0.7:5432: password authentication failed")
	handlers := map[string]web.HandlerFunc{
		"/typed": func(w http.ResponseWriter, r *http.Request) error {
			return web.Errorf(http.StatusConflict, "todo %d exists", 7)
		},
		"/wrapped": func(w http.ResponseWriter, r *http.Request) error {
			return fmt.Errorf("load: %w", web.Errorf(404, "no such todo"))
		},
		"/abort":   func(w http.ResponseWriter, r *http.Request) error { return web.Abort(http.StatusForbidden) },
		"/unknown": func(w http.ResponseWriter, r *http.Request) error { return fmt.Errorf("query: %w", secret) },
		"/cause": func(w http.ResponseWriter, r *http.Request) error {
			return web.Errorf(http.StatusBadGateway, "upstream down: %w", secret)
		},
		"/late": func(w http.ResponseWriter, r *http.Request) error {
			_, _ = io.WriteString(w, "partial")
			return errors.New("too late")
		},
		"/redirect": func(w http.ResponseWriter, r *http.Request) error { return web.Redirect(w, r, "/typed", 0) },
	}
	tests := []struct {
		target string
		debug  bool
		status int
		body   string
	}{
		{"/typed", false, 409, "todo 7 exists\n"},
		{"/wrapped", false, 404, "no such todo\n"},
		{"/abort", false, 403, "Forbidden\n"},
		{"/unknown", false, 500, "Internal Server Error\n"},
		{"/unknown", true, 500, "query: " + secret.Error() + "\n"},
		{"/cause", false, 502, "upstream down: " + secret.Error() + "\n"},
		{"/late", false, 200, "partial"},
		{"/redirect", false, 303, ""},
	}
	for _, tt := range tests {
		var logs logBuffer
		opts := []web.AppOption{logs.logger()}
		if tt.debug {
			opts = append(opts, web.WithDebug())
		}
		app := newApp(t, opts...)
		app.Get(tt.target, handlers[tt.target])
		rec := do(t, app, "GET", tt.target, "")
		if rec.Code != tt.status || (tt.body != "" && rec.Body.String() != tt.body) {
			t.Errorf("GET %s (debug %t): got %d %q; want %d %q", tt.target, tt.debug, rec.Code, rec.Body.String(), tt.status, tt.body)
		}
		if tt.status == 500 && !strings.Contains(logs.String(), "password authentication failed") {
			t.Errorf("GET %s: the log does not name the cause:\n%s", tt.target, logs.String())
		}
	}
}

func TestErrorfKeepsCause(t *testing.T) {
	cause := errors.New("disk full")
	err := web.Errorf(507, "save: %w", cause)
	if !errors.Is(err, cause) {
		t.Errorf("errors.Is(%v, cause) = false; want true", err)
	}
	var e *web.Error
	if !errors.As(err, &e) || e.Status != 507 || e.Message != "save: disk full" {
		t.Errorf("got %#v; want status 507 and message %q", e, "save: disk full")
	}
}

func TestErrorHandlerOption(t *testing.T) {
	app := newApp(t, web.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
		w.WriteHeader(418)
		_, _ = io.WriteString(w, "custom: "+err.Error())
	}))
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error { return errors.New("boom") })
	rec := do(t, app, "GET", "/", "")
	if rec.Code != 418 || rec.Body.String() != "custom: boom" {
		t.Errorf("got %d %q; want 418 %q", rec.Code, rec.Body.String(), "custom: boom")
	}
}

func TestHandlerFuncOutsideApp(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /x", web.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return web.Errorf(http.StatusTeapot, "short and stout")
	}))
	rec := do(t, mux, "GET", "/x", "")
	if rec.Code != 418 || rec.Body.String() != "short and stout\n" {
		t.Errorf("got %d %q; want 418 %q", rec.Code, rec.Body.String(), "short and stout\n")
	}
}

func TestHandlerFuncOutsideAppAfterTheResponseBegan(t *testing.T) {
	// As in an App: an error after the handler wrote is logged, not
	// appended to the response it already began.
	mux := http.NewServeMux()
	mux.Handle("GET /x", web.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		_, _ = io.WriteString(w, "partial")
		return errors.New("lost the database")
	}))
	rec := do(t, mux, "GET", "/x", "")
	if rec.Code != 200 || rec.Body.String() != "partial" {
		t.Errorf("got %d %q; want 200 %q", rec.Code, rec.Body.String(), "partial")
	}
}

func TestPanicIsA500AndTheServerLives(t *testing.T) {
	var logs logBuffer
	app := newApp(t, logs.logger())
	app.Get("/panic", func(w http.ResponseWriter, r *http.Request) error { panic("nil map somewhere") })
	app.Get("/ok", text("fine"))
	srv := httptest.NewServer(app)
	defer srv.Close()

	for _, tt := range []struct {
		path   string
		status int
		body   string
	}{{"/panic", 500, "Internal Server Error\n"}, {"/ok", 200, "fine"}, {"/panic", 500, "Internal Server Error\n"}} {
		resp, err := srv.Client().Get(srv.URL + tt.path)
		if err != nil {
			t.Fatalf("GET %s: %v", tt.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || string(body) != tt.body {
			t.Errorf("GET %s: got %d %q; want %d %q", tt.path, resp.StatusCode, body, tt.status, tt.body)
		}
	}
	log := logs.String()
	for _, want := range []string{"handler panic", "nil map somewhere", "route=\"GET /panic\"", "goroutine"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestAbortHandlerPanicAbortsTheConnection(t *testing.T) {
	var logs logBuffer
	app := newApp(t, logs.logger())
	app.Get("/abort", func(w http.ResponseWriter, r *http.Request) error { panic(http.ErrAbortHandler) })
	srv := httptest.NewServer(app)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/abort")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got status %d; want the connection aborted", resp.StatusCode)
	}
	if strings.Contains(logs.String(), "handler panic") {
		t.Errorf("http.ErrAbortHandler was logged as a panic:\n%s", logs.String())
	}
}

// TestPanicInADecoratorIsA500 covers every way user code runs outside a
// handler's own recovery, with and without observers (the App serves the
// two differently): a decorator of the route, of the App, and an
// WithErrorHandler rendering a refusal made before the handler runs.
func TestPanicInADecoratorIsA500(t *testing.T) {
	panicky := web.WithDecorators(func(http.Handler) http.Handler {
		return http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("decorator bug") })
	})
	tests := []struct {
		name   string
		app    []web.AppOption
		route  []web.RouteOption
		method string
		body   string
	}{
		{"route decorator", nil, []web.RouteOption{panicky}, "GET", ""},
		{"app decorator", []web.AppOption{panicky}, nil, "GET", ""},
		{"error handler", []web.AppOption{web.WithErrorHandler(func(http.ResponseWriter, *http.Request, error) {
			panic("decorator bug")
		})}, []web.RouteOption{web.WithBodyLimit(4)}, "POST", "too long"},
	}
	for _, tt := range tests {
		for _, observed := range []bool{false, true} {
			var logs logBuffer
			opts := []web.AppOption{logs.logger()}
			if observed {
				opts = append(opts, web.WithAccessLog())
			}
			app := newApp(t, append(opts, tt.app...)...)
			app.Handle(tt.method, "/", text("unreachable"), tt.route...)
			rec := do(t, app, tt.method, "/", tt.body)
			if rec.Code != 500 || rec.Body.String() != "Internal Server Error\n" {
				t.Errorf("%s, observed %v: got %d %q; want 500", tt.name, observed, rec.Code, rec.Body.String())
			}
			if !strings.Contains(logs.String(), "decorator bug") {
				t.Errorf("%s, observed %v: log lacks the panic:\n%s", tt.name, observed, logs.String())
			}
		}
	}
}
