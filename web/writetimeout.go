package web

import (
	"io"
	"net"
	"sync/atomic"
	"time"
)

// DefaultWriteTimeout is how long a write of a response may go without
// progress on a connection of an App made without WriteTimeout.
const DefaultWriteTimeout = 30 * time.Second

// The write timeout is kept per connection, not per request: setting a
// deadline changes a runtime timer, too costly to pay on every write of
// every response (docs/web.md has the figure). A connection re-arms
// its deadline, d from now, before a write only when the deadline it set
// last is older than a quarter of d, which a clock that ticks every d/4
// tells it without reading the time. So every write starts with at least
// 3d/4 before its deadline, and a write that makes no progress for d fails.
// The deadline stays set between responses: net/http clears a connection's
// write deadline after every response, and a connection that let it would
// write the next responses of the same quarter with none.

// writeClock counts quarters of the write timeout; connections compare it
// with the tick at which they last armed their deadline.
type writeClock struct {
	timeout time.Duration
	tick    atomic.Uint64
	stop    chan struct{}
	done    chan struct{}
}

// startWriteClock starts the ticking goroutine; stopClock ends it.
func startWriteClock(timeout time.Duration) *writeClock {
	c := &writeClock{timeout: timeout, stop: make(chan struct{}), done: make(chan struct{})}
	c.tick.Store(1) // connections start at 0: the first write arms
	go func() {
		defer close(c.done)
		t := time.NewTicker(timeout / 4)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				c.tick.Add(1)
			case <-c.stop:
				return
			}
		}
	}()
	return c
}

func (c *writeClock) stopClock() {
	close(c.stop)
	<-c.done
}

// writeTimeoutListener hands out connections whose writes re-arm their
// deadline.
type writeTimeoutListener struct {
	net.Listener
	clock *writeClock
}

func (l writeTimeoutListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &writeTimeoutConn{Conn: c, clock: l.clock}, nil
}

// writeTimeoutConn is a connection whose writes are bounded by the clock's
// timeout.
type writeTimeoutConn struct {
	net.Conn
	clock *writeClock
	armed atomic.Uint64 // the clock's tick when the deadline was last set
}

func (c *writeTimeoutConn) arm() {
	if now := c.clock.tick.Load(); now != c.armed.Load() {
		c.armed.Store(now)
		_ = c.Conn.SetWriteDeadline(time.Now().Add(c.clock.timeout))
	}
}

// SetWriteDeadline passes a deadline on, to hold until the connection next
// re-arms its own; a zero t, which net/http sends after every response, is
// ignored, so that the connection's deadline stays in force.
func (c *writeTimeoutConn) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline is SetWriteDeadline for writes and passes reads' deadline on:
// net/http clears both when it hands a connection to a Hijacker.
func (c *writeTimeoutConn) SetDeadline(t time.Time) error {
	if t.IsZero() {
		return c.Conn.SetReadDeadline(t)
	}
	return c.Conn.SetDeadline(t)
}

// writeChunk is how much one write or sendfile may send between checks of
// the deadline: a handler may write a large body in one call, and a static
// file goes out in one ReadFrom, and the deadline must restart as they make
// progress.
const writeChunk = 256 << 10

func (c *writeTimeoutConn) Write(p []byte) (int, error) {
	var written int
	for {
		c.arm()
		chunk := p[written:min(len(p), written+writeChunk)]
		n, err := c.Conn.Write(chunk)
		written += n
		if err != nil || written == len(p) {
			return written, err
		}
	}
}

// ReadFrom keeps net/http's sendfile path for static files, a chunk at a
// time, re-arming the deadline between chunks.
func (c *writeTimeoutConn) ReadFrom(r io.Reader) (int64, error) {
	rf, ok := c.Conn.(io.ReaderFrom)
	if !ok {
		c.arm()
		return io.Copy(struct{ io.Writer }{c}, r)
	}
	// Keep the reader's own type in each chunk: sendfile needs an *os.File,
	// alone or in an *io.LimitedReader, which is what http.ServeContent hands
	// over.
	outer, limited := r.(*io.LimitedReader)
	src := r
	if limited {
		src = outer.R
	}
	var total int64
	for {
		chunk := int64(writeChunk)
		if limited {
			chunk = min(chunk, outer.N)
			if chunk <= 0 {
				return total, nil
			}
		}
		c.arm()
		n, err := rf.ReadFrom(&io.LimitedReader{R: src, N: chunk})
		total += n
		if limited {
			outer.N -= n
		}
		if err != nil || n < chunk {
			return total, err
		}
	}
}

// Unwrap returns the connection underneath, for code that looks for a
// *net.TCPConn.
func (c *writeTimeoutConn) Unwrap() net.Conn { return c.Conn }
