package nbio

import (
	"errors"
	"net"
	"testing"
	"time"
)

// parkedWorkers lists on s workers parked at the given times on the
// server's clock, the longest parked first, as park leaves them.
func parkedWorkers(s *server, at ...time.Duration) []*worker {
	ws := make([]*worker, len(at))
	for i, a := range at {
		ws[i] = &worker{next: make(chan func(), 1), parkedAt: int64(a)}
	}
	s.parked = append(s.parked, ws...)
	return ws
}

// ended reports whether w was told to end (a nil on its channel).
func ended(w *worker) bool {
	select {
	case f := <-w.next:
		return f == nil
	default:
		return false
	}
}

// TestRetire: the reaper ends the workers parked for workerIdle and no
// others, and reports whether some are left; a stop ends every parked
// worker, however young, and parks no more, also after a later reaping
// (nbio.go, retire's terms).
func TestRetire(t *testing.T) {
	s := &server{reaping: true}
	ws := parkedWorkers(s, 0, 10*time.Millisecond, 100*time.Millisecond)
	// At 60 ms: the first two have been parked for 60 and 50 ms, workerIdle
	// or more; the last for none.
	if !s.retire(int64(60*time.Millisecond), false) {
		t.Error("retire reports none left; want the youngest still parked")
	}
	for i, want := range []bool{true, true, false} {
		if got := ended(ws[i]); got != want {
			t.Errorf("worker parked at %v: ended %v; want %v", time.Duration(ws[i].parkedAt), got, want)
		}
	}
	if len(s.parked) != 1 || s.parked[0] != ws[2] || !s.reaping || s.wclosed {
		t.Errorf("parked %v, reaping %v, closed %v; want the youngest alone, still reaping, not closed", s.parked, s.reaping, s.wclosed)
	}

	young := parkedWorkers(s, 150*time.Millisecond)[0]
	if s.retire(int64(160*time.Millisecond), true) {
		t.Error("a stop reports workers left")
	}
	if !ended(ws[2]) || !ended(young) || len(s.parked) != 0 || s.reaping || !s.wclosed {
		t.Errorf("after a stop: ended %v and %v, parked %d, reaping %v, closed %v; want every worker ended, none parked, closed",
			ended(ws[2]), ended(young), len(s.parked), s.reaping, s.wclosed)
	}
	// A reaping after the stop does not reopen the server to parking.
	s.retire(int64(200*time.Millisecond), false)
	if !s.wclosed {
		t.Error("a reaping after the stop reopened the server to parking")
	}
}

// failingClose is a listener whose Close fails with err.
type failingClose struct {
	net.Listener
	err error
}

func (l failingClose) Close() error { return l.err }

// TestPausingListenerClose: Close hides the net.ErrClosed of a listener
// that pause closed already, and returns any other error of the listener's
// Close (nbio.go, Close's errors.Is(err, net.ErrClosed)).
func TestPausingListenerClose(t *testing.T) {
	other := errors.New("close failed")
	for _, tc := range []struct {
		err, want error
	}{{net.ErrClosed, nil}, {other, other}, {nil, nil}} {
		l := &pausingListener{Listener: failingClose{err: tc.err}, closed: make(chan struct{})}
		if err := l.Close(); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("Close of a listener failing with %v: %v; want %v", tc.err, err, tc.want)
		}
		select {
		case <-l.closed:
		default:
			t.Errorf("Close of a listener failing with %v: closed not closed", tc.err)
		}
	}
}

// TestHijackDeliverKeepsTheUnread: data delivered to a hijacked connection
// while part of what came before is unread goes after that part; once more
// than half of the buffer is read, the unread part moves to the front, and
// once all of it is read, the buffer starts again (hijack.go, deliver).
func TestHijackDeliverKeepsTheUnread(t *testing.T) {
	h := &hijackedConn{ready: make(chan struct{}, 1)}
	read := func(n int) string {
		p := make([]byte, n)
		k, err := h.Read(p)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		return string(p[:k])
	}
	h.deliver([]byte("abcdef"))
	if got := read(2); got != "ab" {
		t.Fatalf("first read %q; want \"ab\"", got)
	}
	h.deliver([]byte("gh"))
	if got := read(100); got != "cdefgh" {
		t.Errorf("after a delivery with \"cdef\" unread: read %q; want \"cdefgh\"", got)
	}
	h.deliver([]byte("ij"))
	if got := read(100); got != "ij" || h.off != 2 || len(h.buf) != 2 {
		t.Errorf("after a delivery with nothing unread: read %q, buffer %q at %d; want \"ij\" at the front", got, h.buf, h.off)
	}
}
