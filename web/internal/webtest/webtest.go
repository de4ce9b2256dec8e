// Package webtest holds the helpers web's tests and its sub-packages'
// (web/metrics, web/websocket, web/nbio) share: an App that cleans up after
// itself, one request served in memory, an App served on a loopback port, a
// raw connection to it, a request in the background, a WebSocket echo.
package webtest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// NewApp returns an App on a virtual executor of its own that logs nothing,
// with opts after those two. It fails t if web.New does, and shuts the App,
// then the executor, down at t's cleanup.
func NewApp(t testing.TB, opts ...web.AppOption) *web.App {
	t.Helper()
	e := loom.Virtual()
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	quiet := web.WithLogger(slog.New(slog.DiscardHandler))
	app, err := web.New(append([]web.AppOption{web.WithExecutor(e), quiet}, opts...)...)
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

// Serve serves app on a free loopback port until t's cleanup and returns
// its base URL, "http://127.0.0.1:port", and stop, which ends Serve's
// context, waits for Serve to return and returns its error. stop may be
// called more than once; each call returns that first error.
func Serve(t *testing.T, app *web.App) (url string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx, ln) }()
	stopped := false
	var result error
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			result = <-served
		}
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + ln.Addr().String(), stop
}

// Dial opens a raw TCP connection to the server at url (as Serve returns
// it), closed when t ends, with a deadline 20 s away for all it says and
// hears: long after any server under test should have answered or cut it.
func Dial(t testing.TB, url string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return c
}

// Echo is a web/websocket handler that sends every message back, of the
// type it came as, until reading or writing fails; it returns that error.
func Echo(ctx context.Context, c *websocket.Conn, r *http.Request) error {
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return err
		}
		if err := c.Write(ctx, typ, msg); err != nil {
			return err
		}
	}
}

// A Result is what a request got: its status and body, or the error that
// ended it.
type Result struct {
	Status int
	Body   string
	Err    error
}

// GetAsync starts a GET of url on client and returns at once; the channel
// gets the Result when the response has been read to its end.
func GetAsync(client *http.Client, url string) <-chan Result {
	got := make(chan Result, 1)
	go func() {
		resp, err := client.Get(url)
		if err != nil {
			got <- Result{Err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- Result{resp.StatusCode, string(b), err}
	}()
	return got
}

// ReadSlowly sends GET path to the server at url (http://host:port) on a
// connection of its own with a 64 KiB receive buffer, and reads the answer
// 64 KiB at a time, sleeping pause between reads, until the server closes
// the connection. It returns how many bytes arrived, head included, and how
// long that took: a slow client that never stops reading, for write-timeout
// tests.
func ReadSlowly(t *testing.T, url, path string, pause time.Duration) (got int, took time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetReadBuffer(64 << 10)
	}
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	buf := make([]byte, 64<<10)
	for {
		n, err := conn.Read(buf)
		got += n
		if err != nil {
			return got, time.Since(start)
		}
		time.Sleep(pause)
	}
}
