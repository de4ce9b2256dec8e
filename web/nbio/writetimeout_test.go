package nbio_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// TestWriteTimeoutRestartsOnProgress has a client read large responses
// slowly, pausing far less than the write timeout between reads but taking
// more than two timeouts in all: it gets all of them on both engines — a
// body written whole and a static file sent with sendfile. A write timeout
// counted from the request, or not re-armed as the bytes move, cuts it off.
func TestWriteTimeoutRestartsOnProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a few seconds")
	}
	// Far above the client's pauses, so that a test goroutine starved on a
	// loaded machine is not taken for a client that stopped reading.
	const timeout = 1500 * time.Millisecond
	const pause = 20 * time.Millisecond
	const size = 12 << 20
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithWriteTimeout(timeout))
			app.Get("/big", func(w http.ResponseWriter, r *http.Request) error {
				_, err := w.Write(make([]byte, size))
				return err
			})
			app.Static("/files/", os.DirFS(dir))
			base, _ := webtest.Serve(t, app)
			for _, path := range []string{"/big", "/files/big.bin"} {
				// About 3.8 s in all at 64 KiB per 20 ms.
				if got, took := webtest.ReadSlowly(t, base, path, pause); got < size {
					t.Errorf("GET %s: read %d bytes in %v; want the whole %d-byte body and its headers", path, got, took, size)
				}
			}
		})
	}
}

// TestWriteTimeoutEndsAStalledResponse has a client ask for far more than
// the socket buffers hold and never read: on both engines the handler's
// write fails (net/http: the deadline; nbio: the connection closed by the
// write timeout) instead of blocking for ever, and the connection is
// closed. Without the write timeout the handler never returns.
func TestWriteTimeoutEndsAStalledResponse(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithWriteTimeout(timeout))
			handled := make(chan error, 1)
			chunk := make([]byte, 64<<10)
			app.Get("/huge", func(w http.ResponseWriter, r *http.Request) error {
				for range 1 << 14 { // 1 GiB
					if _, err := w.Write(chunk); err != nil {
						handled <- err
						return err
					}
				}
				handled <- nil
				return nil
			})
			base, _ := webtest.Serve(t, app)
			conn := webtest.Dial(t, base)
			if tcp, ok := conn.(*net.TCPConn); ok {
				_ = tcp.SetReadBuffer(4 << 10)
			}
			if _, err := io.WriteString(conn, "GET /huge HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			// The client never reads.
			select {
			case err := <-handled:
				if err == nil {
					t.Fatal("the handler wrote 1 GiB to a client that does not read")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the handler was still writing to a client that does not read after 30s")
			}
		})
	}
}

// TestWriteTimeoutSparesIdleConnections: a kept-alive connection that has
// had its responses — a file among them — waits idle for longer than the
// write timeout and serves the next request, on both engines. A write
// timeout that counted bytes it never saw written would take the idle
// connection for a stalled one.
func TestWriteTimeoutSparesIdleConnections(t *testing.T) {
	const timeout = 100 * time.Millisecond
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(strings.Repeat("static ", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithWriteTimeout(timeout))
			app.Static("/files/", os.DirFS(dir))
			app.Get("/hello", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, "hello")
				return err
			})
			base, _ := webtest.Serve(t, app)
			conn := webtest.Dial(t, base)
			br := bufio.NewReader(conn)
			for i, path := range []string{"/files/a.txt", "/hello", "/files/a.txt", "/hello"} {
				if i > 0 {
					time.Sleep(5 * timeout)
				}
				if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
					t.Fatalf("request %d, GET %s: %v", i, path, err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("request %d, GET %s, after %v idle: %v", i, path, 5*timeout, err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("request %d, GET %s: got %d; want 200", i, path, resp.StatusCode)
				}
			}
		})
	}
}

// TestNoWriteTimeoutSparesAStalledReader: with WithWriteTimeout(0), a
// client that stops reading a large response for 2.5 s, past two sweeps of
// the timeouts, then reads on gets all of it, on both engines. (sweep.go,
// the sweep's s.writeTimeout > 0.)
func TestNoWriteTimeoutSparesAStalledReader(t *testing.T) {
	const size = 16 << 20
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			app := newApp(t, eng.engine, web.WithWriteTimeout(0))
			app.Get("/big", func(w http.ResponseWriter, r *http.Request) error {
				_, err := w.Write(make([]byte, size))
				return err
			})
			base, _ := webtest.Serve(t, app)
			c := webtest.Dial(t, base)
			if _, err := io.WriteString(c, "GET /big HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2500 * time.Millisecond)
			n, err := io.Copy(io.Discard, resp.Body)
			if n != size || err != nil {
				t.Errorf("after a 2.5s stall: read %d bytes, %v; want %d", n, err, size)
			}
		})
	}
}
