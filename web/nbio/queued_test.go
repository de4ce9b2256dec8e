package nbio

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
)

// TestQueuedOutputIsBounded: a handler writing to a client that reads
// nothing has its writes held once maxQueued bytes wait in nbio's queue
// beyond what the sockets took; the write timeout then ends the
// connection, and the handler's write fails (conn.go, maxQueued and
// Write's drain). The timeout only bounds how long the test takes.
func TestQueuedOutputIsBounded(t *testing.T) {
	var sv *server
	pending := func() int64 {
		sv.mu.Lock()
		defer sv.mu.Unlock()
		for _, st := range sv.conns {
			return st.queued.Load() - st.written.Load()
		}
		return 0
	}
	var most atomic.Int64
	ended := make(chan error, 1)
	piece := make([]byte, 64<<10)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1099511627776") // more than will ever be written
		for {
			if _, err := w.Write(piece); err != nil {
				ended <- err
				return
			}
			if p := pending(); p > most.Load() {
				most.Store(p)
			}
		}
	})
	es, err := Engine().NewServer(&http.Server{Handler: handler}, web.EngineSettings{WriteTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sv = es.(*server)
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
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing.
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the handler's write ended without an error")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the handler's write was not ended 60 s after the client stopped reading, with a 1 s write timeout")
	}
	const documented = 1 << 20 // docs/web.md: 1 MiB
	// Over half the cap shows the queue filled; the bytes the sockets took
	// since a write returned make the figure a little lower than the cap.
	if m := most.Load(); m > documented || m <= documented/2 {
		t.Errorf("at most %d bytes queued when a write returned; want the cap, %d, approached but not passed", m, documented)
	}
}
