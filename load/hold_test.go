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
}

func TestConnectionLimit(t *testing.T) {
	n, why := ConnectionLimit()
	if limit, ok := fileLimit(); ok && (n <= 0 || n > int(limit) || why == "") {
		t.Errorf("ConnectionLimit() = %d, %q; want a positive count under RLIMIT_NOFILE %d, and a reason", n, why, limit)
	}
}
