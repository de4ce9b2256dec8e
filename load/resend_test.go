package load

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// dropServer is a real HTTP/1.1 server on a local TCP port that answers
// the first answered requests on each connection with keep-alive framing,
// then reads the next request in full (body included, so that closing sends
// a FIN and not a reset) and closes the connection without a byte of
// response. It counts every request it read, answered or not.
func dropServer(t *testing.T, answered int) (url string, seen *atomic.Int64) {
	t.Helper()
	return closingServer(t, answered, false)
}

// resetServer is dropServer with a reset (RST) instead of a FIN: it sets
// no linger before closing.
func resetServer(t *testing.T, answered int) (url string, seen *atomic.Int64) {
	t.Helper()
	return closingServer(t, answered, true)
}

func closingServer(t *testing.T, answered int, reset bool) (url string, seen *atomic.Int64) {
	t.Helper()
	seen = new(atomic.Int64)
	url = tcpServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return // the client closed its end
			}
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				return
			}
			seen.Add(1)
			if n == answered {
				if reset {
					_ = c.(*net.TCPConn).SetLinger(0)
				}
				return // closes: the request goes unanswered
			}
			body := "ok"
			if req.Method == http.MethodHead {
				body = ""
			}
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"+body); err != nil {
				return
			}
		}
	})
	return url, seen
}

func TestClosedReusedConnectionResendsOnlyReplayable(t *testing.T) {
	// Two requests over one connection: the server answers the first and
	// closes the connection on the second after reading it. A replayable
	// request goes again on a new connection, where it is answered; any
	// other is counted as closed and never reaches the server again.
	for _, tc := range []struct {
		method string
		header http.Header
		resend bool
	}{
		{method: "GET", resend: true},
		{method: "HEAD", resend: true},
		{method: "OPTIONS", resend: true},
		{method: "TRACE", resend: true},
		{method: "POST"},
		{method: "PATCH"},
		{method: "PUT"},    // idempotent by RFC 9110, but see replayable
		{method: "DELETE"}, // likewise
		{method: "POST", header: http.Header{"Idempotency-Key": {"k1"}}, resend: true},
		{method: "PUT", header: http.Header{"x-idempotency-key": {"k2"}}, resend: true}, // not canonical
	} {
		for _, mode := range []Mode{Closed, Open} {
			name := fmt.Sprintf("%s_%d_headers_%s", tc.method, len(tc.header), mode)
			t.Run(name, func(t *testing.T) {
				url, seen := dropServer(t, 1)
				target := Target{Method: tc.method, URL: url, Header: tc.header}
				switch tc.method {
				case "POST", "PATCH", "PUT":
					target.Body = []byte(`{"n":1}`)
				}
				cfg := Config{Targets: []Target{target}, Requests: 2}
				if mode == Open {
					// One connection, so that the second request goes on the
					// connection the first one used.
					cfg.Rate, cfg.MaxConns = 1000, 1
				}
				res := mustRun(t, cfg)

				wantSeen, wantServed, wantClosed, wantReconnects := int64(2), int64(1), int64(1), int64(0)
				if tc.resend {
					wantSeen, wantServed, wantClosed, wantReconnects = 3, 2, 0, 1
				}
				if got := seen.Load(); got != wantSeen {
					t.Errorf("server read %d requests; want %d", got, wantSeen)
				}
				if res.Requests != wantServed || res.Errors.Closed != wantClosed || res.Errors.Total() != wantClosed {
					t.Errorf("served %d, closed %d, errors %+v; want %d served, %d closed, no other error",
						res.Requests, res.Errors.Closed, res.Errors, wantServed, wantClosed)
				}
				if res.Sent != 2 {
					t.Errorf("sent %d; want 2 (a re-send is not a new request)", res.Sent)
				}
				if res.Reconnects != wantReconnects {
					t.Errorf("reconnects %d; want %d", res.Reconnects, wantReconnects)
				}
			})
		}
	}
}

func TestClosedNewConnectionIsNotResent(t *testing.T) {
	// A connection that never answered anything was not closed for being
	// idle: even a GET is not sent again, and each failure says closed.
	url, seen := dropServer(t, 0)
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Requests: 3})
	if got := seen.Load(); got != 3 {
		t.Errorf("server read %d requests; want 3", got)
	}
	if res.Errors.Closed != 3 || res.Errors.Total() != 3 || res.Requests != 0 {
		t.Errorf("served %d, errors %+v; want 0 served and 3 closed", res.Requests, res.Errors)
	}
	// No keep-alive connection was closed: the server closed new ones.
	if res.Connects != 3 || res.Reconnects != 0 {
		t.Errorf("connects %d, reconnects %d; want 3 and 0", res.Connects, res.Reconnects)
	}
}

// TestTimeoutOnAReusedConnectionIsNotResent has the server answer the
// first request, leave the second unanswered past the timeout and answer
// the third. The timed-out GET is not sent again (the server did not close
// the connection: it is slow), and the connection the client then opens
// is not counted as a reconnect.
func TestTimeoutOnAReusedConnectionIsNotResent(t *testing.T) {
	var seen atomic.Int64
	url := tcpServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			if seen.Add(1) == 2 {
				_, _ = io.Copy(io.Discard, br) // until the client gives up and closes
				return
			}
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
				return
			}
		}
	})
	// The timeout is long enough that the answered requests never reach it
	// on a busy machine: only the held one does.
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Requests: 3, Timeout: 2 * time.Second})
	if res.Requests != 2 || res.Errors.Timeout != 1 || res.Errors.Total() != 1 {
		t.Errorf("served %d, errors %+v; want 2 served and 1 timeout", res.Requests, res.Errors)
	}
	if got := seen.Load(); got != 3 || res.Sent != 3 {
		t.Errorf("server read %d requests, client sent %d; want 3 and 3", got, res.Sent)
	}
	if res.Connects != 2 || res.Reconnects != 0 {
		t.Errorf("connects %d, reconnects %d; want 2 and 0", res.Connects, res.Reconnects)
	}
}

func TestReplayable(t *testing.T) {
	for _, tc := range []struct {
		method string
		header http.Header
		want   bool
	}{
		{"GET", nil, true},
		{"HEAD", nil, true},
		{"OPTIONS", nil, true},
		{"TRACE", nil, true},
		{"POST", nil, false},
		{"PUT", nil, false},
		{"DELETE", nil, false},
		{"PATCH", nil, false},
		{"get", nil, false}, // methods are case-sensitive: this is not GET
		{"POST", http.Header{"Idempotency-Key": {"a"}}, true},
		{"DELETE", http.Header{"X-Idempotency-Key": {"a"}}, true},
		{"PATCH", http.Header{"IDEMPOTENCY-KEY": {""}}, true}, // written, though empty
		{"POST", http.Header{"Idempotency-Key": {}}, false},   // no value: not written
		{"POST", http.Header{"X-Idempotency-Key": {}}, false}, // likewise
		{"POST", http.Header{"Idempotency": {"a"}}, false},
	} {
		if got := replayable(tc.method, tc.header); got != tc.want {
			t.Errorf("replayable(%q, %v) = %t; want %t", tc.method, tc.header, got, tc.want)
		}
	}
}

// TestResetConnection has the server reset the connection instead of
// closing it: on a reused connection a GET goes again, as after a close,
// and a POST counts as reset; on a new one, each request counts as reset.
func TestResetConnection(t *testing.T) {
	for _, tc := range []struct {
		method   string
		answered int
		requests int64
		served   int64
		reset    int64
	}{
		{"GET", 1, 2, 2, 0},
		{"POST", 1, 2, 1, 1},
		{"GET", 0, 3, 0, 3},
	} {
		t.Run(fmt.Sprintf("%s_after_%d", tc.method, tc.answered), func(t *testing.T) {
			url, _ := resetServer(t, tc.answered)
			res := mustRun(t, Config{Targets: []Target{{Method: tc.method, URL: url}}, Requests: tc.requests})
			if res.Requests != tc.served || res.Errors.Reset != tc.reset || res.Errors.Total() != tc.reset {
				t.Errorf("served %d, errors %+v; want %d served, %d reset, no other error", res.Requests, res.Errors, tc.served, tc.reset)
			}
		})
	}
}
