package web_test

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// Tests written for mutants of web that lived through a gremlins pass (see
// docs/testing.md): each fails when the line it names is changed.

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

// TestRefusedBodyClosesTheConnection checks that a 413 and a 408, whose
// body may still be arriving, end the connection, and that another error
// status does not. (handler.go, writeStatus.)
func TestRefusedBodyClosesTheConnection(t *testing.T) {
	app := newApp(t, web.WithBodyLimit(10))
	app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.Copy(io.Discard, r.Body)
		return err
	})
	app.Get("/timeout", func(w http.ResponseWriter, r *http.Request) error {
		return &web.Error{Status: http.StatusRequestTimeout}
	})
	url, _ := serveApp(t, app)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, tt := range []struct {
		method, path, body string
		status             int
		closes             bool
	}{
		{"POST", "/", strings.Repeat("x", 11), 413, true},
		{"GET", "/timeout", "", 408, true},
		{"GET", "/missing", "", 404, false},
		{"POST", "/", strings.Repeat("x", 10), 200, false},
	} {
		req, err := http.NewRequest(tt.method, url+tt.path, strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Close != tt.closes {
			t.Errorf("%s %s: got %d, Connection: close %t; want %d, %t", tt.method, tt.path, resp.StatusCode, resp.Close, tt.status, tt.closes)
		}
	}
}

// TestBodyTimeoutZeroSetsNoDeadline checks that WithBodyTimeout(0), for the App
// and for a route, means no deadline on a real connection: a body sent in
// two parts with a pause between them is read whole. (body.go, wrapBody and
// arm: timeout > 0.)
func TestBodyTimeoutZeroSetsNoDeadline(t *testing.T) {
	app := newApp(t, web.WithBodyTimeout(0))
	echo := func(w http.ResponseWriter, r *http.Request) error {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	app.Post("/app", echo)
	app.Post("/route", echo, web.WithBodyTimeout(0), web.WithBodyLimit(100))
	url, _ := serveApp(t, app)
	for _, path := range []string{"/app", "/route"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Length: 4\r\n\r\nab"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // the handler is reading by now, or soon
		if _, err := io.WriteString(conn, "cd"); err != nil {
			t.Fatal(err)
		}
		reply, _ := io.ReadAll(conn)
		conn.Close()
		if !strings.HasPrefix(string(reply), "HTTP/1.1 200") || !strings.HasSuffix(string(reply), "abcd") {
			t.Errorf("POST %s in two parts with WithBodyTimeout(0): got %q; want 200 and abcd", path, reply)
		}
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

// observed records the Responses an Observer is told about.
type observed struct {
	mu    sync.Mutex
	resps []web.Response
}

func (o *observed) Observe(_ *http.Request, resp web.Response) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.resps = append(o.resps, resp)
}

// TestObserversSeeAPanic checks that an Observer is told a handler
// panicked, with the 500 the client got, and that a handler that returns
// normally is not reported as one. (handler.go, logPanic's marking loop.)
func TestObserversSeeAPanic(t *testing.T) {
	app := newApp(t)
	var o observed
	app.Observe(&o)
	app.Get("/panic", func(w http.ResponseWriter, r *http.Request) error { panic("boom") })
	app.Get("/ok", text("ok"))
	for _, tt := range []struct {
		path     string
		status   int
		panicked bool
	}{
		{"/panic", 500, true},
		{"/ok", 200, false},
	} {
		o.mu.Lock()
		o.resps = nil
		o.mu.Unlock()
		do(t, app, "GET", tt.path, "")
		o.mu.Lock()
		resps := slices.Clone(o.resps)
		o.mu.Unlock()
		if len(resps) != 1 || resps[0].Status != tt.status || resps[0].Panicked != tt.panicked {
			t.Errorf("GET %s: observers got %+v; want one Response with status %d, Panicked %t", tt.path, resps, tt.status, tt.panicked)
		}
	}
}

// TestWriteTimeoutZeroRemovesIt checks that WithWriteTimeout(0) means no write
// deadline, not one that has already passed: a response of a few megabytes
// reaches the client whole. (server.go, Serve's d > 0.)
func TestWriteTimeoutZeroRemovesIt(t *testing.T) {
	const size = 4 << 20
	app := newApp(t, web.WithWriteTimeout(0))
	app.Get("/big", func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write(make([]byte, size))
		return err
	})
	url, _ := serveApp(t, app)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url + "/big")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || n != size || err != nil {
		t.Errorf("GET /big with WithWriteTimeout(0): got %d, %d bytes, %v; want 200, %d bytes, nil", resp.StatusCode, n, err, size)
	}
}
