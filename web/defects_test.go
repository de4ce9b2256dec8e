package web_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// TestStaticRefusesNUL checks the guard itself: the MapFS holds a name with
// a NUL byte (fs.ValidPath allows it), so without the guard it is served.
// From a directory, os.Root refuses such a name with EINVAL, which was a 500
// and an ERROR line; now both are a 404.
func TestStaticRefusesNUL(t *testing.T) {
	var logs logBuffer
	app := newApp(t, logs.logger())
	app.Static("/map/", fstest.MapFS{
		"index.html\x00":     {Data: []byte("nul name")},
		"index.html":         {Data: []byte("home")},
		"dir\x00/index.html": {Data: []byte("nul dir")},
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("home"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	app.Static("/dir/", root.FS())
	srv := httptest.NewServer(app)
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	tests := []struct {
		target string
		status int
	}{
		{"/map/index.html", 200},
		{"/map/index.html%00", 404},
		{"/map/dir%00/index.html", 404},
		{"/map/dir%00/", 404},
		{"/dir/index.html", 200},
		{"/dir/index.html%00", 404},
		{"/dir/%00", 404},
	}
	for _, tt := range tests {
		if status, _, body := rawGet(t, addr, tt.target); status != tt.status {
			t.Errorf("GET %s: got %d %q; want %d", tt.target, status, body, tt.status)
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a NUL in a path was logged as an error:\n%s", logs.String())
	}
}

// TestStaticRefusesDotfiles checks that names with an element that begins
// with "." are refused by default, at the root and nested, from a directory
// and from Files, and served with WithDotfiles.
func TestStaticRefusesDotfiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		".env":                  "SECRET=1",
		".git/config":           "[core]",
		".well-known/security":  "contact",
		"docs/.hidden":          "hidden",
		"docs/.private/a.txt":   "private",
		"ok.txt":                "ok",
		"docs/file.with.dot.js": "dots",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	app := newApp(t)
	app.Static("/s/", root.FS())
	app.Static("/open/", root.FS(), web.WithDotfiles())
	app.Group("/g", web.WithDotfiles()).Static("/open/", root.FS())
	app.Get("/files/{name...}", web.Files(root.FS(), "name"))
	app.Get("/openfiles/{name...}", web.Files(root.FS(), "name", web.WithDotfiles()))
	srv := httptest.NewServer(app)
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	tests := []struct {
		path   string
		hidden bool // refused unless dotfiles are allowed
		body   string
	}{
		{".env", true, "SECRET=1"},
		{".git/config", true, "[core]"},
		{".well-known/security", true, "contact"},
		{"docs/.hidden", true, "hidden"},
		{"docs/.private/a.txt", true, "private"},
		{"%2eenv", true, "SECRET=1"},
		{"ok.txt", false, "ok"},
		{"docs/file.with.dot.js", false, "dots"},
	}
	for _, tt := range tests {
		for _, prefix := range []string{"/s/", "/files/", "/open/", "/g/open/", "/openfiles/"} {
			allowed := strings.Contains(prefix, "open")
			status, _, body := rawGet(t, addr, prefix+tt.path)
			switch {
			case tt.hidden && !allowed && status != 404:
				t.Errorf("GET %s%s: got %d %q; want 404", prefix, tt.path, status, body)
			case (!tt.hidden || allowed) && (status != 200 || body != tt.body):
				t.Errorf("GET %s%s: got %d %q; want 200 %q", prefix, tt.path, status, body, tt.body)
			}
		}
	}
}

// hugeResponse writes 1 GiB, more than any socket buffer holds, and sends
// its write's error (nil if all of it went) on handled.
func hugeResponse(handled chan<- error) web.HandlerFunc {
	chunk := make([]byte, 64<<10)
	return func(w http.ResponseWriter, r *http.Request) error {
		for range 1 << 14 {
			if _, err := w.Write(chunk); err != nil {
				handled <- err
				return err
			}
		}
		handled <- nil
		return nil
	}
}

// dialSmallBuffer connects to url's host with a 4 KiB receive buffer, for
// a client that stops reading, and closes the connection at t's cleanup.
func dialSmallBuffer(t *testing.T, url string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetReadBuffer(4 << 10)
	}
	return conn
}

// wantDeadlineExceeded waits up to 30s for hugeResponse's write error and
// fails t unless it matches os.ErrDeadlineExceeded; stalled says what was
// still going on when the 30s ran out.
func wantDeadlineExceeded(t *testing.T, handled <-chan error, stalled string) {
	t.Helper()
	select {
	case err := <-handled:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("handler's write: got %v; want an error matching os.ErrDeadlineExceeded", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s after 30s", stalled)
	}
}

// TestWriteTimeoutEndsAStalledResponse has a client ask for a response far
// larger than the socket buffers and never read it: the handler's write
// must fail with a deadline error instead of blocking for ever. Without the
// write timeout the handler never returns and the test fails at its bound.
func TestWriteTimeoutEndsAStalledResponse(t *testing.T) {
	const timeout = 200 * time.Millisecond
	var logs logBuffer
	app := newApp(t, logs.logger(), web.WithWriteTimeout(timeout))
	handled := make(chan error, 1)
	app.Get("/huge", hugeResponse(handled))
	url, _ := serveApp(t, app)
	conn := dialSmallBuffer(t, url)
	if _, err := io.WriteString(conn, "GET /huge HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The client never reads.
	wantDeadlineExceeded(t, handled, "the handler was still writing to a client that does not read")
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a client that stopped reading was logged as an error:\n%s", logs.String())
	}
}

// TestWriteTimeoutHoldsOnAKeptAliveConnection asks for a small response
// and then, on the same connection and at once, for a huge one it never
// reads. net/http clears the write deadline after every response; a
// connection that let it, and re-arms only once a quarter of the timeout
// has passed, would write the second response with no deadline at all and
// its handler would block for ever.
func TestWriteTimeoutHoldsOnAKeptAliveConnection(t *testing.T) {
	const timeout = 2 * time.Second // re-armed every 500ms: both requests fall in one quarter
	app := newApp(t, web.WithWriteTimeout(timeout))
	handled := make(chan error, 1)
	app.Get("/small", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "small")
		return err
	})
	app.Get("/huge", hugeResponse(handled))
	url, _ := serveApp(t, app)
	conn := dialSmallBuffer(t, url)
	if _, err := io.WriteString(conn, "GET /small HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "small" {
		t.Fatalf("GET /small: got %q, %v; want \"small\"", body, err)
	}
	if _, err := io.WriteString(conn, "GET /huge HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The client never reads.
	wantDeadlineExceeded(t, handled, "the second response on a kept-alive connection was still being written to a client that does not read")
}

// TestWriteTimeoutRestartsOnProgress has a client read a response slowly,
// pausing for less than the timeout between reads but taking several
// timeouts in all: it gets all of it.
func TestWriteTimeoutRestartsOnProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a few seconds")
	}
	// The timeout is far above the client's pauses, so that a test
	// goroutine starved for a while on a loaded machine is not taken for a
	// client that stopped reading; the whole read still takes over two
	// timeouts.
	const timeout = 1500 * time.Millisecond
	const pause = 20 * time.Millisecond
	const size = 12 << 20
	// Steps of 16 KiB rather than 256 KiB: each step then needs a single
	// read of the client's within 3/4 of the timeout, so a client starved
	// for a second on a loaded machine (seen: 10 of 12 MiB read in 5.8 s)
	// is not cut off, while without re-arming the whole read, over two
	// timeouts long, still is.
	defer web.SetWriteChunk(16 << 10)()
	app := newApp(t, web.WithWriteTimeout(timeout))
	app.Get("/big", func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write(make([]byte, size))
		return err
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	app.Static("/files/", root.FS()) // sendfile: ReadFrom in chunks
	url, _ := serveApp(t, app)

	for _, path := range []string{"/big", "/files/big.bin"} {
		// About 3.8 s in all at 64 KiB per 20 ms; every pause is far below the timeout.
		if got, took := webtest.ReadSlowly(t, url, path, pause); got < size {
			t.Errorf("GET %s: read %d bytes in %v; want the whole %d-byte body and its headers", path, got, took, size)
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
