package load

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// idleCounter counts a server's connections by state.
type idleCounter struct {
	mu    sync.Mutex
	state map[net.Conn]http.ConnState
}

func (c *idleCounter) track(conn net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == http.StateClosed || s == http.StateHijacked {
		delete(c.state, conn)
		return
	}
	c.state[conn] = s
}

func (c *idleCounter) count(want http.ConnState) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.state {
		if s == want {
			n++
		}
	}
	return n
}

// waitFor polls cond for up to 10 s: the server sees a close some time
// after the client makes it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestHoldLeavesTheServerWithIdleConnections(t *testing.T) {
	counter := &idleCounter{state: map[net.Conn]http.ConnState{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("hello"))
	}))
	srv.Config.ConnState = counter.track
	srv.Start()
	defer srv.Close()

	const n = 50
	held, err := Hold(t.Context(), Target{URL: srv.URL + "/"}, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	if held.Len() != n {
		t.Errorf("Len() = %d; want %d", held.Len(), n)
	}
	// Each connection was used once (else it would be StateNew) and is idle.
	waitFor(t, "50 idle connections on the server", func() bool { return counter.count(http.StateIdle) == n })
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to see them closed", func() bool { return counter.count(http.StateIdle) == 0 })
	if held.Len() != 0 {
		t.Errorf("Len() after Close = %d; want 0", held.Len())
	}
}

func TestHoldRefusesWhatItCannotHold(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"status", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }, "status 404"},
		{"close", func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("Connection", "close") }, "closes the connection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			held, err := Hold(t.Context(), Target{URL: srv.URL}, 5, 0)
			if !errors.Is(err, ErrHold) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "of 5") {
				t.Errorf("Hold = %v; want ErrHold naming the connection and %q", err, tt.want)
			}
			if held == nil {
				t.Fatal("Hold returned no Held with its error")
			}
			held.Close()
		})
	}
	if _, err := Hold(t.Context(), Target{URL: "ftp://x/"}, 1, 0); !errors.Is(err, ErrBadTarget) {
		t.Errorf("Hold(ftp://x/) = %v; want ErrBadTarget", err)
	}
}

func TestHoldStopsWhenCancelled(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	held, err := Hold(ctx, Target{URL: srv.URL}, 3, 0)
	if !errors.Is(err, ErrHold) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Hold under an ending ctx = %v; want ErrHold and the ctx's cause", err)
	}
	if held.Len() != 0 {
		t.Errorf("Len() = %d; want 0", held.Len())
	}
	held.Close()

	// An ended ctx is an error only when it left connections unopened:
	// holding none, none is missing.
	done, cancelDone := context.WithCancel(t.Context())
	cancelDone()
	held, err = Hold(done, Target{URL: srv.URL}, 0, 0)
	if err != nil || held.Len() != 0 {
		t.Errorf("Hold of 0 under an ended ctx = %d held, %v; want 0 and no error", held.Len(), err)
	}
}

func TestConnectionLimit(t *testing.T) {
	n, why := ConnectionLimit()
	if limit, ok := fileLimit(); ok && (n <= 0 || n > int(limit) || why == "") {
		t.Errorf("ConnectionLimit() = %d, %q; want a positive count under RLIMIT_NOFILE %d, and a reason", n, why, limit)
	}
}

// TestConnectionLimitAtEachEdge takes the descriptor limit on each side of
// a port range, at the edges, with limits no process here may set: the
// lower of the two counts, and 64 descriptors kept for the process.
func TestConnectionLimitAtEachEdge(t *testing.T) {
	const lo, hi = 32768, 60999
	const ports = hi - lo + 1
	const byFiles, byPorts = "file descriptor limit", "local port range"
	for _, tc := range []struct {
		name             string
		limit            uint64
		limitOK, rangeOK bool
		n                int
		why              string
	}{
		{"descriptors at the reserve", 64, true, true, ports, byPorts},
		{"descriptors one past the reserve", 65, true, true, 1, byFiles},
		{"descriptors as many as ports", ports + 64, true, true, ports, byFiles},
		{"descriptors one more than ports", ports + 65, true, true, ports, byPorts},
		{"descriptors far more than ports", 1 << 20, true, true, ports, byPorts},
		{"port range unread", 1 << 20, true, false, 1<<20 - 64, byFiles},
		{"descriptor limit unread", 0, false, true, ports, byPorts},
		{"neither read", 0, false, false, 0, ""},
	} {
		n, why := connectionLimit(tc.limit, tc.limitOK, lo, hi, tc.rangeOK)
		if n != tc.n || !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
			t.Errorf("%s: connectionLimit(%d, %t, %d, %d, %t) = %d, %q; want %d and the %s",
				tc.name, tc.limit, tc.limitOK, lo, hi, tc.rangeOK, n, why, tc.n, tc.why)
		}
	}
}
