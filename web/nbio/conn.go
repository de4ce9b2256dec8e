package nbio

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/nbhttp"
)

// phase is how far the request a connection is reading has come.
type phase uint8

const (
	phaseIdle    phase = iota // between requests
	phaseHeaders              // its line and headers are arriving
	phaseBody                 // its body, of a declared length, is arriving
	phaseChunked              // its chunked body is arriving
	// phaseBlind: a request that arrived in the same read as the end of a
	// chunked one, where it began is not known; nbio's parser alone checks
	// it, and the scan starts again at the next request.
	phaseBlind
	// phaseDone: a request after which the connection must close has
	// arrived; nothing more is read.
	phaseDone
)

// connState is what the engine knows of one connection: how far its request
// has come (for the header and body timeouts and the header checks), how
// much of what was written to it nbio still holds (for the write timeout),
// and, once a handler hijacks it, where its data goes.
//
// It stands in for the connection nbhttp's parser writes responses to (the
// parser's Conn), so that every byte handed to nbio is counted, and for the
// parser's Processor, so that it learns where each request's headers and
// body end. The fields marked poller are used by the connection's poller
// goroutine only: onData and the parser's callbacks, which run inside it.
type connState struct {
	net.Conn // the parser's own: nbhttp's wrapper of nc
	nc       *nbio.Conn
	srv      *server
	proc     processor

	// poller
	parser  *nbhttp.Parser // nil until the first read
	phase   phase
	scan    headerScan
	size    int  // bytes of the request's line and headers so far
	left    int  // bytes of a declared body still to come
	chunked bool // the request has a Transfer-Encoding
	tooBig  bool // its declared body is over the App's largest limit
	req     requestCheck
	line    []byte // a request line that came in parts, so far
	// skipLineEnds: how many CRs and LFs before the next request are
	// skipped.
	skipLineEnds int
	standIn      []byte // the line handed to the parser in its place
	// readEnd: what the parser is being fed ends with an empty line, for
	// its callbacks.
	readEnd bool

	// deadline is when the request now arriving must have arrived, or,
	// between requests, when the idle timeout ends, in nanoseconds of the
	// server's clock; 0: none. Read by the sweeper.
	deadline atomic.Int64
	// idleMu orders the poller's start and end of a request with the idle
	// timeout a response arms (idleAfterResponse).
	idleMu sync.Mutex
	// pending counts the requests handed to the App whose handler has not
	// returned; busy, that a request has begun arriving and is not yet
	// complete; idle, that deadline is the idle timeout's. Under idleMu.
	pending    int
	busy, idle bool
	hijacked   atomic.Pointer[hijackedConn]
	gone       atomic.Bool // closed, or found closed

	// queued counts the bytes handed to nbio to write, written those nbio
	// has written to the socket (OnWrittenSize); queued is added to first,
	// so written never passes it.
	queued, written atomic.Int64

	remote *remoteAddr // set by attach; nil: nbio's

	// out holds the responses the engine wrote itself (respond) while a
	// request that arrived with them waits to run: a pipelined batch goes
	// out in one write. nil: none. Under outMu.
	outMu sync.Mutex
	out   *batch

	// the sweeper's, under server.mu
	seenWritten  int64
	stalledSince int64 // on the server's clock; 0: not stalled
}

// maxQueued is how many bytes of responses a connection may have waiting in
// nbio before a write blocks until they drain, as a write to a blocking
// socket would: nbio itself queues without bound.
const maxQueued = 1 << 20

// Write hands b to nbio, after the responses held in out, which writes
// what the socket takes and queues the rest; it then waits while more than
// maxQueued bytes wait.
func (st *connState) Write(b []byte) (int, error) {
	if err := st.flush(); err != nil {
		return 0, err
	}
	st.queued.Add(int64(len(b)))
	n, err := st.Conn.Write(b)
	if err != nil {
		return n, err
	}
	return n, st.drain(maxQueued)
}

// RemoteAddr is the client's address, whose String nbio calls for every
// request (http.Request.RemoteAddr): it is made once a connection.
func (st *connState) RemoteAddr() net.Addr {
	if st.remote == nil {
		return st.Conn.RemoteAddr()
	}
	return st.remote
}

// remoteAddr is an address with its String made once.
type remoteAddr struct {
	net.Addr
	s string
}

func (a *remoteAddr) String() string { return a.s }

// Close closes the connection once nbio has written what it holds for it:
// nbhttp closes the connection of a response with Connection: close as soon
// as it has handed the response over, which would drop the end of a large
// one. The write timeout bounds the wait. It runs on the handler's
// goroutine, never on the poller.
func (st *connState) Close() error {
	_ = st.flush()
	_ = st.drain(0)
	st.close(nil)
	return nil
}

// drain waits, while more than limit bytes wait to be written, for nbio to
// write them. The write timeout (the sweeper) closes a connection whose
// bytes stop moving, which ends the wait.
func (st *connState) drain(limit int64) error {
	wait := time.Millisecond
	for st.queued.Load()-st.written.Load() > limit {
		if st.closed() {
			return net.ErrClosed
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
	return nil
}

// closed reports whether the connection has been closed.
func (st *connState) closed() bool {
	closed, _ := st.nc.IsClosed()
	return closed || st.gone.Load()
}

// close closes the connection and fails the reads of a hijacker with err
// (io.EOF when the client closed it), or net.ErrClosed.
func (st *connState) close(err error) {
	st.gone.Store(true)
	if h := st.hijacked.Load(); h != nil {
		h.fail(cmp.Or(err, net.ErrClosed))
	}
	_ = st.nc.CloseWithError(err)
}

// processor is the parser's processor with the engine told where each
// request's headers end and where it is complete.
type processor struct {
	nbhttp.Processor
	st *connState
}

func (p *processor) OnMethod(parser *nbhttp.Parser, method string) {
	r := &p.st.req
	if r.standIn {
		method = string(r.line.method)
	}
	r.method = method
	p.Processor.OnMethod(parser, method)
}

func (p *processor) OnURL(parser *nbhttp.Parser, uri string) error {
	if p.st.phase == phaseDone {
		return errAfterLast // the parser stops here
	}
	if p.st.req.standIn {
		uri = string(p.st.req.line.target)
	}
	p.st.req.target = uri
	return p.Processor.OnURL(parser, uri)
}

func (p *processor) OnProto(parser *nbhttp.Parser, proto string) error {
	if err := p.Processor.OnProto(parser, proto); err != nil {
		return err
	}
	r := &p.st.req
	r.major, r.minor, _ = http.ParseHTTPVersion(proto)
	if !supported(r.method, r.target, r.major, r.minor) {
		r.refuse(rankVersion, 505, "unsupported protocol version")
	}
	return nil
}

// OnHeader checks a field line as net/http would, and hands it on without
// the whitespace around its value.
func (p *processor) OnHeader(parser *nbhttp.Parser, key, value string) {
	st := p.st
	value = trimOWS(value)
	if !validFieldValue(value) {
		st.req.refuse(rankFieldLine, 400, "invalid header value")
	}
	switch key {
	case "Host":
		st.req.hosts++
		switch {
		case st.req.hosts > 1:
			st.req.refuse(rankFieldLine, 400, "too many Host headers")
		case !validHost(value):
			st.req.refuse(rankHost, 400, "malformed Host header")
		}
	case "Content-Length":
		r := &st.req
		switch {
		case !validLength(value):
			r.refuse(rankLength, 400, "bad Content-Length")
		case r.hasLength && value != r.length:
			r.refuse(rankLength, 400, "multiple Content-Length headers")
		}
		r.hasLength, r.length = true, value
	case "Transfer-Encoding":
		st.chunked = true
	case "Expect":
		if !st.req.hasExpect {
			st.req.hasExpect, st.req.expect = true, value // net/http reads the first
		}
	}
	p.Processor.OnHeader(parser, key, value)
}

// OnContentLength is called when the headers end; length is -1 without a
// Content-Length (and with a chunked body).
func (p *processor) OnContentLength(parser *nbhttp.Parser, length int) {
	p.st.headersRead(length)
	p.Processor.OnContentLength(parser, length)
}

// OnComplete is called when a request has arrived whole; nbio then hands
// it to a handler, which may be done, and have nbio set the idle timeout
// again, before OnComplete returns. A refused request, or one after a
// request that closes the connection, is not handed over.
func (p *processor) OnComplete(parser *nbhttp.Parser) {
	st := p.st
	if st.req.status != 0 || st.phase == phaseDone {
		return
	}
	last := st.req.last
	st.completed()
	if last {
		st.phase = phaseDone
	}
	p.Processor.OnComplete(parser)
}

// headersRead checks the request's header section as a whole; then it
// starts the body's timeout, from the end of the headers as net/http
// counts it, or, without a body, ends the request's timeouts.
func (st *connState) headersRead(length int) {
	s := st.srv
	st.req.headersDone = true
	sendContinue := st.req.headersEnd(st.chunked, length)
	switch {
	case st.chunked:
		st.phase = phaseChunked
	case length > 0:
		st.phase, st.left = phaseBody, length
		st.tooBig = s.bodyCeiling > 0 && int64(length) > s.bodyCeiling
	default:
		st.deadline.Store(0) // complete: OnComplete follows at once
		return
	}
	if sendContinue && !st.tooBig {
		// The client waits for it before it sends the body; net/http sends
		// it when the handler first reads the body, which the engine reads
		// before the handler runs.
		st.queued.Add(int64(len(continueLine)))
		_, _ = st.nc.Write(continueLine)
	}
	st.deadline.Store(s.deadline(s.bodyTimeout))
}

var continueLine = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// completed is called before nbio hands a request over: the next one begins
// with the next byte, and the idle timeout, which nbio sets again after the
// response, must not cut off a handler that runs longer.
func (st *connState) completed() {
	if (st.phase == phaseChunked || st.phase == phaseBlind) && !st.readEnd {
		// The read may hold the start of the next request.
		st.phase = phaseBlind
	} else {
		st.phase = phaseIdle
	}
	st.skipLineEnds = 0
	if st.req.method == "POST" {
		// net/http skips up to 4 CRs and LFs after a POST, for clients
		// that end its body with a line end it does not count (RFC 9112
		// §2.2).
		st.skipLineEnds = 4
	}
	st.chunked, st.tooBig, st.req = false, false, requestCheck{}
	st.idleMu.Lock()
	st.pending++
	st.busy, st.idle = false, false
	st.deadline.Store(0)
	st.idleMu.Unlock()
}

// begin is called by the poller at the first byte of a request: the header
// timeout runs from now, unless the first request's runs from the
// connection's opening.
func (st *connState) begin() {
	st.idleMu.Lock()
	if st.deadline.Load() == 0 || st.idle {
		st.deadline.Store(st.srv.deadline(st.srv.headerTimeout))
	}
	st.busy, st.idle = true, false
	st.idleMu.Unlock()
}

// handled is called when a request's handler has returned.
func (st *connState) handled() {
	st.idleMu.Lock()
	st.pending--
	st.idleMu.Unlock()
}

// SetReadDeadline is what nbio calls after each response it writes, to
// start its idle timeout (a timer of its own that would also run while a
// request pipelined behind that response is with the App). The engine keeps
// the idle timeout itself instead: from the end of a response after which
// no request is with the App or arriving, as net/http counts it; t is not
// used. nbio's own is set too far away to matter (noKeepalive).
func (st *connState) SetReadDeadline(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	st.idleMu.Lock()
	defer st.idleMu.Unlock()
	if st.pending == 0 && !st.busy && st.deadline.Load() == 0 && st.hijacked.Load() == nil {
		st.deadline.Store(st.srv.deadline(st.srv.idleTimeout))
		st.idle = true
	}
	return nil
}

// readRequestLine reads the request line from data, the first bytes of a
// request or the next of its line, and checks it (parseRequestLine). A line
// that came whole in data, and that nbio's parser takes as it is, is left
// in data for the header scan; a line that came in parts is handed to the
// parser whole, and one it does not take as a stand-in, whose method and
// target OnMethod and OnURL put back. It returns how many bytes of data it
// took, and the status to refuse the request with, or 0.
func (st *connState) readRequestLine(data []byte) (n int, status int, why string) {
	limit := st.srv.headerLimit
	j := bytes.IndexByte(data, '\n')
	if j < 0 {
		st.size += len(data)
		if st.size > limit {
			return 0, 431, ""
		}
		st.line = append(st.line, data...)
		return len(data), 0, ""
	}
	line, whole := data[:j+1], len(st.line) == 0
	if !whole {
		st.line = append(st.line, line...)
		line = st.line
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		// A bare LF, which net/http takes and nbio's parser does not.
		return 0, 400, "malformed request line"
	}
	rl, status, why := parseRequestLine(line[:len(line)-2])
	if status != 0 {
		return 0, status, why
	}
	st.req.line, st.req.lineRead = rl, true
	if whole && rl.nbioTakes() {
		return 0, 0, ""
	}
	if st.size += j + 1; st.size > limit {
		return 0, 431, ""
	}
	st.scan = atHeadersStart
	if !rl.nbioTakes() {
		st.req.standIn = true
		st.standIn = append(append(st.standIn[:0], "GET / HTTP/"...), '0'+byte(rl.major), '.', '0'+byte(rl.minor), '\r', '\n')
		line = st.standIn
	}
	err := st.parse(line)
	st.line = st.line[:0]
	if err != nil {
		status, why = refusalStatus(err, phaseHeaders)
		return 0, status, why
	}
	return j + 1, 0, ""
}

var endOfHeaders = []byte("\r\n\r\n")

// read feeds data to the parser a request part at a time — line and
// headers, then a declared body — so that each request's headers are
// scanned from their first byte. It returns the status to refuse the
// request with, and why, or 0.
func (st *connState) read(data []byte) (status int, why string) {
	s := st.srv
	for len(data) > 0 {
		part, ended := data, false
		switch st.phase {
		case phaseIdle:
			for st.skipLineEnds > 0 && len(data) > 0 && (data[0] == '\r' || data[0] == '\n') {
				data, st.skipLineEnds = data[1:], st.skipLineEnds-1
			}
			if len(data) == 0 {
				return 0, ""
			}
			st.skipLineEnds = 0
			st.phase, st.scan, st.size, st.chunked, st.tooBig = phaseHeaders, inRequestLine, 0, false, false
			st.req = requestCheck{}
			st.begin()
			continue
		case phaseDone:
			return 0, ""
		case phaseHeaders:
			if st.scan == inRequestLine && !st.req.lineRead {
				n, status, why := st.readRequestLine(data)
				if status != 0 {
					return status, why
				}
				data = data[n:]
				continue
			}
			n, end, bad := st.scan.feed(data)
			st.size += n
			switch {
			case bad != "" && bad != spacedName:
				return 400, bad
			case st.size > s.headerLimit:
				return 431, ""
			case bad == spacedName:
				st.req.refuse(rankFieldName, 400, "invalid header name")
				// net/http reads the name whole, space included, so never
				// as a framing field; nbio's parser would cut it at the
				// space ("Transfer-Encoding :"). The refusal comes when the
				// headers end; meanwhile the parser reads another name.
				data[n-1] = '_'
			}
			part, ended = data[:n], end
		case phaseBody:
			part = data[:min(st.left, len(data))]
			st.left -= len(part)
		}
		data = data[len(part):]
		before := st.phase
		err := st.parse(part)
		switch {
		case st.phase == phaseDone:
			// What follows a request after which the connection closes is
			// neither served nor refused.
			return 0, ""
		case st.req.status != 0 && st.req.rank == rankFieldLine:
			return st.req.status, st.req.why
		case err != nil:
			status, why := refusalStatus(err, st.phase)
			if r := &st.req; status == 501 && (r.major == 0 && r.minor > 0 || r.major == 1 && r.minor == 0) {
				// net/http ignores a Transfer-Encoding before HTTP/1.1
				// (but reads HTTP/0.0 as 1.1), and goes on to check the
				// rest.
				r.headersEnd(true, -1)
				status, why = r.status, r.why
			}
			return status, why
		case st.req.status != 0 && st.req.headersDone:
			return st.req.status, st.req.why
		case st.tooBig:
			return 413, ""
		}
		switch {
		case ended && st.phase == phaseHeaders:
			// nbio's parser did not see the end of the headers where
			// net/http would: bare LFs, which it takes for a line in
			// progress. It will not serve the request.
			return 400, "malformed request line or headers"
		case before == phaseBody && st.phase == phaseBody && st.left == 0:
			// It did not see the end of the body where the engine did:
			// leave the rest to it.
			st.phase = phaseBlind
		}
	}
	return 0, ""
}

// parse feeds data to nbio's parser; a panic in it is a parse error, as it
// is in nbio's own data handler.
func (st *connState) parse(data []byte) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = errors.New("nbio parser panic")
		}
	}()
	st.readEnd = bytes.HasSuffix(data, endOfHeaders)
	return st.parser.Parse(data)
}

// attach puts st between the parser of c and its connection and processor,
// on c's first read. It reports false when c is not served by an nbhttp
// parser (it always is).
func (st *connState) attach(c *nbio.Conn) bool {
	p, ok := c.Session().(*nbhttp.Parser)
	if !ok {
		return false
	}
	st.parser = p
	st.Conn = p.Conn
	if a := c.RemoteAddr(); a != nil {
		st.remote = &remoteAddr{Addr: a, s: a.String()}
	}
	p.Conn = st
	st.proc = processor{Processor: p.Processor, st: st}
	p.Processor = &st.proc
	// Parse takes the parser's lock, as its close (on another goroutine)
	// does: the close then sees the fields just set, even when no byte has
	// reached the parser yet (a request line still arriving).
	_ = p.Parse(nil)
	return true
}

// onOpen runs on the accepting goroutine once nbio has set the connection
// up, before any of its data is read: the header timeout of the first
// request runs from now, as net/http's does.
func (s *server) onOpen(c net.Conn) {
	nc, ok := c.(*nbio.Conn)
	if !ok {
		return
	}
	st := &connState{nc: nc, srv: s}
	st.deadline.Store(s.deadline(s.headerTimeout))
	s.mu.Lock()
	s.conns[nc] = st
	s.mu.Unlock()
}

// onRead reads c as nbio's poller would (up to three reads an event), and
// also notices the end of the connection, which a hijacker's reads must be
// told about: nbio tells its own close handler only after the handler that
// hijacked the connection has returned.
func (s *server) onRead(c *nbio.Conn) {
	buf := s.eng.PollerBuffer(c)
	if f, ok := c.Session().(*fence); ok {
		f.read(c, buf)
		return
	}
	if h := testHookRead.Load(); h != nil {
		(*h)(c)
	}
	for range 3 {
		n, err := c.Read(buf)
		if n > 0 {
			s.onData(c, buf[:n])
		}
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return
		case err != nil || n == 0:
			if err == nil {
				err = io.EOF
			}
			if st := s.state(c); st != nil {
				st.close(err)
			} else {
				_ = c.CloseWithError(err)
			}
			return
		}
		if n < len(buf) {
			return
		}
	}
}

// testHookRead, when set, is called by the poller on each read event of a
// connection, before it reads.
var testHookRead atomic.Pointer[func(*nbio.Conn)]

// state returns c's state, nil once it has closed.
func (s *server) state(c *nbio.Conn) *connState {
	if p, ok := c.Session().(*nbhttp.Parser); ok {
		if st, ok := p.Conn.(*connState); ok {
			return st
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[c]
}

// onData hands data to the hijacker of c, or to the parser through read,
// and answers a request read refuses.
func (s *server) onData(c *nbio.Conn, data []byte) {
	st := s.state(c)
	if st == nil {
		_ = c.Close()
		return
	}
	if h := st.hijacked.Load(); h != nil {
		h.deliver(data)
		return
	}
	if st.parser == nil && !st.attach(c) {
		c.DataHandler()(c, data)
		return
	}
	if status, why := st.read(data); status != 0 {
		// nbio's parser cannot go on after an error: nothing more is read.
		// The answer goes out after those of the requests before it, on the
		// connection's queue of requests, and the connection closes once it
		// is written: a client still sending may get a reset instead.
		st.phase = phaseDone
		answer := refusal(status, why)
		if !c.Execute(func() { _, _ = st.Write(answer); _ = st.Close() }) {
			st.close(errRefused)
		}
	}
}

var (
	errRefused   = errors.New("request refused")
	errAfterLast = errors.New("a request after the connection's last")
)

// onWritten counts what nbio wrote to c's socket. nbio calls it holding c's
// lock, from the writing goroutine or the poller.
func (s *server) onWritten(c *nbio.Conn, _ []byte, n int) {
	if p, ok := c.Session().(*nbhttp.Parser); ok {
		if st, ok := p.Conn.(*connState); ok {
			st.written.Add(int64(n))
		}
	}
	if h := testHookWritten.Load(); h != nil {
		(*h)(n)
	}
}

// testHookWritten, when set, is told of each write to a socket.
var testHookWritten atomic.Pointer[func(n int)]

func (s *server) onClose(c net.Conn, _ error) {
	if nc, ok := c.(*nbio.Conn); ok {
		s.mu.Lock()
		st := s.conns[nc]
		delete(s.conns, nc)
		s.mu.Unlock()
		if st != nil {
			st.gone.Store(true)
		}
	}
}
