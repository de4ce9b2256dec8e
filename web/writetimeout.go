package web

import (
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// DefaultWriteTimeout is how long a write of a response may go without
// progress on a connection of an App made without WithWriteTimeout.
const DefaultWriteTimeout = 30 * time.Second

// The write timeout is kept per connection, not per request: setting a
// deadline changes a runtime timer, too costly to pay on every write of
// every response (docs/web.md has the figure). A connection re-arms its
// deadline, d from now, before a write only when the deadline it set last
// is older than a quarter of d. It reads the monotonic clock to tell (tens
// of nanoseconds beside a write's system call): a clock kept by a ticking
// goroutine would save that read, but a goroutine starved on a busy machine
// stops ticking, and a slow client that kept reading would then see its
// response cut off although data moved. So every write starts with at least
// 3d/4 before its deadline, and a write that makes no progress for d fails.
// The deadline stays set between responses: net/http clears a connection's
// write deadline after every response, and a connection that let it would
// write the next responses of the same quarter with none.

// writeClock is the write timeout and the origin of the connections'
// monotonic readings.
type writeClock struct {
	timeout time.Duration
	epoch   time.Time
	chunk   int // writeChunk when the clock was made
}

func newWriteClock(timeout time.Duration) *writeClock {
	return &writeClock{timeout: timeout, epoch: time.Now(), chunk: int(writeChunk.Load())}
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
	// armed is when the deadline was last set, in nanoseconds since the
	// clock's epoch plus one; 0 means never.
	armed atomic.Int64
}

func (c *writeTimeoutConn) arm() {
	now := time.Now()
	since := int64(now.Sub(c.clock.epoch)) + 1
	if last := c.armed.Load(); last == 0 || time.Duration(since-last) >= c.clock.timeout/4 {
		c.armed.Store(since)
		_ = c.Conn.SetWriteDeadline(now.Add(c.clock.timeout))
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
// progress. (A variable only so that a test can make the steps small; an
// App reads it once, when it starts serving.)
var writeChunk atomic.Int64

func init() { writeChunk.Store(256 << 10) }

func (c *writeTimeoutConn) Write(p []byte) (int, error) {
	var written int
	for {
		c.arm()
		chunk := p[written:min(len(p), written+c.clock.chunk)]
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
		chunk := int64(c.clock.chunk)
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

// streamWriteTimeout applies the write timeout to each HTTP/2 stream. The
// connections' deadline does not reach a stream whose client stops
// reading: HTTP/2's flow control stops the stream, not the socket, and its
// handler would wait for window for ever while other streams flow. So an
// HTTP/2 response's writes re-arm a deadline of the stream's own (
// http.ResponseController.SetWriteDeadline) by the same rule as a
// connection's, and a write that makes no progress for the timeout fails
// with an error matching os.ErrDeadlineExceeded. HTTP/1 requests pass
// through untouched.
type streamWriteTimeout struct {
	next    http.Handler
	timeout time.Duration
}

func (h streamWriteTimeout) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 2 {
		h.next.ServeHTTP(w, r)
		return
	}
	h.next.ServeHTTP(&streamWriter{ResponseWriter: w, timeout: h.timeout, chunk: min(int(writeChunk.Load()), streamChunk)}, r)
}

// streamChunk is how much one write to an HTTP/2 stream may send between
// checks of the stream's deadline. The deadline restarts only between
// chunks, so a chunk must go out within ¾ of the timeout: at a connection's
// 256 KiB, a client reading a stream steadily at under 256 KiB per ¾ of the
// timeout (11 KiB/s at the 30 s default) would be cut off although data
// moved; at 64 KiB the floor is 2.8 KiB/s. A stream's data goes out in
// frames of 16 KiB, each handed to the connection's writer by its serving
// goroutine, and the handler's write returns once the chunk's last frame is
// written: 64 KiB keeps four frames queued per wake-up of the handler.
const streamChunk = 64 << 10

// streamWriter is an HTTP/2 response whose writes re-arm the stream's
// write deadline. Like any ResponseWriter it is used by one goroutine at a
// time.
type streamWriter struct {
	http.ResponseWriter
	timeout time.Duration
	chunk   int
	armed   time.Time // when the deadline was last set; zero: never
}

func (w *streamWriter) arm() {
	now := time.Now()
	if w.armed.IsZero() || now.Sub(w.armed) >= w.timeout/4 {
		w.armed = now
		_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(now.Add(w.timeout))
	}
}

// failed turns the error of a write cut off by the stream's deadline
// (net/http reports it as a closed stream) into one matching
// os.ErrDeadlineExceeded, as on a connection.
func (w *streamWriter) failed(err error) error {
	if err != nil && !w.armed.IsZero() && time.Since(w.armed) >= w.timeout {
		return &streamTimeoutError{err}
	}
	return err
}

func (w *streamWriter) Write(p []byte) (int, error) {
	var written int
	for {
		w.arm()
		n, err := w.ResponseWriter.Write(p[written:min(len(p), written+w.chunk)])
		written += n
		if err != nil || written == len(p) {
			return written, w.failed(err)
		}
	}
}

func (w *streamWriter) WriteString(s string) (int, error) {
	var written int
	for {
		w.arm()
		n, err := io.WriteString(w.ResponseWriter, s[written:min(len(s), written+w.chunk)])
		written += n
		if err != nil || written == len(s) {
			return written, w.failed(err)
		}
	}
}

// Flush implements http.Flusher: a flush waits for the stream's window as
// a write does.
func (w *streamWriter) Flush() {
	w.arm()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the stream's writer.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// streamTimeoutError is a write cut off by a stream's write deadline.
type streamTimeoutError struct{ err error }

func (e *streamTimeoutError) Error() string {
	return "write to HTTP/2 stream: " + os.ErrDeadlineExceeded.Error()
}
func (e *streamTimeoutError) Is(target error) bool { return target == os.ErrDeadlineExceeded }
func (e *streamTimeoutError) Unwrap() error        { return e.err }
