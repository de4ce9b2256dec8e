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

// sized is a GET whose request line and headers, up to and including the
// empty line that ends them, are exactly total bytes.
func sized(total int) string {
	const head, tail = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: ", "\r\n\r\n"
	return head + strings.Repeat("a", total-len(head)-len(tail)) + tail
}

// TestHeaderLimitEdge: with a MaxHeaderBytes of its own, a server takes a
// request whose line and headers are exactly the limit (MaxHeaderBytes + 4
// KiB) and refuses one a byte longer with 431, on both engines, whether the
// bytes come in one write or a few at a time.
func TestHeaderLimitEdge(t *testing.T) {
	const maxHeader = 1000
	const limit = maxHeader + 4096
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithServerConfig(func(s *http.Server) { s.MaxHeaderBytes = maxHeader }))
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error { return nil })
			base, _ := webtest.Serve(t, app)
			addr := strings.TrimPrefix(base, "http://")
			for _, tt := range []struct {
				total int
				want  string
			}{{limit - 1, "HTTP/1.1 200 OK"}, {limit, "HTTP/1.1 200 OK"}, {limit + 1, "HTTP/1.1 431"}} {
				if got := statusOf(t, addr, sized(tt.total)); !strings.HasPrefix(got, tt.want) {
					t.Errorf("%d bytes in one write: got %q; want %q", tt.total, got, tt.want)
				}
				if got := trickledStatus(t, addr, sized(tt.total), 1000); !strings.HasPrefix(got, tt.want) {
					t.Errorf("%d bytes in writes of 1000: got %q; want %q", tt.total, got, tt.want)
				}
			}
		})
	}
}

// trickledStatus sends raw in writes of step bytes, each after the server
// had time to read the one before, and returns the status line of the
// answer.
func trickledStatus(t *testing.T, addr, raw string, step int) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetNoDelay(true)
	}
	go func() {
		for i := 0; i < len(raw); i += step {
			if _, err := io.WriteString(c, raw[i:min(i+step, len(raw))]); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "closed"
	}
	return strings.TrimSpace(line)
}

// TestStalledBodyCutOff sends headers and half a declared body, then
// stalls: both engines close the connection after the body timeout.
func TestStalledBodyCutOff(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			// A header timeout longer than the test's patience: the body's
			// is counted from the end of the headers, not within theirs.
			app := newApp(t, eng.engine, web.WithBodyTimeout(200*time.Millisecond),
				web.WithServerConfig(func(s *http.Server) { s.ReadHeaderTimeout = time.Minute }))
			app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.ReadAll(r.Body)
				return err
			})
			base, _ := webtest.Serve(t, app)
			c := webtest.Dial(t, base)
			if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhalf"); err != nil {
				t.Fatal(err)
			}
			_, err := io.ReadAll(c) // a 408 or nothing, then the close
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
			app := newApp(t, eng.engine, web.WithServerConfig(func(s *http.Server) { s.IdleTimeout = 200 * time.Millisecond }))
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error { return nil })
			base, _ := webtest.Serve(t, app)
			c := webtest.Dial(t, base)
			if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
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

// TestHandlerOutlivesIdleTimeout: the idle timeout is for the wait between
// requests; a handler that takes longer still answers, on both engines.
func TestHandlerOutlivesIdleTimeout(t *testing.T) {
	const idle = 100 * time.Millisecond
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithServerConfig(func(s *http.Server) { s.IdleTimeout = idle }))
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error { return nil })
			app.Get("/slow", func(w http.ResponseWriter, r *http.Request) error {
				time.Sleep(5 * idle)
				_, err := io.WriteString(w, "done")
				return err
			})
			base, _ := webtest.Serve(t, app)
			// Sent together: the first response arms the idle timeout while
			// the second, slow, request is with the handler.
			got := rawHead(t, base, "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /slow HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
			if strings.Count(got, "HTTP/1.1 200 OK\r\n") != 2 || !strings.HasSuffix(got, "\r\n\r\ndone") {
				t.Errorf("GET / then GET /slow: got %q; want two 200s, the second with \"done\"", got)
			}
		})
	}
}

// TestManyConnectionsLeakNothing opens and closes 10,000 connections, each
// sending one request or nothing, and wants goroutines, file descriptors
// and the heap back where they were (within a small margin for runtime
// helpers and pools).
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
			heap := func() uint64 {
				var m runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m)
				return m.HeapAlloc
			}
			g0, f0 := settle()
			h0 := heap()
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
			// nbio's engine keeps a request's goroutine parked for the next
			// request for a while (workerIdle, 50 ms), then ends it: wait.
			for end := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > g0+5 && time.Now().Before(end); {
				time.Sleep(50 * time.Millisecond)
			}
			g1, f1 := settle()
			h1 := heap()
			if g1 > g0+5 || f1 > f0+5 {
				t.Errorf("after %d connections: got %d goroutines, %d fds; want at most 5 more than the %d, %d before", conns, g1, f1, g0, f0)
			}
			// A connection's state is a few hundred bytes: 10,000 kept
			// would be megabytes. Pools (nbio's buffers) may keep a few.
			if h1 > h0+2<<20 {
				t.Errorf("after %d connections: heap %d bytes; want at most 2 MiB more than the %d before", conns, h1, h0)
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

// TestPipelinedRequests sends several requests in one write — bodies
// declared and chunked among them — and wants every answer, in order, on
// both engines: the engine feeds nbio's parser a request part at a time.
func TestPipelinedRequests(t *testing.T) {
	raw := "GET /echo?n=1 HTTP/1.1\r\nHost: a\r\n\r\n" +
		"POST /echo?n=2 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" +
		"GET /echo?n=3 HTTP/1.1\r\nHost: a\r\n\r\n" +
		"POST /echo?n=4 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" +
		"GET /echo?n=5 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
	want := []string{"1:", "2:hello", "3:", "4:abc", "5:"}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			echo := func(w http.ResponseWriter, r *http.Request) error {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					return err
				}
				_, err = io.WriteString(w, r.URL.Query().Get("n")+":"+string(b))
				return err
			}
			app.Get("/echo", echo)
			app.Post("/echo", echo)
			base, _ := webtest.Serve(t, app)
			c := webtest.Dial(t, base)
			if _, err := io.WriteString(c, raw); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			for i, w := range want {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("response %d: %v", i+1, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(b) != w {
					t.Errorf("response %d: got %d %q; want 200 %q", i+1, resp.StatusCode, b, w)
				}
			}
		})
	}
}
