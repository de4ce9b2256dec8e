package load

import (
	"net/http"
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
