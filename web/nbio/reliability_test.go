package nbio_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// statusOf sends raw on a new connection and returns the status line of
// the answer, or "closed" when the server closed without one.
func statusOf(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { _, _ = io.WriteString(c, raw) }() // may block on a large request the server refuses
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("no answer and no close in 20s")
		}
		return "closed"
	}
	return strings.TrimSpace(line)
}

// TestMalformedRequests wants the answer net/http gives from both engines.
func TestMalformedRequests(t *testing.T) {
	header := func(n int) string {
		return "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("a", n) + "\r\n\r\n"
	}
	tests := []struct {
		name, raw, want string
	}{
		{"bad request line", "GET\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"bad version", "GET / HTTP/9.x\r\nHost: a\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"duplicate Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "HTTP/1.1 400 Bad Request"},
		// Both drop the length and read the chunked body (RFC 9112 6.3).
		{"Content-Length with chunked", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "HTTP/1.1 200 OK"},
		{"unknown transfer coding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", "HTTP/1.1 501 Not Implemented"},
		{"no Host in HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"headers of 512 KiB", header(512 << 10), "HTTP/1.1 200 OK"},
		{"headers over 1 MiB", header(web.DefaultMaxHeaderBytes + 8192), "HTTP/1.1 431 Request Header Fields Too Large"},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			ok := func(w http.ResponseWriter, r *http.Request) error { return nil }
			app.Get("/", ok)
			app.Post("/", ok)
			base, _ := webtest.Serve(t, app)
			addr := strings.TrimPrefix(base, "http://")
			for _, tt := range tests {
				got := statusOf(t, addr, tt.raw)
				// net/http adds the reason to some 400s; the status is what
				// must match.
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("%s: got %q; want %q", tt.name, got, tt.want)
				}
			}
		})
	}
}

// TestStalledBodyCutOff sends headers and half a declared body, then
// stalls: both engines close the connection after the body timeout.
func TestStalledBodyCutOff(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			// A header timeout longer than the test's patience: the body's
			// is counted from the end of the headers, not within theirs.
			app := newApp(t, eng.engine, web.BodyTimeout(200*time.Millisecond),
				web.ConfigureServer(func(s *http.Server) { s.ReadHeaderTimeout = time.Minute }))
			app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.ReadAll(r.Body)
				return err
			})
			base, _ := webtest.Serve(t, app)
			c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhalf"); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			_, err = io.ReadAll(c) // a 408 or nothing, then the close
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("connection still open after 20s; want it closed after the 200ms body timeout")
			}
		})
	}
}

// TestIdleTimeout: a keep-alive connection left idle is closed after the
// idle timeout on both engines.
func TestIdleTimeout(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.ConfigureServer(func(s *http.Server) { s.IdleTimeout = 200 * time.Millisecond }))
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error { return nil })
			base, _ := webtest.Serve(t, app)
			c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_, err = br.ReadByte()
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("idle connection still open after 20s; want it closed after the 200ms idle timeout")
			}
			if err != io.EOF && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
				t.Fatalf("got %v; want the connection closed", err)
			}
		})
	}
}

// TestManyConnectionsLeakNothing opens and closes 10,000 connections, each
// sending one request, and wants goroutines and file descriptors back
// where they were (within a small margin for runtime helpers).
func TestManyConnectionsLeakNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 connections")
	}
	const conns = 10000
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error { return nil })
			base, _ := webtest.Serve(t, app)
			addr := strings.TrimPrefix(base, "http://")
			settle := func() (int, int) {
				var g, f int
				for range 100 { // until they stop falling, at most 5 s
					runtime.GC()
					g2, f2 := runtime.NumGoroutine(), openFDs(t)
					if g2 == g && f2 == f {
						break
					}
					g, f = g2, f2
					time.Sleep(50 * time.Millisecond)
				}
				return g, f
			}
			g0, f0 := settle()
			buf := make([]byte, 512)
			for i := range conns {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatalf("connection %d: %v", i, err)
				}
				if i%2 == 0 { // half say something, half only connect
					_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
					_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
					for {
						if _, err := c.Read(buf); err != nil {
							break
						}
					}
				}
				_ = c.Close()
			}
			g1, f1 := settle()
			if g1 > g0+5 || f1 > f0+5 {
				t.Errorf("after %d connections: got %d goroutines, %d fds; want at most 5 more than the %d, %d before", conns, g1, f1, g0, f0)
			}
		})
	}
}

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}
