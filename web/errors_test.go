package web_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
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

// TestErrorsInJSON: a client that asks for JSON (Accept) or sends it
// (Content-Type) gets its error as a JSON object; any other gets text.
func TestErrorsInJSON(t *testing.T) {
	app := newApp(t)
	app.Post("/", func(w http.ResponseWriter, r *http.Request) error { return web.Errorf(http.StatusConflict, "taken") })
	for _, tc := range []struct {
		header, value string
		json          bool
	}{
		{"Accept", "application/json", true},
		{"Accept", "text/html, application/json;q=0.9", true},
		{"Content-Type", "application/json; charset=utf-8", true},
		{"Accept", "text/plain", false},
		{"Content-Type", "text/plain", false},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x"))
		req.Header.Set(tc.header, tc.value)
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		body := "taken\n"
		if tc.json {
			body = `{"error":"taken"}` + "\n"
		}
		if rec.Code != http.StatusConflict || rec.Body.String() != body {
			t.Errorf("%s: %s: got %d %q; want 409 %q", tc.header, tc.value, rec.Code, rec.Body.String(), body)
		}
	}
}

// TestErrorLogLevels: an error the client caused (it left, or stopped
// reading) is logged at Debug and nothing more is written; any other
// error after the response began is logged at Error.
func TestErrorLogLevels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		write   bool // the handler writes part of a response first
		leave   bool // the client leaves during the handler
		err     error
		level   string
		message string
	}{
		{"error after the response began", true, false, errors.New("too late"), "ERROR", "handler error after response began"},
		{"client not reading", true, false, fmt.Errorf("write: %w", os.ErrDeadlineExceeded), "DEBUG", "client gone or not reading"},
		{"client gone after the response began", true, true, errors.New("write failed"), "DEBUG", "client gone or not reading"},
		{"client gone at its deadline", false, true, context.DeadlineExceeded, "DEBUG", "client gone"},
		{"client gone, cancelled", false, true, context.Canceled, "DEBUG", "client gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			app := newApp(t, web.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
				if tc.write {
					_, _ = io.WriteString(w, "partial")
				}
				if tc.leave {
					cancel()
				}
				return tc.err
			})
			req := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, req)
			want := fmt.Sprintf("level=%s msg=%q", tc.level, tc.message)
			if got := logs.String(); !strings.Contains(got, want) || (tc.level != "ERROR" && strings.Contains(got, "level=ERROR")) {
				t.Errorf("log:\n%s\nwant a line with %s and none at ERROR", got, want)
			}
			if body := rec.Body.String(); !tc.write && body != "" {
				t.Errorf("body %q after the client left; want nothing written", body)
			}
		})
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

// TestInvalidStatusIsA500: a status that is not three digits panics in
// net/http's writer; the App answers 500, since nothing was sent.
func TestInvalidStatusIsA500(t *testing.T) {
	app := newApp(t)
	for _, code := range []int{99, 1000} {
		app.Get("/"+strconv.Itoa(code), func(w http.ResponseWriter, r *http.Request) error {
			w.WriteHeader(code)
			return nil
		})
	}
	srv := httptest.NewServer(app)
	defer srv.Close()
	for _, code := range []int{99, 1000} {
		resp, err := srv.Client().Get(srv.URL + "/" + strconv.Itoa(code))
		if err != nil {
			t.Fatalf("WriteHeader(%d): %v", code, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError {
			t.Errorf("WriteHeader(%d): got %d; want 500", code, resp.StatusCode)
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

// TestErrorText checks *Error's text: the message, then the wrapped
// error's text unless it says the same. (error.go, Error.)
func TestErrorText(t *testing.T) {
	tests := []struct {
		err  *web.Error
		want string
	}{
		{&web.Error{Status: 400, Message: "bad name"}, "bad name"},
		{&web.Error{Status: 400, Message: "bad name", Err: errors.New("too long")}, "bad name: too long"},
		{&web.Error{Status: 400, Message: "bad name", Err: errors.New("bad name")}, "bad name"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%#v.Error(): got %q; want %q", tt.err, got, tt.want)
		}
	}
}

// TestServerErrorsAreLoggedFromStatus500 checks the edge of the Error-level
// log line: a returned *Error of 500 is logged as an error, one of 499 is
// not. (handler.go, status >= 500.)
func TestServerErrorsAreLoggedFromStatus500(t *testing.T) {
	for _, tt := range []struct {
		status int
		logged bool
	}{
		{http.StatusInternalServerError, true},
		{http.StatusInternalServerError - 1, false},
	} {
		var logs logBuffer
		app := newApp(t, logs.logger())
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
			return &web.Error{Status: tt.status, Message: "m"}
		})
		do(t, app, "GET", "/", "")
		if got := strings.Contains(logs.String(), "level=ERROR"); got != tt.logged {
			t.Errorf("handler returned a %d: logged at Error %t; want %t\n%s", tt.status, got, tt.logged, logs.String())
		}
	}
}

// TestClientGoneIsNotAnError has a handler fail with its request's context
// error after the client left, as a database query does: nothing is logged
// at Error level, the access log and observers see 499, and a debug line
// says what happened.
func TestClientGoneIsNotAnError(t *testing.T) {
	var logs logBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	app := newApp(t, web.WithLogger(logger), web.WithAccessLog())
	var observed recorder
	app.Observe(&observed)
	entered := make(chan struct{})
	app.Get("/todos", func(w http.ResponseWriter, r *http.Request) error {
		close(entered)
		<-r.Context().Done() // a query waiting on the database
		return fmt.Errorf("list todos: %w", r.Context().Err())
	})
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest("GET", "/todos", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		app.ServeHTTP(rec, req)
	}()
	<-entered
	cancel()
	<-done
	log := logs.String()
	if strings.Contains(log, "level=ERROR") {
		t.Errorf("a client that left was logged as an error:\n%s", log)
	}
	for _, want := range []string{"level=DEBUG", "list todos: context canceled", "status=499"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if got := observed.last().Status; got != web.StatusClientClosed {
		t.Errorf("observed status %d; want %d", got, web.StatusClientClosed)
	}
	if rec.Body.Len() != 0 {
		t.Errorf("wrote %q to a client that had gone; want nothing", rec.Body.String())
	}

	// The same error while the client is still there is a server error.
	logs.buf.Reset()
	app.Get("/own", func(w http.ResponseWriter, r *http.Request) error {
		return fmt.Errorf("list todos: %w", context.Canceled)
	})
	if rec := do(t, app, "GET", "/own", ""); rec.Code != 500 || !strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("context.Canceled of the handler's own: got %d, log:\n%s; want 500 and an ERROR line", rec.Code, logs.String())
	}
}

// recorder is an Observer that keeps the responses it is told about.
type recorder struct {
	responses chan web.Response
}

func (o *recorder) Observe(r *http.Request, resp web.Response) {
	if o.responses == nil {
		o.responses = make(chan web.Response, 16)
	}
	o.responses <- resp
}

func (o *recorder) last() web.Response {
	var last web.Response
	for {
		select {
		case last = <-o.responses:
		default:
			return last
		}
	}
}
