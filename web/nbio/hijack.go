package nbio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/lesismal/nbio/nbhttp"
)

// ErrHijack is the error of a Hijack the engine cannot honour: a second
// Hijack of the same connection, or one from a writer nbio did not make.
var ErrHijack = errors.New("nbio engine: connection cannot be hijacked")

// writer is the response writer handlers get: nbio's, with a Hijack that
// hands over a blocking connection (hijackedConn) instead of the event
// loop's own, so that net/http-style upgrades — github.com/coder/websocket,
// and so web/websocket — work unchanged.
//
// Like net/http, it holds the start of an HTTP/1.1 body without a declared
// length (up to smallBody bytes): a handler that returns without flushing
// and wrote no more than that gets a response with a Content-Length
// (finish), not a chunked one. It holds a body of a declared length up to
// smallBody as well, so that a whole small response can be written by the
// engine itself (respond). The body of a response to HEAD is counted,
// never sent: nbio's writer would send it.
type writer struct {
	http.ResponseWriter
	st       *connState // nil if nbio's writer is not on one
	http11   bool       // the request is HTTP/1.1 or later: nbio may chunk the response
	head     bool       // the request is HEAD: the body is counted in headBody, not sent
	headBody int        // the bytes of a response to HEAD written so far
	status   int        // the first status written, for Hijack to send
	started  bool       // a Write or Flush has gone to nbio's writer
	holding  bool       // the body so far is in held, not yet with nbio
	hijacked bool       // Hijack has taken the connection
	fixed    bool       // the header is made safe for nbio's writer (fixFields)
	chunked  bool       // nbio chunks the response (decided at the first Write)
	buffered int        // bytes nbio holds for a chunked response, roughly
	declared int64      // the handler's Content-Length at the first Write; -1: none
	written  int64      // bytes of an unchunked body passed to nbio
	held     []byte     // the body held while holding: a slice of space
	space    [smallBody]byte
}

// smallBody is the most of a body without a declared length the writer
// holds to send with a Content-Length: net/http's 2 KiB.
const smallBody = 2048

var writerPool = sync.Pool{New: func() any { return new(writer) }}

// newWriter returns a writer on w, from a pool; release returns it.
func newWriter(w http.ResponseWriter, st *connState, http11, head bool) *writer {
	ww := writerPool.Get().(*writer)
	ww.ResponseWriter, ww.st, ww.http11, ww.head = w, st, http11, head
	return ww
}

// release clears w and returns it to the pool; w must not be used again.
func (w *writer) release() {
	w.ResponseWriter, w.st, w.held = nil, nil, nil
	w.http11, w.status, w.started, w.holding, w.hijacked, w.chunked, w.buffered = false, 0, false, false, false, false, 0
	w.head, w.headBody, w.written, w.declared, w.fixed = false, 0, 0, 0, false
	writerPool.Put(w)
}

// Write passes p on; a chunked response in pieces (writeChunked), after
// what is held (see writer).
func (w *writer) Write(p []byte) (int, error) {
	if w.status == http.StatusNoContent || w.status == http.StatusNotModified {
		// nbio's writer would send p with a Content-Length, and a client
		// would take it for the start of the next response.
		return 0, http.ErrBodyNotAllowed
	}
	if w.head {
		w.headBody += len(p)
		return len(p), nil
	}
	if !w.started {
		if len(p) == 0 {
			return 0, nil
		}
		w.started = true
		h := w.Header()
		w.chunked = w.http11 && len(h["Content-Length"]) == 0
		w.declared = -1
		if cl := h["Content-Length"]; len(cl) == 1 {
			if n, err := strconv.ParseInt(cl[0], 10, 64); err == nil && n >= 0 {
				w.declared = n
			}
		}
		// A body with a Trailer or a Transfer-Encoding of the handler's is
		// held as well: nbio chunks any response that declares either,
		// whatever its Content-Length, and takes the trailer's values when
		// it writes the head.
		w.holding = w.chunked || w.declared >= 0
		w.held = w.space[:0]
	}
	if w.holding {
		// A body of a declared length is held only while it keeps within
		// it: a Write past it gets nbio's error, as on net/http.
		if n := len(w.held) + len(p); n <= smallBody && (w.chunked || int64(n) <= w.declared) {
			w.held = append(w.held, p...)
			return len(p), nil
		}
		if err := w.spill(); err != nil {
			return 0, err
		}
	}
	w.fixFields()
	if !w.chunked {
		// nbio's writer (v1.6.8) returns the size of the buffer it sent,
		// not of p, when p fills its buffer: io.Copy then stops with an
		// invalid write count, and a static file was cut off at 96 KiB.
		// Without an error it has taken all of p.
		n, err := w.ResponseWriter.Write(p)
		if err == nil {
			n = len(p)
		}
		w.written += int64(n)
		return n, err
	}
	return w.writeChunked(p)
}

// spill stops holding: what is held goes to nbio's writer.
func (w *writer) spill() error {
	w.fixFields()
	w.holding = false
	held := w.held
	w.held = nil
	if !w.chunked {
		if len(held) == 0 {
			return nil
		}
		_, err := w.ResponseWriter.Write(held)
		if err == nil {
			w.written += int64(len(held))
		}
		return err
	}
	w.countHeader()
	_, err := w.writeChunked(held)
	return err
}

// countHeader counts the header in what nbio holds for a chunked response.
func (w *writer) countHeader() {
	for k, vs := range w.Header() {
		for _, v := range vs {
			w.buffered += len(k) + len(v) + 4
		}
	}
}

// finish is called when the handler has returned: a body still held goes
// out whole, with its Content-Length. It reports whether the body fell
// short of a Content-Length the handler declared: the connection must then
// close, as net/http closes it, or the client would read the next response
// as the rest of this one.
func (w *writer) finish() (short bool) {
	// Again, whatever was fixed before: a trailer's values are set after
	// the body.
	cleanFields(w.Header())
	if w.head {
		// The head a GET would get, with the length of its body (net/http
		// gives a small one's), and without a Trailer: nbio would give
		// Content-Length: 0, or that beside a handler's Transfer-Encoding,
		// and send a declared trailer as a chunked body.
		h := w.Header()
		if len(h["Content-Length"]) == 0 {
			h["Content-Length"] = []string{strconv.Itoa(w.headBody)}
			delete(h, "Transfer-Encoding")
		}
		delete(h, "Trailer")
		if w.headBody > 0 && len(h["Content-Type"]) == 0 {
			h["Content-Type"] = []string{"text/plain; charset=utf-8"} // nbio's, as for a GET
		}
		return false
	}
	short = w.short()
	if !w.started && (w.status == 0 || w.status >= 200) {
		// No body: nbio would chunk an empty one in HTTP/1.1. (nbio gives
		// Content-Length: 0 itself to the other bodiless responses, 204,
		// 304 and HTTP/1.0, writes none after a Hijack, and drops it where
		// a Transfer-Encoding or a Trailer of the handler's has it chunk.)
		h := w.Header()
		if len(h["Content-Length"]) == 0 {
			h["Content-Length"] = []string{"0"}
		}
		return short
	}
	if !w.holding {
		return short
	}
	if !w.chunked {
		_ = w.spill()
		return w.short()
	}
	w.holding = false
	w.chunked = false
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(w.held))}
	_, _ = w.ResponseWriter.Write(w.held)
	w.held = nil
	return short
}

// short reports whether the body written falls short of the handler's
// Content-Length; a 304's gives the length of the body it has not. (nbio
// leaves a hijacked connection, the handler's, open whatever r.Close
// says.) A length that does not parse is taken as 0 (never short), one
// past int64 as the most (always).
func (w *writer) short() bool {
	cl := w.Header()["Content-Length"]
	if w.status == http.StatusNotModified || len(cl) != 1 {
		return false
	}
	n, _ := strconv.ParseInt(cl[0], 10, 64)
	return w.written < n
}

// Sizes for writeChunked: nbio's chunked writer (Response.writeChunk in
// v1.6.8) frees its buffer, then writes into it again, when a write takes
// what it holds to 64 KiB or more; the buffer, back in nbio's pool, is
// handed to a queued write as well, which then sends the wrong bytes or
// panics the poller (a 12 MiB chunked response did). The engine keeps
// every write well under that size.
const (
	chunkPiece  = 16 << 10 // the most one write to nbio's writer carries
	chunkBuffer = 40 << 10 // what it may hold before a Flush sends it
)

// writeChunked writes p to nbio's chunked writer in pieces, flushing what it
// holds whenever the next piece would take it past chunkBuffer: a Flush
// sends the buffer and keeps it, without the free.
func (w *writer) writeChunked(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		piece := p[:min(len(p), chunkPiece)]
		if w.buffered+len(piece) > chunkBuffer {
			w.Flush()
		}
		// nbio's writer keeps a piece without writing and drops a Flush's
		// error: ask the connection.
		if w.st != nil && w.st.closed() {
			return n, net.ErrClosed
		}
		m, err := w.ResponseWriter.Write(piece)
		n += m
		w.buffered += len(piece) + 16 // the chunk's size line and CRLF
		if err != nil {
			return n, err
		}
		p = p[len(piece):]
	}
	return n, nil
}

// WriteHeader records the status, which net/http sends at Hijack when it
// is 101, and passes it on. An informational status but 101 goes out at
// once, as on net/http, and the final one follows (inform). A code that is
// not three digits panics, as on net/http.
func (w *writer) WriteHeader(status int) {
	if status < 100 || status > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", status)) // as net/http's
	}
	if status < 200 && status != http.StatusSwitchingProtocols {
		w.inform(status)
		return
	}
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Flush sends what is buffered; a response to HEAD waits for finish,
// which gives its length.
func (w *writer) Flush() {
	if w.head || w.status == http.StatusNoContent || w.status == http.StatusNotModified {
		// A 204's or a 304's head goes when the handler returns (respond),
		// without the Content-Length nbio's writer would give it.
		return
	}
	w.fixFields()
	if w.holding {
		_ = w.spill()
	}
	w.started = true
	w.buffered = 0
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach nbio's writer.
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack takes the connection from nbio's HTTP parser: from now its data
// goes to the returned connection, whose reads block until it comes. As
// under net/http, a status written before (an upgrade's 101) is sent first,
// with the header, and the connection's read deadline is cleared; the write
// timeout still bounds writes that make no progress.
func (w *writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	res, ok := w.ResponseWriter.(*nbhttp.Response)
	if !ok || res.Parser == nil {
		return nil, nil, ErrHijack
	}
	st, ok := res.Parser.Conn.(*connState)
	if !ok {
		return nil, nil, ErrHijack
	}
	h := &hijackedConn{st: st, ready: make(chan struct{}, 1)}
	if !st.hijacked.CompareAndSwap(nil, h) {
		return nil, nil, fmt.Errorf("%w: hijacked already", ErrHijack)
	}
	w.hijacked = true
	w.holding, w.held = false, nil // dropped, as nbio drops what it holds
	// Responses to the requests before this one go out first.
	_ = st.flush() // an error has closed the connection: the writes below fail
	st.deadline.Store(0)
	_ = st.nc.SetReadDeadline(time.Time{})
	_, _, _ = res.Hijack() // nbio then writes no response of its own
	if w.status != 0 {
		var head bytes.Buffer
		head.WriteString("HTTP/1.1 " + strconv.Itoa(w.status) + " " + http.StatusText(w.status) + "\r\n")
		_ = res.Header().Write(&head)
		head.WriteString("\r\n")
		if _, err := st.Write(head.Bytes()); err != nil {
			h.Close()
			return nil, nil, err
		}
	}
	return h, bufio.NewReadWriter(bufio.NewReader(h), bufio.NewWriter(h)), nil
}

// maxHijackBuffer is how much data a hijacked connection holds for reads
// that have not come: nbio reads the socket whether or not the handler
// does, so a client that sends more than this ahead of the handler has its
// connection closed (net/http would stop reading and let TCP push back).
const maxHijackBuffer = 4 << 20

// errHijackBuffer ends a hijacked connection whose client sent too far
// ahead of the handler's reads.
var errHijackBuffer = fmt.Errorf("nbio engine: hijacked connection: more than %d bytes sent ahead of reads", maxHijackBuffer)

// hijackedConn is a hijacked connection as a blocking net.Conn: the poller
// delivers its data, reads wait for it; writes go to nbio, and wait while
// too much is queued (connState.Write). It is safe for concurrent use.
type hijackedConn struct {
	st    *connState
	ready chan struct{} // signalled when data, an error or a new deadline comes

	mu       sync.Mutex
	buf      []byte // data delivered; buf[off:] is unread
	off      int
	err      error // what reads return once buf is drained
	deadline time.Time
	closed   bool
}

var _ net.Conn = (*hijackedConn)(nil)

func (h *hijackedConn) signal() {
	select {
	case h.ready <- struct{}{}:
	default:
	}
}

// deliver keeps a copy of data, which the poller reuses, for Read.
func (h *hijackedConn) deliver(data []byte) {
	h.mu.Lock()
	over := false
	if h.err == nil {
		if over = len(h.buf)-h.off+len(data) > maxHijackBuffer; over {
			h.err = errHijackBuffer
		} else {
			if h.off > len(h.buf)/2 { // keep the unread part at the front (all of it read: none)
				h.buf = h.buf[:copy(h.buf, h.buf[h.off:])]
				h.off = 0
			}
			h.buf = append(h.buf, data...)
		}
	}
	h.mu.Unlock()
	h.signal()
	if over {
		h.st.close(errHijackBuffer)
	}
}

// fail makes reads return err once what was delivered has been read.
func (h *hijackedConn) fail(err error) {
	h.mu.Lock()
	if h.err == nil {
		h.err = err
	}
	h.mu.Unlock()
	h.signal()
}

// Read waits for data, the connection's end (io.EOF when the client
// closed it) or the read deadline (os.ErrDeadlineExceeded).
func (h *hijackedConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		h.mu.Lock()
		if h.off < len(h.buf) {
			n := copy(p, h.buf[h.off:])
			h.off += n
			more := h.off < len(h.buf)
			h.mu.Unlock()
			if more {
				h.signal() // for another reader
			}
			return n, nil
		}
		err, deadline, closed := h.err, h.deadline, h.closed
		h.mu.Unlock()
		if closed {
			return 0, net.ErrClosed
		}
		if err != nil {
			return 0, err
		}
		if !h.wait(deadline) {
			return 0, os.ErrDeadlineExceeded
		}
	}
}

// wait waits for a signal; it reports false if the deadline came first.
func (h *hijackedConn) wait(deadline time.Time) bool {
	if deadline.IsZero() {
		<-h.ready
		return true
	}
	d := time.Until(deadline)
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.ready:
		return true
	case <-t.C:
		return false
	}
}

// Write writes p, waiting while more than maxQueued bytes wait for the
// socket.
func (h *hijackedConn) Write(p []byte) (int, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed || h.st.gone.Load() {
		return 0, net.ErrClosed
	}
	return h.st.Write(p)
}

// Close closes the connection; what nbio has queued is dropped.
func (h *hijackedConn) Close() error {
	h.mu.Lock()
	already := h.closed
	h.closed = true
	h.mu.Unlock()
	if already {
		return net.ErrClosed
	}
	h.signal()
	h.st.close(nil)
	return nil
}

func (h *hijackedConn) LocalAddr() net.Addr  { return h.st.nc.LocalAddr() }
func (h *hijackedConn) RemoteAddr() net.Addr { return h.st.nc.RemoteAddr() }

// SetDeadline sets the read deadline; writes are bounded by the server's
// write timeout, not by deadlines.
func (h *hijackedConn) SetDeadline(t time.Time) error { return h.SetReadDeadline(t) }

// SetReadDeadline sets when blocked and future reads fail with
// os.ErrDeadlineExceeded; a zero t clears it.
func (h *hijackedConn) SetReadDeadline(t time.Time) error {
	h.mu.Lock()
	h.deadline = t
	h.mu.Unlock()
	h.signal()
	return nil
}

// SetWriteDeadline is accepted and ignored: writes are bounded by the
// server's write timeout.
func (h *hijackedConn) SetWriteDeadline(time.Time) error { return nil }
