package web_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
	wsweb "github.com/loomrt/loom/web/websocket"
)

// bodyTimeout is short so that the tests run quickly; they assert what the
// client gets, never how long it took, so a slow machine only makes them
// slower.
const bodyTimeout = 200 * time.Millisecond

// outlast waits until a body deadline armed before the call has passed.
// The wait is the scenario under test (a client or a handler slower than
// the timeout), not a way to order goroutines.
func outlast() { time.Sleep(3 * bodyTimeout) }

// rawResponse is what a hand-written HTTP/1.1 client got back.
type rawResponse struct {
	status int
	body   string
	closed bool // the server said Connection: close, and closed it
}

// sendSlowly sends head (request line and headers, ending in a blank line)
// and each part of the body to addr, calling between() between parts, and
// reads the response. A client that stops sending is what the server must
// not wait for: the read is bounded by a generous 10 s.
func sendSlowly(t *testing.T, addr, head string, between func(), parts ...string) rawResponse {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	for i, part := range parts {
		if i > 0 {
			between()
		}
		if _, err := io.WriteString(conn, part); err != nil {
			t.Fatal(err)
		}
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the response: %v (no response within 10 s?)", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	if resp.Close { // else the connection is kept for another request
		_, err = br.ReadByte()
		closed = errors.Is(err, io.EOF)
	}
	return rawResponse{resp.StatusCode, string(body), closed}
}

// postHead is the head of a POST whose body is declared as n bytes.
func postHead(path, contentType string, n int) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: test\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", path, contentType, n)
}

// TestBodyTimeoutAnswers408 has a client send its headers and part of the
// body it announced (10 of 100 bytes), then stall: whatever reads the body
// gets an error that matches ErrBodyTimeout, the handler ends, the client
// gets a 408 that says why, and the connection is closed.
func TestBodyTimeoutAnswers408(t *testing.T) {
	app := newApp(t, web.WithBodyTimeout(bodyTimeout))
	pool := loom.Pool(1)
	defer pool.Shutdown(context.Background())
	handled := make(chan error, 1)
	app.Post("/json", func(w http.ResponseWriter, r *http.Request) error {
		var v map[string]any
		err := web.ReadJSON(r, &v)
		handled <- err
		if err != nil {
			return err
		}
		return web.WriteJSON(w, http.StatusOK, v)
	}, web.WithExecutor(pool)) // one slot: the stalled request must give it back
	app.Post("/form", func(w http.ResponseWriter, r *http.Request) error {
		_, err := web.Form(r, "name").Required()
		handled <- err
		return err
	})
	app.Post("/multipart", func(w http.ResponseWriter, r *http.Request) error {
		f, _, err := web.FormFile(r, "file")
		if err == nil {
			f.Close()
		}
		handled <- err
		return err
	})
	app.Post("/raw", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.ReadAll(r.Body)
		handled <- err
		return fmt.Errorf("read upload: %w", err)
	})
	url, _ := serveApp(t, app)
	addr := strings.TrimPrefix(url, "http://")

	const want = "request body not received within 200ms"
	tests := []struct {
		name, path, contentType string
		body                    string // sent of len(body)+90 bytes
	}{
		{"ReadJSON", "/json", "application/json", `{"name": "`},
		{"form", "/form", "application/x-www-form-urlencoded", "name=Ann&a"},
		// The multipart parser reports a line cut short as malformed;
		// the client still learns that it was too slow.
		{"multipart header", "/multipart", "multipart/form-data; boundary=XX", "--XX\r\nCont"},
		{"multipart file", "/multipart", "multipart/form-data; boundary=XX",
			"--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nfirst bytes"},
		{"io.ReadAll", "/raw", "application/octet-stream", "0123456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sendSlowly(t, addr, postHead(tt.path, tt.contentType, len(tt.body)+90), nil, tt.body)
			if got.status != http.StatusRequestTimeout || !strings.Contains(got.body, want) {
				t.Errorf("got %d %q; want 408 saying %q", got.status, got.body, want)
			}
			if !got.closed {
				t.Error("the connection was not closed after the 408")
			}
			select {
			case err := <-handled:
				if !errors.Is(err, web.ErrBodyTimeout) {
					t.Errorf("the handler read %v; want an error matching ErrBodyTimeout", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the handler has not ended")
			}
		})
	}

	// The stalled request gave its slot back: the same route serves again.
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Post(url+"/json", "application/json", strings.NewReader(`{"name": "Ann"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != `{"name":"Ann"}`+"\n" {
		t.Errorf("after a stalled request: got %d %q; want 200 and the echo", resp.StatusCode, body)
	}
	if err := <-handled; err != nil {
		t.Errorf("ReadJSON of a whole body: %v", err)
	}
}

// TestBodyTimeoutSparesWholeBodies checks that a body read in time is
// unaffected, and that a handler that has read its body may then work
// longer than the timeout: the deadline is lifted, so the request's context
// is not cancelled and the response arrives on a connection that stays open.
func TestBodyTimeoutSparesWholeBodies(t *testing.T) {
	app := newApp(t, web.WithBodyTimeout(bodyTimeout))
	app.Post("/slow", func(w http.ResponseWriter, r *http.Request) error {
		var in struct{ Name string }
		if err := web.ReadJSON(r, &in); err != nil {
			return err
		}
		outlast()
		if err := r.Context().Err(); err != nil {
			return fmt.Errorf("context ended after the body was read: %w", err)
		}
		_, err := fmt.Fprintf(w, "hello %s", in.Name)
		return err
	})
	url, _ := serveApp(t, app)
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	for _, name := range []string{"Ann", "Bob"} { // the second on the same connection
		resp, err := client.Post(url+"/slow", "application/json", strings.NewReader(`{"name": "`+name+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != "hello "+name {
			t.Errorf("POST /slow: got %d %q; want 200 %q", resp.StatusCode, body, "hello "+name)
		}
	}
}

// TestRouteBodyTimeoutAfterAnAppDecoratorRead checks that a route's timeout does
// not re-arm a body that an App decorator has read to its end, in place or
// replacing it with a buffer: a deadline set then would cut net/http's
// background read and cancel the context of a handler still working.
func TestRouteBodyTimeoutAfterAnAppDecoratorRead(t *testing.T) {
	app := newApp(t, web.WithBodyTimeout(0), web.WithDecorators(func(next http.Handler) http.Handler { // the route's timeout is the only one
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if r.Header.Get("X-Replace") != "" {
				r.Body = io.NopCloser(strings.NewReader(string(b)))
			}
			next.ServeHTTP(w, r)
		})
	}))
	app.Post("/slow", func(w http.ResponseWriter, r *http.Request) error {
		outlast()
		if err := r.Context().Err(); err != nil {
			return fmt.Errorf("context ended after the body was read: %w", err)
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%d bytes", len(b))
		return err
	}, web.WithBodyTimeout(bodyTimeout))
	url, _ := serveApp(t, app)
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	for _, replace := range []string{"", "yes"} {
		req, err := http.NewRequest("POST", url+"/slow", strings.NewReader("0123456789"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Replace", replace)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := map[string]string{"": "0 bytes", "yes": "10 bytes"}[replace]
		if resp.StatusCode != http.StatusOK || string(body) != want {
			t.Errorf("X-Replace %q: got %d %q; want 200 %q", replace, resp.StatusCode, body, want)
		}
	}
}

// TestBodyTimeoutUnmatchedRoute checks that a stalled body sent to no route
// does not hold the connection either: net/http reads what is left of an
// unread body before it answers, and the deadline bounds that read.
func TestBodyTimeoutUnmatchedRoute(t *testing.T) {
	app := newApp(t, web.WithBodyTimeout(bodyTimeout))
	url, _ := serveApp(t, app)
	got := sendSlowly(t, strings.TrimPrefix(url, "http://"), postHead("/nowhere", "text/plain", 100), nil, "0123456789")
	if got.status != http.StatusNotFound || !got.closed {
		t.Errorf("got %d, closed %t; want 404 and the connection closed", got.status, got.closed)
	}
}

// TestRouteBodyTimeout checks that a route or group overrides the App's
// timeout in both directions: an upload route without one takes a body that
// pauses longer than the App's, and a route with one bounds an App without.
func TestRouteBodyTimeout(t *testing.T) {
	size := func(w http.ResponseWriter, r *http.Request) error {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%d bytes", len(b))
		return err
	}
	patient := newApp(t, web.WithBodyTimeout(bodyTimeout))
	patient.Post("/upload", size, web.WithBodyTimeout(0))
	patient.Group("/big", web.WithBodyTimeout(time.Hour)).Post("/upload", size)
	patient.Post("/default", size)
	strict := newApp(t, web.WithBodyTimeout(0))
	strict.Post("/upload", size, web.WithBodyTimeout(bodyTimeout))

	patientURL, _ := serveApp(t, patient)
	strictURL, _ := serveApp(t, strict)
	tests := []struct {
		url, path string
		status    int
		body      string
	}{
		{patientURL, "/upload", 200, "20 bytes"},
		{patientURL, "/big/upload", 200, "20 bytes"},
		{patientURL, "/default", 408, "request body not received within 200ms\n"},
		{strictURL, "/upload", 408, "request body not received within 200ms\n"},
	}
	for _, tt := range tests {
		addr := strings.TrimPrefix(tt.url, "http://")
		got := sendSlowly(t, addr, postHead(tt.path, "text/plain", 20), outlast, "0123456789", "abcdefghij")
		if got.status != tt.status || got.body != tt.body {
			t.Errorf("%s (paused past the App's timeout): got %d %q; want %d %q", tt.path, got.status, got.body, tt.status, tt.body)
		}
	}
}

// TestBodyTimeoutMounted checks an App served by someone else's server (the
// deadline applies) and by a writer that cannot set deadlines (the request
// is served without one, not refused).
func TestBodyTimeoutMounted(t *testing.T) {
	app := newApp(t, web.WithBodyTimeout(bodyTimeout))
	app.Post("/raw", func(w http.ResponseWriter, r *http.Request) error {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	srv := httptest.NewServer(app)
	defer srv.Close()
	got := sendSlowly(t, srv.Listener.Addr().String(), postHead("/raw", "text/plain", 100), nil, "0123456789")
	if got.status != http.StatusRequestTimeout {
		t.Errorf("under httptest.Server: got %d %q; want 408", got.status, got.body)
	}
	if rec := do(t, app, "POST", "/raw", "whole"); rec.Code != http.StatusOK || rec.Body.String() != "whole" {
		t.Errorf("under a ResponseRecorder: got %d %q; want 200 whole", rec.Code, rec.Body.String())
	}
}

// TestBodyTimeoutSparesWebSockets keeps a WebSocket open past the body
// timeout and checks that it still echoes.
func TestBodyTimeoutSparesWebSockets(t *testing.T) {
	app := newApp(t, web.WithBodyTimeout(bodyTimeout))
	app.Get("/ws", wsweb.Handler(webtest.Echo))
	url, _ := serveApp(t, app)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for i, msg := range []string{"before", "after"} {
		if i > 0 {
			outlast()
		}
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatalf("write %q: %v", msg, err)
		}
		_, got, err := c.Read(ctx)
		if err != nil || string(got) != msg {
			t.Fatalf("echo of %q: got %q, %v", msg, got, err)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
}

func TestBodyTimeoutValidation(t *testing.T) {
	for _, d := range []time.Duration{0, time.Nanosecond, time.Hour} {
		app, err := web.New(web.WithExecutor(loom.Virtual()), web.WithBodyTimeout(d))
		if err != nil {
			t.Errorf("New(WithBodyTimeout(%v)): %v", d, err)
			continue
		}
		if err := app.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	defer func() {
		v := recover()
		if s, _ := v.(string); !strings.HasPrefix(s, "web: WithBodyTimeout(-1s): negative") {
			t.Errorf("WithBodyTimeout(-1s): got panic %v; want a web: panic saying it is negative", v)
		}
	}()
	web.WithBodyTimeout(-time.Second)
}

// TestBodyLimitPerRoute checks that a route's or group's WithBodyLimit overrides
// the App's in both directions, for a declared length (refused before the
// handler runs) and for a body read past the limit.
func TestBodyLimitPerRoute(t *testing.T) {
	app := newApp(t, web.WithBodyLimit(100))
	var ran atomic.Int32
	size := func(w http.ResponseWriter, r *http.Request) error {
		ran.Add(1)
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%d bytes", len(b))
		return err
	}
	app.Post("/default", size)
	app.Post("/big", size, web.WithBodyLimit(1000))
	app.Group("/media", web.WithBodyLimit(0)).Post("/upload", size)
	app.Post("/small", size, web.WithBodyLimit(10))
	tests := []struct {
		path    string
		n       int
		chunked bool // no declared length: the limit is met while reading
		status  int
		runs    bool
	}{
		{"/default", 100, false, 200, true},
		{"/default", 101, false, 413, false},
		{"/default", 101, true, 413, true},
		{"/big", 1000, false, 200, true},
		{"/big", 1001, false, 413, false},
		{"/big", 1001, true, 413, true},
		{"/media/upload", 5000, false, 200, true},
		{"/small", 10, false, 200, true},
		{"/small", 11, false, 413, false},
		{"/small", 11, true, 413, true},
	}
	for _, tt := range tests {
		ran.Store(0)
		var body io.Reader = strings.NewReader(strings.Repeat("x", tt.n))
		if tt.chunked {
			body = io.MultiReader(body) // hides the length from httptest
		}
		req := httptest.NewRequest("POST", tt.path, body)
		if tt.chunked {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		if rec.Code != tt.status || (ran.Load() == 1) != tt.runs {
			t.Errorf("POST %s with %d bytes (chunked %t): got %d, handler ran %t; want %d, ran %t",
				tt.path, tt.n, tt.chunked, rec.Code, ran.Load() == 1, tt.status, tt.runs)
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

// TestBodyReadErrorsAnswers: what a failed body read answers, as the
// handler returns its error. A malformed chunk is a 400, under the App's
// body timeout too (body.go, Read's errors.Is(err, os.ErrDeadlineExceeded);
// malformed). A body cut by the server's own ReadTimeout, to which the App
// leaves the deadline, is neither the App's body timeout (408) nor a
// malformed body: it is the 500 of any other error (Read's b.timeout > 0;
// malformed's net.Error).
func TestBodyReadErrorsAnswers(t *testing.T) {
	read := func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.ReadAll(r.Body)
		return err
	}
	app := newApp(t)
	app.Post("/", read)
	// A read after the handler closed the body is the handler's error, a
	// 500, not the client's (malformed's http.ErrBodyReadAfterClose).
	app.Post("/closed", func(w http.ResponseWriter, r *http.Request) error {
		_ = r.Body.Close()
		_, err := r.Body.Read(make([]byte, 1))
		return err
	})
	url, _ := serveApp(t, app)
	if got := rawStatus(t, strings.TrimPrefix(url, "http://"), "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"); !strings.HasPrefix(got, "HTTP/1.1 400 ") {
		t.Errorf("a malformed chunk: got %q; want 400", got)
	}

	if got := rawStatus(t, strings.TrimPrefix(url, "http://"), "POST /closed HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx"); !strings.HasPrefix(got, "HTTP/1.1 500 ") {
		t.Errorf("a read after Close: got %q; want 500", got)
	}
	// A body cut short by a client that closes its side (and still reads)
	// is not malformed either: a 500 (malformed's io.ErrUnexpectedEOF).
	short := webtest.Dial(t, url)
	if _, err := io.WriteString(short, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc"); err != nil {
		t.Fatal(err)
	}
	if err := short.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(short).ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 500 ") {
		t.Errorf("a body cut short by the client's close: got %q, %v; want 500", line, err)
	}

	app = newApp(t, web.WithServerConfig(func(s *http.Server) { s.ReadTimeout = bodyTimeout }))
	app.Post("/", read)
	url, _ = serveApp(t, app)
	c := webtest.Dial(t, url)
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc"); err != nil {
		t.Fatal(err)
	}
	// The client withholds the rest of the body.
	if line, err := bufio.NewReader(c).ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 500 ") {
		t.Errorf("a body cut by the server's ReadTimeout: got %q, %v; want 500", line, err)
	}
}

// closedAfterHead is a listener whose connections, once a request head
// has arrived, fail every read with a bare net.ErrClosed, as a connection
// the server side closed under the read says it (a user-space net.Conn
// returns it unwrapped; a socket's comes in a *net.OpError).
type closedAfterHead struct{ net.Listener }

func (l closedAfterHead) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &closingConn{Conn: c}, nil
}

type closingConn struct {
	net.Conn
	seen []byte // only the reading goroutine touches it
	head bool
}

func (c *closingConn) Read(p []byte) (int, error) {
	if c.head {
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Read(p)
	c.seen = append(c.seen, p[:n]...)
	c.head = bytes.Contains(c.seen, []byte("\r\n\r\n"))
	return n, err
}

// TestBodyReadOnAClosedConnection: a body whose connection is closed under
// the handler's read is not the client's malformed body (400) but the 500
// of any other failed read. A bare net.ErrClosed is a net.Error, so
// malformed's net.Error term is the one that says so.
func TestBodyReadOnAClosedConnection(t *testing.T) {
	app := newApp(t)
	app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.ReadAll(r.Body)
		return err
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx, closedAfterHead{ln}) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	if got := rawStatus(t, ln.Addr().String(), "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 500 ") {
		t.Errorf("a body read on a closed connection: got %q; want 500", got)
	}
}
