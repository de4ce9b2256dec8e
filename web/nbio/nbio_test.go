package nbio_test

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"go.uber.org/goleak"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
	"github.com/loomrt/loom/web/metrics"
	"github.com/loomrt/loom/web/nbio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// engines are the engines every test runs on: nil is net/http's.
var engines = []struct {
	name   string
	engine web.Engine
}{{"std", nil}, {"nbio", nbio.Engine()}}

func newApp(t testing.TB, e web.Engine, opts ...web.AppOption) *web.App {
	t.Helper()
	opts = append(opts, web.WithoutThreadWatch(), web.WithLogger(slog.New(slog.DiscardHandler)))
	if e != nil {
		opts = append(opts, web.WithEngine(e))
	}
	app, err := web.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// serve serves app on a loopback port until tb ends and returns its URL.
func serve(tb testing.TB, app *web.App) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx, ln) }()
	tb.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			tb.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// client is a client of its own per test, so that its idle connections
// are closed with the test.
func client(t *testing.T) *http.Client {
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// body returns a reader of a response's status and body that fails t on
// an error.
func body(t *testing.T) func(*http.Response, error) (int, string) {
	return func(resp *http.Response, err error) (int, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
}

// TestFeatures runs one request per feature on each engine, over a real
// socket, and wants the same answer from both.
func TestFeatures(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithPprof(), web.WithAccessLog())
			app.Get("/users/{id}", func(w http.ResponseWriter, r *http.Request) error {
				id, err := web.Param(r, "id").Int()
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(w, "user %d", id)
				return err
			})
			type in struct{ N int }
			type out struct{ Double int }
			app.Post("/double", web.JSON(func(r *http.Request, v in) (out, error) { return out{v.N * 2}, nil }))
			app.Post("/form", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, "hello "+web.Form(r, "name").String())
				return err
			})
			app.Get("/cookie", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, "flavour "+web.Cookie(r, "flavour").String())
				return err
			})
			app.Static("/static/", fstest.MapFS{"a.txt": {Data: []byte("static file")}})
			tag := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("X-Tag", "decorated")
					next.ServeHTTP(w, r)
				})
			}
			app.Get("/decorated", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, "inside")
				return err
			}, web.WithDecorators(tag))
			app.Get("/gzip", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, strings.Repeat("compress me ", 200))
				return err
			}, web.WithDecorators(web.Compress))
			app.Get("/panic", func(w http.ResponseWriter, r *http.Request) error { panic("boom") })
			base, stop := webtest.Serve(t, app)
			c := client(t)

			tests := []struct {
				name       string
				req        func() (*http.Response, error)
				wantStatus int
				wantBody   string
			}{
				{"params", func() (*http.Response, error) { return c.Get(base + "/users/42") }, 200, "user 42"},
				{"bad param", func() (*http.Response, error) { return c.Get(base + "/users/x") }, 400, ""},
				{"not found", func() (*http.Response, error) { return c.Get(base + "/nope") }, 404, ""},
				{"json", func() (*http.Response, error) {
					return c.Post(base+"/double", "application/json", strings.NewReader(`{"N":21}`))
				}, 200, `{"Double":42}` + "\n"},
				{"form", func() (*http.Response, error) {
					return c.PostForm(base+"/form", url.Values{"name": {"ada"}})
				}, 200, "hello ada"},
				{"cookie", func() (*http.Response, error) {
					req, _ := http.NewRequest("GET", base+"/cookie", nil)
					req.AddCookie(&http.Cookie{Name: "flavour", Value: "oat"})
					return c.Do(req)
				}, 200, "flavour oat"},
				{"static", func() (*http.Response, error) { return c.Get(base + "/static/a.txt") }, 200, "static file"},
				{"panic", func() (*http.Response, error) { return c.Get(base + "/panic") }, 500, ""},
				{"pprof", func() (*http.Response, error) { return c.Get(base + "/debug/pprof/cmdline") }, 200, ""},
			}
			for _, tt := range tests {
				status, got := body(t)(tt.req())
				if status != tt.wantStatus || (tt.wantBody != "" && got != tt.wantBody) {
					t.Errorf("%s: got %d %q; want %d %q", tt.name, status, got, tt.wantStatus, tt.wantBody)
				}
			}

			resp, err := c.Get(base + "/decorated")
			if _, got := body(t)(resp, err); resp.Header.Get("X-Tag") != "decorated" || got != "inside" {
				t.Errorf("decorator: got X-Tag %q body %q; want decorated, inside", resp.Header.Get("X-Tag"), got)
			}

			req, _ := http.NewRequest("GET", base+"/gzip", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err = c.Do(req)
			_, zipped := body(t)(resp, err)
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("compression: got Content-Encoding %q; want gzip", resp.Header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(strings.NewReader(zipped))
			if err != nil {
				t.Fatal(err)
			}
			plain, _ := io.ReadAll(zr)
			if string(plain) != strings.Repeat("compress me ", 200) {
				t.Errorf("compression: got %d bytes after gunzip; want %d", len(plain), 12*200)
			}
			if err := stop(); err != nil {
				t.Errorf("Serve: got %v; want nil", err)
			}
		})
	}
}

// TestStreamingFlush wants a flushed part to reach the client while the
// handler still runs, on both engines.
func TestStreamingFlush(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			release := make(chan struct{})
			app.Get("/stream", func(w http.ResponseWriter, r *http.Request) error {
				_, _ = io.WriteString(w, "first\n")
				if err := http.NewResponseController(w).Flush(); err != nil {
					return err
				}
				<-release
				_, err := io.WriteString(w, "second\n")
				return err
			})
			base, _ := webtest.Serve(t, app)
			resp, err := client(t).Get(base + "/stream")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			close(release)
			if err != nil || line != "first\n" {
				t.Fatalf("got %q, %v before the handler ended; want \"first\\n\"", line, err)
			}
		})
	}
}

// TestSlowHeadersCutOff: a client that connects and says nothing, one that
// sends half a request line and stops, and one that trickles its headers a
// byte at a time without end are all cut off by the read-header timeout,
// on both engines (net/http counts it from the connection's opening for
// the first request).
func TestSlowHeadersCutOff(t *testing.T) {
	clients := []struct {
		name string
		talk func(c net.Conn)
	}{
		{"silent", func(net.Conn) {}},
		{"stalled", func(c net.Conn) { _, _ = io.WriteString(c, "GET / HT") }},
		{"trickling", func(c net.Conn) {
			go func() {
				line := "GET / HTTP/1.1\r\nX-Long: " + strings.Repeat("a", 1<<20)
				for i := 0; i < len(line); i++ {
					if _, err := io.WriteString(c, line[i:i+1]); err != nil {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
		}},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithBodyTimeout(0), web.WithServerConfig(func(s *http.Server) {
				s.ReadHeaderTimeout = 200 * time.Millisecond
			}))
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error { return nil })
			base, _ := webtest.Serve(t, app)
			for _, cl := range clients {
				conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
				if err != nil {
					t.Fatal(err)
				}
				cl.talk(conn)
				// The server must end it long before this deadline.
				_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
				_, err = io.ReadAll(conn)
				conn.Close()
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Errorf("%s client: connection still open after 20s; want it closed after the 200ms read-header timeout", cl.name)
				}
			}
		})
	}
}

// TestGracefulShutdown wants a request in flight when Serve is told to stop
// to finish, on both engines.
func TestGracefulShutdown(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			started, release := make(chan struct{}), make(chan struct{})
			app.Get("/slow", func(w http.ResponseWriter, r *http.Request) error {
				close(started)
				<-release
				_, err := io.WriteString(w, "done")
				return err
			})
			base, stop := webtest.Serve(t, app)
			got := webtest.GetAsync(client(t), base+"/slow")
			<-started
			stopped := make(chan error, 1)
			go func() { stopped <- stop() }()
			time.Sleep(50 * time.Millisecond) // let Serve begin its shutdown
			close(release)
			r := <-got
			if r.Err != nil || r.Status != 200 || r.Body != "done" {
				t.Errorf("in-flight request: got %d %q %v; want 200 \"done\"", r.Status, r.Body, r.Err)
			}
			if err := <-stopped; err != nil {
				t.Errorf("Serve: got %v; want nil", err)
			}
		})
	}
}

// TestEngineFromEnv covers LOOM_ENGINE: unset and std are net/http, nbio is
// this package's engine (imported here), anything else is an error naming
// the variable and the value.
func TestEngineFromEnv(t *testing.T) {
	tests := []struct {
		value    string
		wantName string
		wantErr  string
	}{
		{"", "std", ""},
		{"std", "std", ""},
		{"nbio", "nbio", ""},
		{"tomcat", "", `LOOM_ENGINE="tomcat"`},
	}
	for _, tt := range tests {
		t.Setenv(web.EngineEnv, tt.value)
		app, err := web.New(web.WithoutThreadWatch())
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, web.ErrEngine) {
				t.Errorf("LOOM_ENGINE=%q: got %v; want an ErrEngine naming %s", tt.value, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("LOOM_ENGINE=%q: %v", tt.value, err)
		}
		if got := app.EngineName(); got != tt.wantName {
			t.Errorf("LOOM_ENGINE=%q: got engine %q; want %q", tt.value, got, tt.wantName)
		}
		_ = app.Shutdown(context.Background())
	}
}

// TestHijack: a handler that hijacks the connection gets a blocking one on
// both engines — what it writes reaches the client, what the client sends
// after reaches its reads, through the bufio.ReadWriter or the connection.
func TestHijack(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			handled := make(chan error, 1)
			app.Get("/raw", func(w http.ResponseWriter, r *http.Request) error {
				conn, rw, err := http.NewResponseController(w).Hijack()
				if err != nil {
					handled <- err
					return err
				}
				defer conn.Close()
				if _, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nsay something\n"); err != nil {
					handled <- err
					return nil
				}
				line, err := rw.ReadString('\n')
				if err == nil {
					_, err = io.WriteString(conn, "you said "+line)
				}
				handled <- err
				return nil
			})
			base, _ := webtest.Serve(t, app)
			c := webtest.Dial(t, base)
			if _, err := io.WriteString(c, "GET /raw HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if line, err := br.ReadString('\n'); err != nil || line != "say something\n" {
				t.Fatalf("got %q, %v; want the hijacker's \"say something\"", line, err)
			}
			if _, err := io.WriteString(c, "hello\n"); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(br)
			if resp.StatusCode != 200 || string(rest) != "you said hello\n" {
				t.Errorf("got %d then %q; want 200 then \"you said hello\\n\"", resp.StatusCode, rest)
			}
			if err := <-handled; err != nil {
				t.Errorf("handler: %v", err)
			}
		})
	}
}

// syncBuffer is a log destination handlers write to concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestObservers: the access log and Prometheus metrics see the requests
// served on both engines.
func TestObservers(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			var logged syncBuffer
			opts := []web.AppOption{web.WithoutThreadWatch(), web.WithAccessLog(), web.WithLogger(slog.New(slog.NewTextHandler(&logged, nil)))}
			if eng.engine != nil {
				opts = append(opts, web.WithEngine(eng.engine))
			}
			app, err := web.New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			metrics.Mount(app, "/metrics")
			app.Get("/hello", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, "hi")
				return err
			})
			base, stop := webtest.Serve(t, app)
			c := client(t)
			if status, _ := body(t)(c.Get(base + "/hello")); status != 200 {
				t.Fatalf("GET /hello: got %d; want 200", status)
			}
			_, scraped := body(t)(c.Get(base + "/metrics"))
			const want = `loom_http_requests_total{method="GET",route="GET /hello",status="200"} 1`
			if !strings.Contains(scraped, want) {
				t.Errorf("metrics: got no line %q", want)
			}
			_ = stop()
			if !strings.Contains(logged.String(), "route=\"GET /hello\" status=200") {
				t.Errorf("access log: got %q; want a line for GET /hello with status 200", logged.String())
			}
		})
	}
}

// TestBodyLimit: a body over the limit gets 413 on both engines, declared
// or chunked, and one at the limit is read whole. Each request is sent in
// one write: a server that refuses a request closes the connection, and a
// client still sending then gets a reset instead of the answer.
func TestBodyLimit(t *testing.T) {
	const limit = 1000
	post := func(body string) string {
		return fmt.Sprintf("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	chunked := func(body string) string {
		return fmt.Sprintf("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	}
	tests := []struct {
		name, raw, want string
	}{
		{"at the limit", post(strings.Repeat("a", limit)), "HTTP/1.1 200 OK"},
		{"one past, declared", post(strings.Repeat("a", limit+1)), "HTTP/1.1 413"},
		{"at the limit, chunked", chunked(strings.Repeat("a", limit)), "HTTP/1.1 200 OK"},
		{"one past, chunked", chunked(strings.Repeat("a", limit+1)), "HTTP/1.1 413"},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithBodyLimit(limit))
			app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.Copy(io.Discard, r.Body)
				return err
			})
			base, _ := webtest.Serve(t, app)
			for _, tt := range tests {
				if got := statusOf(t, strings.TrimPrefix(base, "http://"), tt.raw); !strings.HasPrefix(got, tt.want) {
					t.Errorf("%s: got %q; want %q", tt.name, got, tt.want)
				}
			}
			// Without a limit anywhere, a body of any declared length is
			// read. (conn.go, headersRead's s.bodyCeiling > 0.)
			app = newApp(t, eng.engine, web.WithBodyLimit(0))
			app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.Copy(io.Discard, r.Body)
				return err
			})
			base, _ = webtest.Serve(t, app)
			for _, n := range []int{limit + 1, 2 << 20} { // 2 MiB: past nbio's own read limit for the header limit and a buffer (nbio.go, NewServer's s.BodyLimit > 0)
				if got := statusOf(t, strings.TrimPrefix(base, "http://"), post(strings.Repeat("a", n))); !strings.HasPrefix(got, "HTTP/1.1 200 OK") {
					t.Errorf("without a limit, %d bytes: got %q; want 200", n, got)
				}
			}
		})
	}
}

// TestLargeResponses: responses of several MiB — without a declared
// length, written whole or in many small writes; with one, written 32 KiB
// at a time; a static file — arrive intact on both engines. nbio v1.6.8's
// chunked writer reuses a buffer it has freed once it holds 64 KiB (its pool
// then hands the buffer to a queued write as well: the bytes come out wrong
// or the poller panics), and its plain writer returns a wrong count when a
// write fills its buffer (io.Copy, and so a static file, stops at 96 KiB).
func TestLargeResponses(t *testing.T) {
	pattern := make([]byte, 5<<20+7)
	for i := range pattern {
		pattern[i] = byte(i*7 + i/251)
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			app.Get("/whole", func(w http.ResponseWriter, r *http.Request) error {
				_, err := w.Write(pattern)
				return err
			})
			app.Get("/pieces", func(w http.ResponseWriter, r *http.Request) error {
				for p := pattern; len(p) > 0; {
					k := min(len(p), 1000)
					if _, err := w.Write(p[:k]); err != nil {
						return err
					}
					p = p[k:]
				}
				return nil
			})
			app.Get("/declared", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Length", strconv.Itoa(len(pattern)))
				_, err := io.CopyBuffer(w, struct{ io.Reader }{bytes.NewReader(pattern)}, make([]byte, 32<<10))
				return err
			})
			app.Static("/static/", fstest.MapFS{"big.bin": {Data: pattern}})
			base, _ := webtest.Serve(t, app)
			c := client(t)
			for range 3 {
				for _, path := range []string{"/whole", "/pieces", "/declared", "/static/big.bin"} {
					status, got := body(t)(c.Get(base + path))
					if status != 200 || got != string(pattern) {
						t.Fatalf("GET %s: got %d and %d bytes (same: %v); want 200 and the %d bytes written", path, status, len(got), got == string(pattern), len(pattern))
					}
				}
			}
		})
	}
}

// TestResponseFraming: as net/http does, a body of up to 2 KiB without a
// declared length, from a handler that returns without flushing, goes out
// with a Content-Length; a larger one, or one flushed, is chunked. Both
// engines frame each case alike, and the bodies arrive whole.
func TestResponseFraming(t *testing.T) {
	small, edge, over := strings.Repeat("s", 12), strings.Repeat("e", 2048), strings.Repeat("o", 2049)
	large := strings.Repeat("l", 100<<10) // past the 40 KiB the engine sends a chunked body in
	cases := []struct {
		path, body string
		length     int64 // the Content-Length wanted; -1: chunked
	}{
		{"/small", small, 12},
		{"/edge", edge, 2048},
		{"/pieces", small + small, 24},
		{"/over", over, -1},
		{"/spill", edge + over, -1},
		{"/flushed", small, -1},
		{"/empty", "", 0},
		{"/declared", over, 2049},
		{"/trailer", small, -1},
		{"/coded", small, -1},
		{"/accepted", small, 12},
		{"/typed", "{}", 2},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			for _, path := range []string{"/small", "/edge", "/over"} {
				b := map[string]string{"/small": small, "/edge": edge, "/over": over}[path]
				app.Get(path, func(w http.ResponseWriter, r *http.Request) error {
					_, err := io.WriteString(w, b)
					return err
				})
			}
			app.Get("/pieces", func(w http.ResponseWriter, r *http.Request) error {
				_, _ = io.WriteString(w, small)
				_, err := io.WriteString(w, small)
				return err
			})
			app.Get("/spill", func(w http.ResponseWriter, r *http.Request) error {
				_, _ = io.WriteString(w, edge)
				_, err := io.WriteString(w, over)
				return err
			})
			app.Get("/flushed", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, small)
				_ = http.NewResponseController(w).Flush()
				return err
			})
			app.Get("/empty", func(w http.ResponseWriter, r *http.Request) error { return nil })
			app.Get("/declared", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Length", "2049")
				_, err := io.WriteString(w, over)
				return err
			})
			app.Get("/trailer", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Trailer", "X-Sum")
				_, err := io.WriteString(w, small)
				w.Header().Set("X-Sum", "1")
				return err
			})
			app.Get("/coded", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Transfer-Encoding", "chunked")
				_, err := io.WriteString(w, small)
				return err
			})
			app.Get("/accepted", func(w http.ResponseWriter, r *http.Request) error {
				w.WriteHeader(http.StatusAccepted)
				_, err := io.WriteString(w, small)
				return err
			})
			app.Get("/typed", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Type", "application/json")
				_, err := io.WriteString(w, "{}")
				return err
			})
			app.Get("/nocontent", func(w http.ResponseWriter, r *http.Request) error {
				w.WriteHeader(http.StatusNoContent)
				_, err := io.WriteString(w, small) // refused: no body
				return err
			})
			app.Get("/created", func(w http.ResponseWriter, r *http.Request) error {
				w.WriteHeader(http.StatusCreated)
				return nil
			})
			app.Get("/notmodified", func(w http.ResponseWriter, r *http.Request) error {
				w.WriteHeader(http.StatusNotModified)
				_, err := io.WriteString(w, small) // refused: no body
				return err
			})
			app.Get("/notmodified-declared", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Length", "2049")
				w.WriteHeader(http.StatusNotModified)
				return nil
			})
			app.Get("/short", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Length", "10")
				_, err := io.WriteString(w, "12345")
				return err
			})
			app.Get("/early", func(w http.ResponseWriter, r *http.Request) error {
				w.WriteHeader(http.StatusEarlyHints)
				return nil
			})
			app.Get("/unwritten", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Length", "10")
				return nil
			})
			app.Get("/coded-empty", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Transfer-Encoding", "chunked")
				return nil
			})
			app.Get("/trailer-empty", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Trailer", "X-Sum")
				w.Header().Set("X-Sum", "1")
				return nil
			})
			app.Get("/large", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, large)
				return err
			})
			base, _ := webtest.Serve(t, app)
			c := client(t)
			for range 2 { // the second time on a reused connection
				for _, tc := range cases {
					resp, err := c.Get(base + tc.path)
					if err != nil {
						t.Fatal(err)
					}
					got, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						t.Fatal(err)
					}
					if want := cmp.Or(map[string]int{"/accepted": 202}[tc.path], 200); resp.StatusCode != want || string(got) != tc.body {
						t.Fatalf("GET %s: %d, %d bytes; want 200, %d bytes", tc.path, resp.StatusCode, len(got), len(tc.body))
					}
					chunked := len(resp.TransferEncoding) > 0
					if resp.ContentLength != tc.length || chunked != (tc.length < 0) {
						t.Errorf("GET %s: Content-Length %d, Transfer-Encoding %q; want Content-Length %d", tc.path, resp.ContentLength, resp.TransferEncoding, tc.length)
					}
					if got := resp.Trailer.Get("X-Sum"); tc.path == "/trailer" && got != "1" {
						t.Errorf("GET /trailer: trailer X-Sum %q; want the value set after the body, 1", got)
					}
				}
			}
			// HEAD: the head a GET gets, without its body (the next answer
			// follows at once), with no length or its body's, or the one
			// the handler declared, and the GET's Content-Type.
			got := rawHead(t, base, "HEAD /unwritten HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
			if head, _, _ := strings.Cut(got, "\r\n\r\n"); !strings.Contains(head+"\r\n", "\r\nContent-Length: 10\r\n") {
				t.Errorf("HEAD /unwritten: got %q; want the declared Content-Length: 10", got)
			}
			for _, tc := range cases {
				get, err := c.Get(base + tc.path)
				if err != nil {
					t.Fatal(err)
				}
				get.Body.Close()
				got := rawHead(t, base, "HEAD "+tc.path+" HTTP/1.1\r\nHost: a\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
				head, rest, _ := strings.Cut(got, "\r\n\r\n")
				resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(head+"\r\n\r\n")), &http.Request{Method: http.MethodHead})
				if err != nil {
					t.Fatalf("HEAD %s: %v in %q", tc.path, err, got)
				}
				resp.Body.Close()
				length := strings.Contains(head, "\r\nContent-Length: ")
				if !strings.HasPrefix(rest, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, small) ||
					length && resp.ContentLength != int64(len(tc.body)) || length && strings.Contains(head, "Transfer-Encoding") ||
					resp.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
					t.Errorf("HEAD %s: got %q; want a head without a body, its Content-Length %d if any, not beside a Transfer-Encoding, Content-Type %q, then the next answer",
						tc.path, got, len(tc.body), get.Header.Get("Content-Type"))
				}
			}
			// A 103 and no final status: an informational response, then
			// an empty 200; the connection goes on.
			got = rawHead(t, base, "GET /early HTTP/1.1\r\nHost: a\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
			early := "HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
			if !strings.HasPrefix(got, early) || !strings.HasSuffix(got, small) {
				t.Errorf("GET /early: got %q; want %q, then the next answer", got, early)
			}
			// Statuses without a body, and a status with an empty one: the
			// heads as net/http sends them, the next request answered.
			for _, tc := range []struct {
				path, status string
				length       bool // a Content-Length: 0
			}{
				{"/nocontent", "204 No Content", false},
				{"/created", "201 Created", true},
				{"/notmodified", "304 Not Modified", false},
			} {
				got := rawHead(t, base, "GET "+tc.path+" HTTP/1.1\r\nHost: a\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
				head, rest, _ := strings.Cut(got, "\r\n\r\n")
				want := tc.length
				length := strings.Contains(head, "Content-Length:")
				if !strings.HasPrefix(got, "HTTP/1.1 "+tc.status+"\r\n") || length != want || length && !strings.Contains(head+"\r\n", "Content-Length: 0\r\n") ||
					strings.Contains(got, "Transfer-Encoding") || !strings.HasPrefix(rest, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, small) {
					t.Errorf("GET %s: got %q; want %s, Content-Length: 0 %v, no body, no chunks, then the next answer", tc.path, got, tc.status, want)
				}
			}
			// A declared length the handler does not fill: the head keeps
			// it (net/http then closes the connection), whatever was written.
			for _, path := range []string{"/short", "/unwritten"} {
				got = rawHead(t, base, "GET "+path+" HTTP/1.1\r\nHost: a\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
				if head, _, _ := strings.Cut(got, "\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.Contains(head+"\r\n", "\r\nContent-Length: 10\r\n") ||
					strings.Count(got, "HTTP/1.1 ") != 1 {
					t.Errorf("GET %s, then another request: got %q; want a 200 with the declared Content-Length: 10, then the connection closed", path, got)
				}
			}
			// A 304's declared length is the body it has not: the
			// connection goes on.
			got = rawHead(t, base, "GET /notmodified-declared HTTP/1.1\r\nHost: a\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
			if !strings.HasPrefix(got, "HTTP/1.1 304 Not Modified\r\n") || !strings.Contains(got, "\r\n\r\nHTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, small) {
				t.Errorf("GET /notmodified-declared, then another request: got %q; want a 304 without a body, then the next answer", got)
			}
			// No body, with a framing of the handler's: chunks, whose end
			// carries the trailer, and no Content-Length.
			for _, path := range []string{"/coded-empty", "/trailer-empty"} {
				got = rawHead(t, base, "GET "+path+" HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
				resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
				if err != nil {
					t.Fatalf("GET %s: %v in %q", path, err, got)
				}
				b, err := io.ReadAll(resp.Body)
				head, _, _ := strings.Cut(got, "\r\n\r\n")
				if err != nil || len(b) != 0 || len(resp.TransferEncoding) == 0 || strings.Contains(head, "Content-Length") ||
					path == "/trailer-empty" && resp.Trailer.Get("X-Sum") != "1" {
					t.Errorf("GET %s: got %q (%v); want an empty chunked body, no Content-Length, the trailer if declared", path, got, err)
				}
			}
			// HTTP/1.0 has no chunks: a body without a declared length
			// goes out until the connection closes, or with a length that
			// is its own, however large.
			got = rawHead(t, base, "GET /over HTTP/1.0\r\n\r\n")
			if !strings.HasPrefix(got, "HTTP/1.0 200 OK\r\n") || strings.Contains(got, "Transfer-Encoding") || !strings.HasSuffix(got, "\r\n\r\n"+over) {
				t.Errorf("GET /over in HTTP/1.0: got %.100q; want a 200 whose body follows its head unchunked", got)
			}
			got = rawHead(t, base, "GET /large HTTP/1.0\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
			if err != nil {
				t.Fatalf("GET /large in HTTP/1.0: %v in %.200q", err, got)
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil || string(b) != large || resp.ContentLength != -1 && resp.ContentLength != int64(len(large)) {
				t.Errorf("GET /large in HTTP/1.0: Content-Length %d, %d bytes of the body (%v); want the %d bytes, of their own length or until the close",
					resp.ContentLength, len(b), err, len(large))
			}
		})
	}
}

// rawHead sends raw on a new connection to base and returns what comes
// back until the server closes it, without its Date lines.
func rawHead(t *testing.T, base, raw string) string {
	t.Helper()
	c := webtest.Dial(t, base)
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	var lines []string
	for line := range strings.SplitAfterSeq(string(b), "\r\n") {
		if !strings.HasPrefix(line, "Date: ") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "")
}

// TestServerConfigZeros: a server without IdleTimeout, ReadHeaderTimeout
// and MaxHeaderBytes takes them as net/http does: the idle and header
// timeouts from ReadTimeout, the header limit of 1 MiB. (nbio.go,
// NewServer's zero-means-default branches.)
func TestServerConfigZeros(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithServerConfig(func(s *http.Server) {
				s.IdleTimeout, s.ReadHeaderTimeout, s.MaxHeaderBytes = 0, 0, 0
				s.ReadTimeout = 300 * time.Millisecond
			}))
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error { return nil })
			base, _ := webtest.Serve(t, app)

			// Headers of 8 KiB, over a limit of 0 + 4 KiB.
			if got := statusOf(t, strings.TrimPrefix(base, "http://"), "GET / HTTP/1.1\r\nHost: a\r\nX: "+strings.Repeat("x", 8<<10)+"\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 200") {
				t.Errorf("8 KiB of headers: got %q; want 200", got)
			}
			// A client that says nothing, and one idle after a request,
			// are cut off (webtest.Dial's deadline is 20 s).
			for _, first := range []string{"", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"} {
				c := webtest.Dial(t, base)
				if _, err := io.WriteString(c, first); err != nil {
					t.Fatal(err)
				}
				br := bufio.NewReader(c)
				if first != "" {
					if _, err := http.ReadResponse(br, nil); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := br.ReadByte(); errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("after %q: the connection was still open after 20s", first)
				}
			}
			// A client that trickles its headers is cut off at the header
			// timeout, taken from ReadTimeout, whatever IdleTimeout says.
			app = newApp(t, eng.engine, web.WithServerConfig(func(s *http.Server) {
				s.IdleTimeout, s.ReadHeaderTimeout = time.Minute, 0
				s.ReadTimeout = 300 * time.Millisecond
			}))
			base, _ = webtest.Serve(t, app)
			c := webtest.Dial(t, base)
			_, err := io.WriteString(c, "GET / HTTP/1.1\r\nX: ")
			for err == nil {
				time.Sleep(50 * time.Millisecond)
				_, err = io.WriteString(c, "x")
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Error("a client trickling its headers was still served after 20s")
			}
		})
	}
}

// TestSlowBodyWithinItsTimeout: a body whose second half comes 2.5 s after
// the first, well within the 30 s body timeout but past the sweeps of the
// timeouts (at most a second apart), is read whole. (sweep.go, the
// deadline's clock >= d.)
func TestSlowBodyWithinItsTimeout(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			app := newApp(t, eng.engine)
			app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.Copy(w, r.Body)
				return err
			})
			base, _ := webtest.Serve(t, app)
			c := webtest.Dial(t, base)
			if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nab"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2500 * time.Millisecond)
			if _, err := io.WriteString(c, "cd"); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != "abcd" {
				t.Errorf("got %d %q; want 200 abcd", resp.StatusCode, b)
			}
		})
	}
}

// TestHijackedClientTooFarAhead: on nbio, a hijacked connection whose
// client sends more than 4 MiB that the handler has not read is closed
// (net/http would stop reading and let TCP push back); the handler's read
// fails. (hijack.go, maxHijackBuffer.)
func TestHijackedClientTooFarAhead(t *testing.T) {
	app := newApp(t, nbio.Engine())
	read := make(chan struct{})
	handled := make(chan error, 1)
	app.Get("/raw", func(w http.ResponseWriter, r *http.Request) error {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			handled <- err
			return err
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
		<-read
		_, err = io.Copy(io.Discard, rw)
		handled <- err
		return nil
	})
	base, _ := webtest.Serve(t, app)
	c := webtest.Dial(t, base)
	if _, err := io.WriteString(c, "GET /raw HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	if _, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write(make([]byte, 4<<20+1)) // fails once the engine closes
	if _, err := br.ReadByte(); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Error("4 MiB + 1 byte ahead of the handler's reads: the connection was still open after 20s")
	}
	c.Close()
	close(read)
	select {
	case err := <-handled:
		if err == nil {
			t.Error("the handler read to the end of a connection closed for sending too far ahead")
		}
	case <-time.After(20 * time.Second):
		t.Error("the handler's read was still blocked 20s after the client left")
	}
}

// TestRequestDuringShutdown: on nbio, a request that arrives on an open
// connection once Shutdown has begun is served with Connection: close.
// (nbio.go, serveHTTP's s.closing.Load().)
func TestRequestDuringShutdown(t *testing.T) {
	app := newApp(t, nbio.Engine())
	started, release := make(chan struct{}), make(chan struct{})
	app.Get("/slow", func(w http.ResponseWriter, r *http.Request) error {
		close(started)
		<-release
		return nil
	})
	app.Get("/fast", func(w http.ResponseWriter, r *http.Request) error { return nil })
	base, stop := webtest.Serve(t, app)
	c := webtest.Dial(t, base)
	br := bufio.NewReader(c)
	get := func() *http.Response {
		t.Helper()
		if _, err := io.WriteString(c, "GET /fast HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := get(); resp.Close {
		t.Fatal("before Shutdown: got Connection: close")
	}
	slow := webtest.GetAsync(client(t), base+"/slow")
	<-started
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// Shutdown has begun once the listener refuses connections.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		d, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			break
		}
		d.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepted 20s after Shutdown began")
		}
	}
	if resp := get(); !resp.Close {
		t.Error("during Shutdown: got no Connection: close")
	}
	close(release)
	<-slow
	if err := <-stopped; err != nil {
		t.Error(err)
	}
}
