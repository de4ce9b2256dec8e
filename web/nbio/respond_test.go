package nbio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/loomrt/loom/web"
)

// serveRaw serves handler on the engine until t ends, and returns the
// server and a connection to it.
func serveRaw(t *testing.T, handler http.HandlerFunc) (*server, net.Conn) {
	t.Helper()
	es, err := Engine().NewServer(&http.Server{Handler: handler}, web.EngineSettings{})
	if err != nil {
		t.Fatal(err)
	}
	sv := es.(*server)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- sv.Serve(ln) }()
	t.Cleanup(func() {
		_ = sv.Close()
		<-served
	})
	c := dialAndWait(t, ln.Addr().String(), sv, 1)
	t.Cleanup(func() { c.Close() })
	return sv, c
}

// waitPending waits until n requests of sv's connection have been handed
// to the App and not yet answered.
func waitPending(sv *server, n int) error {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		sv.mu.Lock()
		got := 0
		for _, st := range sv.conns {
			st.idleMu.Lock()
			got = st.pending
			st.idleMu.Unlock()
		}
		sv.mu.Unlock()
		if got >= n {
			return nil
		}
	}
	return fmt.Errorf("%d requests not handed over in 20s", n)
}

// TestPipelinedBatchInOneWrite: the responses to requests that arrived
// together go out in one write to the socket, not one each (respond.go),
// whether the handler writes a body, declares its length, or writes none.
// The first handler waits until all of them are queued behind it, so that
// the batch is whole however the goroutines run.
func TestPipelinedBatchInOneWrite(t *testing.T) {
	const n = 16
	for _, tc := range []struct {
		name    string
		handler func(w http.ResponseWriter, path string)
		body    func(path string) string
	}{
		{"body", func(w http.ResponseWriter, path string) {
			_, _ = io.WriteString(w, "ok "+path)
		}, func(path string) string { return "ok " + path }},
		{"declared length", func(w http.ResponseWriter, path string) {
			w.Header().Set("Content-Length", strconv.Itoa(len("ok "+path)))
			_, _ = io.WriteString(w, "ok ")
			_, _ = io.WriteString(w, path)
		}, func(path string) string { return "ok " + path }},
		{"no body", func(w http.ResponseWriter, path string) {}, func(string) string { return "" }},
		{"status only", func(w http.ResponseWriter, path string) {
			w.WriteHeader(http.StatusAccepted)
		}, func(string) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sv *server
			waited := make(chan error, 1)
			sv, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/0" {
					waited <- waitPending(sv, n)
				}
				tc.handler(w, r.URL.Path)
			})
			var writes atomic.Int64
			hook := func(int) { writes.Add(1) }
			testHookWritten.Store(&hook)
			defer testHookWritten.Store(nil)

			var req strings.Builder
			for i := range n {
				fmt.Fprintf(&req, "GET /%d HTTP/1.1\r\nHost: a\r\n\r\n", i)
			}
			if _, err := io.WriteString(c, req.String()); err != nil {
				t.Fatal(err)
			}
			if err := <-waited; err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			for i := range n {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("response %d: %v", i, err)
				}
				b, _ := io.ReadAll(resp.Body)
				if got, want := string(b), tc.body(fmt.Sprintf("/%d", i)); got != want || resp.ContentLength != int64(len(want)) {
					t.Fatalf("response %d: got %q with length %d; want %q with its length", i, got, resp.ContentLength, want)
				}
			}
			if got := writes.Load(); got != 1 {
				t.Errorf("got %d writes for %d pipelined responses; want 1", got, n)
			}
		})
	}
}

// TestBatchWrittenAtItsBound: a batch of pipelined responses is handed to
// nbio once it holds 64 KiB, not held for the rest: the first flush is the
// first response that takes it to 64 KiB or past.
func TestBatchWrittenAtItsBound(t *testing.T) {
	const (
		n     = 80
		bound = 64 << 10 // maxBatch, written out so that a change to it shows
	)
	body := strings.Repeat("b", 2000)
	var sv *server
	waited := make(chan error, 1)
	sv, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/000" {
			waited <- waitPending(sv, n)
		}
		_, _ = io.WriteString(w, body)
	})
	var mu sync.Mutex
	var flushes []int
	hook := func(size int) {
		mu.Lock()
		flushes = append(flushes, size)
		mu.Unlock()
	}
	testHookFlushed.Store(&hook)
	defer testHookFlushed.Store(nil)

	var req strings.Builder
	for i := range n {
		fmt.Fprintf(&req, "GET /%03d HTTP/1.1\r\nHost: a\r\n\r\n", i)
	}
	if _, err := io.WriteString(c, req.String()); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	for i := range n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != body {
			t.Fatalf("response %d: a body of %d bytes; want %d", i, len(b), len(body))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, f := range flushes {
		total += f
	}
	one := total / n // every response is the same size
	if total != one*n || len(flushes) < 2 {
		t.Fatalf("flushes of %v bytes for %d responses of one size; want several, %d in all", flushes, n, one*n)
	}
	if first := flushes[0]; first < bound || first-one >= bound || first%one != 0 {
		t.Errorf("the first flush is %d bytes (responses of %d); want the first whole number of responses to reach %d", first, one, bound)
	}
}

// TestPipelinedMixedResponses: responses the engine writes itself and
// those nbio's writer writes (a large body, a flushed one, a HEAD) come out
// in the order of their requests when they are pipelined together.
func TestPipelinedMixedResponses(t *testing.T) {
	large := strings.Repeat("l", 100<<10)
	var sv *server
	waited := make(chan error, 1)
	sv, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/first":
			waited <- waitPending(sv, 5)
			_, _ = io.WriteString(w, "first")
		case "/large":
			w.Header().Set("Content-Length", fmt.Sprint(len(large)))
			_, _ = io.WriteString(w, large)
		case "/flushed":
			_, _ = io.WriteString(w, "flushed")
			_ = http.NewResponseController(w).Flush()
		default:
			_, _ = io.WriteString(w, "small")
		}
	})
	req := "GET /first HTTP/1.1\r\nHost: a\r\n\r\nGET /large HTTP/1.1\r\nHost: a\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\n\r\n" +
		"GET /flushed HTTP/1.1\r\nHost: a\r\n\r\nHEAD /small HTTP/1.1\r\nHost: a\r\n\r\nGET /last HTTP/1.1\r\nHost: a\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for i, want := range []string{"first", large, "small", "flushed", "", "small"} {
		method := "GET"
		if i == 4 {
			method = "HEAD"
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != want {
			t.Fatalf("response %d: got a body of %d bytes (%.20q); want %d (%.20q)", i, len(b), b, len(want), want)
		}
	}
}

// TestHeldResponseBeforeHijack: a response held back for the request
// behind it goes out when that request's handler hijacks the connection,
// even if the hijacker only reads: the client waits for the response
// before it sends what the hijacker reads.
func TestHeldResponseBeforeHijack(t *testing.T) {
	var sv *server
	read := make(chan string, 1)
	sv, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/first" {
			if err := waitPending(sv, 2); err != nil {
				read <- err.Error()
			}
			_, _ = io.WriteString(w, "first")
			return
		}
		hc, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			read <- err.Error()
			return
		}
		defer hc.Close()
		_ = hc.SetReadDeadline(time.Now().Add(20 * time.Second))
		b := make([]byte, 5)
		_, err = io.ReadFull(hc, b)
		read <- fmt.Sprintf("%s %v", b, err)
	})
	if _, err := io.WriteString(c, "GET /first HTTP/1.1\r\nHost: a\r\n\r\nGET /hijack HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the first response: %v", err)
	}
	resp.Body.Close()
	if _, err := io.WriteString(c, "hello"); err != nil {
		t.Fatal(err)
	}
	if got, want := <-read, "hello <nil>"; got != want {
		t.Errorf("the hijacker read %q; want %q", got, want)
	}
}

// TestWritePastDeclaredLength: a Write that takes a small body past the
// Content-Length the handler declared fails with http.ErrContentLength, as
// on net/http, though the engine holds small bodies back.
func TestWritePastDeclaredLength(t *testing.T) {
	got := make(chan error, 1)
	_, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "4")
		_, _ = io.WriteString(w, "abc")
		_, err := io.WriteString(w, "de")
		got <- err
	})
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, http.ErrContentLength) {
		t.Errorf("got %v; want http.ErrContentLength", err)
	}
}

// TestRequestWithoutBodyHasNoBody: as on net/http, a request without a
// body has http.NoBody, which the App need not wrap; one with a body does
// not.
func TestRequestWithoutBodyHasNoBody(t *testing.T) {
	got := make(chan bool, 2)
	_, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Body == http.NoBody
	})
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\nPOST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"); err != nil {
		t.Fatal(err)
	}
	if get, post := <-got, <-got; !get || post {
		t.Errorf("NoBody: GET %v, POST with a body %v; want true, false", get, post)
	}
}

// TestRemoteAddr: every request of a connection has the client's address,
// made once for the connection (connState.RemoteAddr).
func TestRemoteAddr(t *testing.T) {
	got := make(chan string, 2)
	_, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.RemoteAddr
	})
	if _, err := io.WriteString(c, "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	want := c.LocalAddr().String()
	var addrs [2]string
	for i := range addrs {
		if addrs[i] = <-got; addrs[i] != want {
			t.Errorf("request %d: RemoteAddr %q; want %q", i, addrs[i], want)
		}
	}
	if unsafe.StringData(addrs[0]) != unsafe.StringData(addrs[1]) {
		t.Error("the two requests' RemoteAddr are two strings; want the one made for the connection")
	}
}

// TestHandlerKeepsRequest: a request a handler keeps after it returns is
// left as it was when the next request on the connection is served (nbio
// recycles its own request objects; the App gets copies).
func TestHandlerKeepsRequest(t *testing.T) {
	kept := make(chan *http.Request, 1)
	done := make(chan struct{}, 2)
	_, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/keep" {
			kept <- r
		}
		_, _ = io.WriteString(w, "ok")
		done <- struct{}{}
	})
	if _, err := io.WriteString(c, "GET /keep HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for _, path := range []string{"/keep", "/other"} {
		if path == "/other" {
			if _, err := io.WriteString(c, "GET /other HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		<-done
	}
	r := <-kept
	if r.Method != "GET" || r.URL == nil || r.URL.Path != "/keep" || r.Header.Get("X-A") != "1" {
		t.Errorf("the kept request: %s %v, X-A %q; want GET /keep, X-A 1", r.Method, r.URL, r.Header.Get("X-A"))
	}
}

// TestHijackedConnectionGetsNoResponse: a handler that hijacks the
// connection and returns leaves it to the hijacker; the engine writes no
// response of its own into it.
func TestHijackedConnectionGetsNoResponse(t *testing.T) {
	conns := make(chan net.Conn, 1)
	sv, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		hc, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			close(conns)
			return
		}
		_, _ = io.WriteString(hc, "raw ")
		conns <- hc
	})
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	hc, ok := <-conns
	if !ok {
		return
	}
	// Once the request is no longer in flight, whatever the engine was to
	// write after the handler has been written.
	for deadline := time.Now().Add(20 * time.Second); sv.inFlight.Load() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request still in flight after 20s")
		}
	}
	_, _ = io.WriteString(hc, "end")
	hc.Close()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, err := io.ReadAll(c)
	if got, want := string(b), "raw end"; got != want || err != nil {
		t.Errorf("the client read %q, %v; want %q, nil", got, err, want)
	}
}

// TestDeclaredLengthKeepsConnection: a response whose Content-Length the
// handler declared, and whose body matches it, leaves the connection open
// for the next request.
func TestDeclaredLengthKeepsConnection(t *testing.T) {
	_, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "3")
		_, _ = io.WriteString(w, "abc")
	})
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	for i := range 2 {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		if string(b) != "abc" || err != nil || resp.Close {
			t.Fatalf("response %d: %q, %v, close %v; want abc, nil, false", i, b, err, resp.Close)
		}
	}
}

// TestRespondFields: the fields of a response the engine writes itself are
// the handler's, each once, and the framing is left to nbio's writer where
// the handler's fields ask for one respond does not write. A handler's
// fields come in map order, so each case runs several times.
func TestRespondFields(t *testing.T) {
	_, c0 := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		switch r.URL.Path {
		case "/typed":
			h.Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "{}")
		case "/close":
			h.Set("Connection", "close")
			_, _ = io.WriteString(w, "bye")
		case "/chunked":
			// A Transfer-Encoding of the handler's has nbio chunk.
			h.Set("Transfer-Encoding", "chunked")
			h.Set("Content-Length", "3")
			_, _ = io.WriteString(w, "abc")
		case "/bad-length":
			// nbio drops a length that does not parse, and chunks.
			h.Set("Content-Length", "x")
		case "/short":
			// A body short of its length closes the connection, an
			// empty Trailer beside it or not.
			h["Trailer"] = []string{}
			h.Set("Content-Length", "5")
			_, _ = io.WriteString(w, "abc")
		}
	})
	addr := c0.RemoteAddr().String()
	// A batch respond leaves empty, its response handed back to nbio, is
	// put back without a write.
	var empty atomic.Int64
	hook := func(n int) {
		if n == 0 {
			empty.Add(1)
		}
	}
	testHookFlushed.Store(&hook)
	defer testHookFlushed.Store(nil)
	get := func(t *testing.T, req string) (*http.Response, []byte, error) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return nil, nil, err
		}
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	getRaw := func(t *testing.T, req string) (string, error) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(c)
		return string(b), err
	}
	for range 20 {
		resp, b, err := get(t, "GET /typed HTTP/1.1\r\nHost: a\r\n\r\n")
		if err != nil || string(b) != "{}" || len(resp.Header["Content-Type"]) != 1 {
			t.Fatalf("/typed: %v, %q; want the handler's one Content-Type, body {}", err, b)
		}
		// The client reads the raw head: it would drop Connection: close.
		raw, err := getRaw(t, "GET /close HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
		if err != nil || strings.Count(raw, "\r\nConnection: close\r\n") != 1 || !strings.HasSuffix(raw, "\r\n\r\nbye") {
			t.Fatalf("/close: %q, %v; want one Connection field, body bye", raw, err)
		}
		// HEAD gets the length GET would (finish gives it).
		raw, err = getRaw(t, "HEAD /typed HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
		if err != nil || !strings.Contains(raw, "\r\nContent-Length: 2\r\n") {
			t.Fatalf("HEAD /typed: %q, %v; want Content-Length: 2", raw, err)
		}
		_, b, err = get(t, "GET /chunked HTTP/1.1\r\nHost: a\r\n\r\n")
		if err != nil || string(b) != "abc" {
			t.Fatalf("/chunked: %q, %v; want abc, nil", b, err)
		}
		_, b, err = get(t, "GET /bad-length HTTP/1.1\r\nHost: a\r\n\r\n")
		if err != nil || len(b) != 0 {
			t.Fatalf("/bad-length: %q, %v; want an empty body, nil", b, err)
		}
		_, b, err = get(t, "GET /short HTTP/1.1\r\nHost: a\r\n\r\n")
		if string(b) != "abc" || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("/short: %q, %v; want abc, then the connection closed", b, err)
		}
	}
	if n := empty.Load(); n != 0 {
		t.Errorf("%d empty batches written; want none", n)
	}
}

// TestAppendDate: the Date field is the current second's, formatted when
// none has been yet and again when the second has changed.
func TestAppendDate(t *testing.T) {
	dateNow.Store(nil)
	check := func(line []byte) {
		t.Helper()
		s, ok := strings.CutPrefix(string(line), "Date: ")
		s, ok2 := strings.CutSuffix(s, "\r\n")
		d, err := time.Parse(http.TimeFormat, s)
		if !ok || !ok2 || err != nil || time.Since(d) > time.Minute || time.Since(d) < -time.Second {
			t.Fatalf("got %q (%v); want a Date field of now", line, err)
		}
	}
	check(appendDate(nil))
	dateNow.Store(&date{unix: 1, line: []byte("Date: Thu, 01 Jan 1970 00:00:01 GMT\r\n")})
	check(appendDate(nil))
}
