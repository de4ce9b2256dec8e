package nbio

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lesismal/nbio"

	"github.com/loomrt/loom/web"
)

// heldPoller serves "ok" on one poller and holds that poller inside a
// batch, on a read of a connection of its own; release (which t's cleanup
// calls if the test has not) lets it go on. It returns the server, its
// address, and the held connection, whose request is answered once the
// poller goes on.
func heldPoller(t *testing.T) (sv *server, addr string, held net.Conn, release func()) {
	t.Helper()
	es, err := Engine().NewServer(&http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})}, web.EngineSettings{})
	if err != nil {
		t.Fatal(err)
	}
	sv = es.(*server)
	sv.config.NPoller = 1 // the held poller is every new connection's
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- sv.Serve(ln) }()
	addr = ln.Addr().String()
	held = dialAndWait(t, addr, sv, 1)
	heldAddr := held.LocalAddr().String()
	entered, let := make(chan struct{}), make(chan struct{})
	var once, releaseOnce sync.Once
	hook := func(c *nbio.Conn) {
		if c.RemoteAddr().String() == heldAddr {
			once.Do(func() {
				close(entered)
				<-let
			})
		}
	}
	testHookRead.Store(&hook)
	release = func() { releaseOnce.Do(func() { close(let) }) }
	t.Cleanup(func() {
		release()
		testHookRead.Store(nil)
		_ = held.Close()
		_ = sv.Close()
		<-served
	})
	if _, err := io.WriteString(held, heldRequest); err != nil {
		t.Fatal(err)
	}
	<-entered // the poller is in the middle of a batch
	return sv, addr, held, release
}

const heldRequest = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"

// wantOK reads an "ok" answer from each of conns.
func wantOK(t *testing.T, conns ...net.Conn) {
	t.Helper()
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("after the batch: %v", err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2))
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "ok" {
			t.Fatalf("after the batch: %d %q; want 200 \"ok\"", resp.StatusCode, b)
		}
	}
}

// TestAcceptPassesThePollersFence: a connection accepted while its poller
// handles a batch is handed to nbio only once the poller has finished that
// batch, so no event the batch holds for the descriptor's previous
// connection can reach it.
func TestAcceptPassesThePollersFence(t *testing.T) {
	sv, addr, held, release := heldPoller(t)
	late, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	if _, err := io.WriteString(late, heldRequest); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // time for the accept loop to hand it over
	if n := open(sv); n != 1 {
		t.Fatalf("%d connections handed to nbio while the poller was in a batch; want 1", n)
	}
	release()
	wantOK(t, held, late)
}

// dialAndWait dials addr and waits until sv has n open connections.
func dialAndWait(t *testing.T, addr string, sv *server, n int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); open(sv) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("connection not opened in 20s")
		}
	}
	return c
}

func open(sv *server) int {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return len(sv.conns)
}

// TestFenceOnEveryPoller: with several pollers, each has a fence on a
// descriptor nbio gives to it (descriptor modulo pollers), and connections
// accepted onto each of them are served.
func TestFenceOnEveryPoller(t *testing.T) {
	es, err := Engine().NewServer(&http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})}, web.EngineSettings{})
	if err != nil {
		t.Fatal(err)
	}
	sv := es.(*server)
	const pollers = 4
	sv.config.NPoller = pollers
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- sv.Serve(ln) }()
	defer func() {
		_ = sv.Close()
		<-served
	}()
	// Connections are served only once the fences are up.
	for i := range 2 * pollers {
		c := dialAndWait(t, ln.Addr().String(), sv, i+1)
		defer c.Close()
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("connection %d: %d; want 200", i, resp.StatusCode)
		}
	}
	sv.mu.Lock()
	fences := sv.fences
	sv.mu.Unlock()
	if len(fences) != pollers {
		t.Fatalf("%d fences; want %d", len(fences), pollers)
	}
	for i, f := range fences {
		if got := f.nc.Hash() % pollers; got != i {
			t.Errorf("fence %d on poller %d", i, got)
		}
	}
}

// TestBurstPassesTheFenceOnce: connections that arrive while the poller is
// in a batch are handed over past one pass of its fence together, not a
// pass each (each waits for the poller's next batch), and all are served.
func TestBurstPassesTheFenceOnce(t *testing.T) {
	var passes, made atomic.Int32
	count := func() { passes.Add(1) }
	testHookPass.Store(&count)
	defer testHookPass.Store(nil)
	countMade := func() { made.Add(1) }
	testHookMade.Store(&countMade)
	defer testHookMade.Store(nil)
	_, addr, held, release := heldPoller(t)
	passes.Store(0) // the held connection's

	const burst = 16
	conns := make([]net.Conn, burst)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, heldRequest); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	// The first waits at its pass; the others are made meanwhile.
	for deadline := time.Now().Add(20 * time.Second); made.Load() < burst+1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d connections made in 20s", made.Load()-1, burst)
		}
	}
	release()
	wantOK(t, append(conns, held)...)
	if n := passes.Load(); n > 2 {
		t.Errorf("%d passes of the fence for %d connections that came in one batch; want 2 (the first's, then the rest's)", n, burst)
	}
}

// TestAcceptBatchIsBounded: one round of fence passes hands over at most
// 256 connections (docs/web.md); the rest wait for the next.
func TestAcceptBatchIsBounded(t *testing.T) {
	l := &pausingListener{accepted: make(chan *nbio.Conn, 1024)}
	for range 300 {
		l.accepted <- nil
	}
	if b := l.batch(nil); len(b) != 256 || len(l.accepted) != 300-255 {
		t.Errorf("a batch of %d, %d left, from 301 made; want 256, 45 left", len(b), len(l.accepted))
	}
	if b := l.batch(nil); len(b) != 46 || len(l.accepted) != 0 {
		t.Errorf("the next batch: %d, %d left; want 46, none", len(b), len(l.accepted))
	}
}
