package nbio

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/lesismal/nbio"
)

// A poller's event can reach the wrong connection. nbio's poller takes a
// batch of events from epoll, then handles them one at a time, finding each
// event's connection by its file descriptor, and it closes a connection on
// a hang-up event. A connection closed off the poller (after a response
// with Connection: close, a refused request, the sweeper, nbio's own
// deadline timers) frees its descriptor while an event of its may still
// wait in the batch. If the descriptor went to a new connection before the
// poller came to that event, the event would be taken as the new
// connection's, and a hang-up would close it before its first request.
//
// A fence rules that out: the engine hands a new connection to nbio only
// once the poller it will belong to has taken a batch after the
// connection's descriptor was made. Every event of the descriptor's
// previous connection was taken in an earlier batch, and the poller has
// handled that batch whole, before it began the next. Each poller has a
// fence: one end of a socket pair, read by the poller; a byte written to
// the other end comes to the poller in a batch taken after the write.
type fence struct {
	nc   *nbio.Conn    // the end the poller reads
	peer int           // the end written to
	seen chan struct{} // a byte was read
}

// newFences makes a fence on each of eng's n pollers, which nbio chooses by
// descriptor modulo n.
func newFences(eng *nbio.Engine, n int) ([]*fence, error) {
	fences := make([]*fence, n)
	var spare []*nbio.Conn // descriptors held so the next ones differ
	defer func() {
		for _, c := range spare {
			_ = c.Close()
		}
	}()
	for tries := 0; ; tries++ {
		missing := -1
		for i, f := range fences {
			if f == nil {
				missing = i
				break
			}
		}
		if missing < 0 {
			return fences, nil
		}
		if tries > 8*n+64 {
			closeFences(fences)
			return nil, fmt.Errorf("nbio engine: no descriptor for poller %d of %d", missing, n)
		}
		nc, peer, err := socketPair()
		if err != nil {
			closeFences(fences)
			return nil, err
		}
		i := nc.Hash() % n
		if fences[i] != nil {
			_ = syscall.Close(peer)
			spare = append(spare, nc)
			continue
		}
		f := &fence{nc: nc, peer: peer, seen: make(chan struct{}, 1)}
		nc.SetSession(f)
		if _, err := eng.AddConn(nc); err != nil {
			_ = syscall.Close(peer)
			closeFences(fences)
			return nil, fmt.Errorf("nbio engine: fence: %w", err)
		}
		fences[i] = f
	}
}

// socketPair returns a connected pair: nbio's end, and the other's
// descriptor.
func socketPair() (*nbio.Conn, int, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("nbio engine: fence: %w", err)
	}
	file := os.NewFile(uintptr(fds[0]), "fence")
	c, err := net.FileConn(file)
	_ = file.Close()
	if err != nil {
		_ = syscall.Close(fds[1])
		return nil, 0, fmt.Errorf("nbio engine: fence: %w", err)
	}
	nc, err := nbio.NBConn(c)
	if err != nil {
		_ = c.Close()
		_ = syscall.Close(fds[1])
		return nil, 0, fmt.Errorf("nbio engine: fence: %w", err)
	}
	return nc, fds[1], nil
}

// closeFences closes the writing ends; nbio closes the others when it
// stops.
func closeFences(fences []*fence) {
	for _, f := range fences {
		if f != nil {
			_ = syscall.Close(f.peer)
		}
	}
}

// read runs on the poller: it takes the bytes written, and tells pass.
func (f *fence) read(c *nbio.Conn, buf []byte) {
	n, err := c.Read(buf)
	if n > 0 {
		select {
		case f.seen <- struct{}{}:
		default:
		}
	}
	if err != nil && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EINTR) || err == nil && n == 0 {
		_ = c.Close()
	}
}

// pass returns once the poller has taken a batch after pass began, or
// errClosed once stop is closed.
func (f *fence) pass(stop <-chan struct{}) error {
	if h := testHookPass.Load(); h != nil {
		(*h)()
	}
	select {
	case <-f.seen: // a byte of an earlier pass
	default:
	}
	for {
		_, err := syscall.Write(f.peer, []byte{0})
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("nbio engine: fence: %w", err)
		}
	}
	select {
	case <-f.seen:
		return nil
	case <-stop:
		return net.ErrClosed
	}
}

// testHookPass, when set, is called at each pass of a fence.
var testHookPass atomic.Pointer[func()]
