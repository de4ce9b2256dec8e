package load

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestOpenLoopWithoutTimeoutWaitsForItsResponses runs an open loop with no
// timeout (Timeout < 0), whose responses all come after the schedule ended:
// with no timeout there is no cut-off, so every request is served, and the
// run neither stops early nor trips over the missing cut-off timer.
func TestOpenLoopWithoutTimeoutWaitsForItsResponses(t *testing.T) {
	const n = 3
	all := make(chan struct{})
	srv, count := countingServer(t, func(i int64, w http.ResponseWriter, _ *http.Request) {
		if i == n {
			close(all)
		}
		// Answer once every request arrived, so after the schedule's end.
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			t.Errorf("request %d: the other requests did not arrive within 10s", i)
		}
	})
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Rate: 100, Requests: n, Timeout: -1})
	if res.Requests != n || count.Load() != n {
		t.Errorf("served %d, server saw %d; want %d each (errors %+v)", res.Requests, count.Load(), n, res.Errors)
	}
}

// TestTimelineKeepsEverySecondWithSomething adds seconds that hold one
// kind of count each (requests, errors, bytes) and one that holds none: the
// empty second is left out, and lists no seconds before it either, while
// each of the others counts.
func TestTimelineKeepsEverySecondWithSomething(t *testing.T) {
	var tl timeline
	tl.add(Second{Second: 5})
	if got := tl.list(); len(got) != 0 {
		t.Fatalf("after an empty second: %+v; want nothing", got)
	}
	tl.add(Second{Second: 0, Requests: 1, LatencyTotal: 3, LatencyMax: 3})
	tl.add(Second{Second: 1, Errors: 2})
	tl.add(Second{Second: 2, Bytes: 3})
	tl.add(Second{Second: 0, Requests: 1, Bytes: 10, LatencyTotal: 5, LatencyMax: 5})
	want := []Second{
		{Second: 0, Requests: 2, Bytes: 10, LatencyTotal: 8, LatencyMax: 5},
		{Second: 1, Errors: 2},
		{Second: 2, Bytes: 3},
	}
	if got := tl.list(); !reflect.DeepEqual(got, want) {
		t.Errorf("timeline %+v; want %+v", got, want)
	}
}

// TestRequestDeclaresItsBodyLength checks which requests carry a
// Content-Length: any with a body, whatever the method, and a POST, PUT or
// PATCH without one (as 0); a GET without a body carries none.
func TestRequestDeclaresItsBodyLength(t *testing.T) {
	for _, tc := range []struct {
		target Target
		want   string // "": no Content-Length
	}{
		{Target{URL: "http://127.0.0.1:1/"}, ""},
		{Target{URL: "http://127.0.0.1:1/", Body: []byte("abc")}, "Content-Length: 3\r\n"},
		{Target{URL: "http://127.0.0.1:1/", Body: []byte{}}, "Content-Length: 0\r\n"},
		{Target{Method: "POST", URL: "http://127.0.0.1:1/"}, "Content-Length: 0\r\n"},
		{Target{Method: "PUT", URL: "http://127.0.0.1:1/"}, "Content-Length: 0\r\n"},
		{Target{Method: "PATCH", URL: "http://127.0.0.1:1/"}, "Content-Length: 0\r\n"},
		{Target{Method: "DELETE", URL: "http://127.0.0.1:1/"}, ""},
	} {
		req, err := buildRequest(tc.target)
		if err != nil {
			t.Fatalf("%s with body %q: %v", tc.target.Method, tc.target.Body, err)
		}
		raw := string(req.raw)
		if got := strings.Contains(raw, "Content-Length"); tc.want == "" && got || tc.want != "" && !strings.Contains(raw, tc.want) {
			t.Errorf("%s with body %q: request %q; want Content-Length %q", tc.target.Method, tc.target.Body, raw, tc.want)
		}
	}
}
