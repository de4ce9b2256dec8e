package web_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

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

// TestServerWriteTimeoutIsNetHTTPs: a WriteTimeout set through
// WithServerConfig stays net/http's, a deadline for the whole response that
// the App's WithWriteTimeout does not re-arm: a client reading 12 MiB at
// 3 MiB/s, which takes seconds, gets part of it. (server.go, Serve's
// srv.WriteTimeout <= 0.)
func TestServerWriteTimeoutIsNetHTTPs(t *testing.T) {
	const size = 12 << 20
	app := newApp(t, web.WithWriteTimeout(time.Minute),
		web.WithServerConfig(func(s *http.Server) { s.WriteTimeout = 300 * time.Millisecond }))
	app.Get("/big", func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write(make([]byte, size))
		return err
	})
	url, _ := serveApp(t, app)
	if got, took := webtest.ReadSlowly(t, url, "/big", 20*time.Millisecond); got >= size {
		t.Errorf("GET /big: read %d bytes in %v; want the response cut by the server's 300ms WriteTimeout", got, took)
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

// TestReadFromEndsAtTheFilesEnd: a handler that copies a file of several
// write chunks with io.Copy, its length declared, hands the response
// connection a reader without a limit (no io.LimitedReader), so the
// chunked ReadFrom that re-arms the write timeout can end only at the
// file's end, on the first short chunk (writetimeout.go, ReadFrom's
// n < chunk). Without it the copy never returns.
func TestReadFromEndsAtTheFilesEnd(t *testing.T) {
	const chunk = 16 << 10
	defer web.SetWriteChunk(chunk)()
	const size = 2*chunk + 1000
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i % 251)
	}
	path := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	copied := make(chan error, 1)
	app := newApp(t)
	app.Get("/f", func(w http.ResponseWriter, r *http.Request) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		w.Header().Set("Content-Length", strconv.Itoa(size))
		_, err = io.Copy(w, f)
		copied <- err
		return err
	})
	url, _ := serveApp(t, app)
	resp, err := http.Get(url + "/f")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, %v; want the file's %d", len(got), err, size)
	}
	select {
	case err := <-copied:
		if err != nil {
			t.Errorf("io.Copy: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's io.Copy had not returned 10 s after the whole file arrived")
	}
}
