package nbio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
// together go out in one write to the socket, not one each (respond.go).
// The first handler waits until all of them are queued behind it, so that
// the batch is whole however the goroutines run.
func TestPipelinedBatchInOneWrite(t *testing.T) {
	const n = 16
	var sv *server
	waited := make(chan error, 1)
	sv, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/0" {
			waited <- waitPending(sv, n)
		}
		_, _ = io.WriteString(w, "ok "+r.URL.Path)
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
		if got, want := string(b), fmt.Sprintf("ok /%d", i); got != want || resp.ContentLength != int64(len(want)) {
			t.Fatalf("response %d: got %q with length %d; want %q with its length", i, got, resp.ContentLength, want)
		}
	}
	if got := writes.Load(); got != 1 {
		t.Errorf("got %d writes for %d pipelined responses; want 1", got, n)
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
	for i := range 2 {
		if addr := <-got; addr != want {
			t.Errorf("request %d: RemoteAddr %q; want %q", i, addr, want)
		}
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
