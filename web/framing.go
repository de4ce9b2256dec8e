package web

import (
	"bytes"
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
)

// RFC 9112 §6.1: a server that receives a request with both Content-Length
// and Transfer-Encoding, or an HTTP/1.0 request with Transfer-Encoding,
// MUST close the connection after responding to it: a proxy in front may
// have framed the body differently, and what it took for body may be a
// second, smuggled request. net/http serves such a request by its chunked
// framing (by its length in HTTP/1.0) and keeps the connection open, and it
// deletes both fields before the handler runs, so the handler cannot tell.
//
// Serve, which owns the listener, tells. Its connections follow the
// requests they carry as net/http frames them: a header section up to its
// empty line, then a body that is chunked when a Transfer-Encoding line is
// there, else as long as its Content-Length, else empty. For each header
// section they note whether it holds a Content-Length line and a
// Transfer-Encoding line; the lines of a body (chunk data, trailer fields)
// are never taken for field lines. The notes queue in request order, since
// net/http may have read the next requests ahead, and net/http calls the
// handler once for each request it reads, in order (OPTIONS * included:
// Serve answers it in the handler, see serveFraming), so the handler takes
// the note at the front. A chunked request whose header section also held a
// Content-Length is served and the connection closed; an HTTP/1.0 request
// with a Transfer-Encoding line is refused with 400.
//
// Where the bytes do not frame as net/http frames them (a malformed length
// or chunk, which net/http refuses and closes on), the connection stops
// following, and every request served on it later closes it: a connection
// may close after any response. So it does once more header sections are
// pending than net/http can have read ahead, as after a Hijack.

// framingListener hands out framingConns.
type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framingConn{Conn: c}, nil
}

// framingConn is a connection that notes the framing fields of each
// request read from it.
type framingConn struct {
	net.Conn
	mu   sync.Mutex // held by Read while it scans, and by the handler's take
	scan framingScan
}

func (c *framingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.scan.read(p[:n])
		c.mu.Unlock()
	}
	return n, err
}

// take returns the note of the next request net/http serves, and false
// when the connection no longer follows its requests.
func (c *framingConn) take() (framingNote, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scan.take()
}

// ReadFrom keeps net/http's sendfile path.
func (c *framingConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

func (c *framingConn) Unwrap() net.Conn { return c.Conn }

// framingNote is what a request's header section held.
type framingNote uint8

const (
	noteLength framingNote = 1 << iota // a Content-Length line
	noteCoding                         // a Transfer-Encoding line
)

// maxFramingNotes bounds the header sections read and not yet served.
// net/http reads at most 4 KiB ahead of the request it serves, about 200
// of the smallest requests it keeps a connection open after.
const maxFramingNotes = 1024

// scanState is where a framingScan stands in the stream.
type scanState uint8

const (
	inRequestLine    scanState = iota // the request line, to its LF
	atFieldLine                       // the start of a field line or of the empty line
	atFieldCR                         // after a CR at a field line's start
	inFieldName                       // matching field at the line's start
	inLength                          // Content-Length's value
	atLengthLF                        // after a CR that ends Content-Length's value
	inLine                            // a line of no interest, to its LF
	inBody                            // remain bytes of a body by its length
	inChunkSize                       // a chunk's size
	afterChunkSize                    // whitespace after a chunk's size
	inChunkExtension                  // a chunk's extension, to the CR
	atChunkSizeLF                     // after the CR of a chunk's size line
	inChunk                           // remain bytes of a chunk's data
	atChunkCR                         // the CR after a chunk's data
	atChunkLF                         // the LF after a chunk's data
	atTrailerLine                     // the start of a trailer line or of the empty line
	atTrailerCR                       // after a CR at a trailer line's start
	inTrailerLine                     // a trailer line, to its LF
	lost                              // the stream no longer frames as net/http frames it
)

const (
	lengthField = "content-length:"
	codingField = "transfer-encoding:"
)

// framingScan follows a connection's stream of requests as net/http frames
// them, a read at a time.
type framingScan struct {
	state scanState
	// field is the name matched at a field line's start, match how much of
	// it; note is what the current header section has held so far.
	field string
	match int
	note  framingNote
	// digits counts the digits of the number being read into value (a
	// Content-Length, a chunk size); trailing: whitespace followed them.
	digits   int
	value    uint64
	trailing bool
	length   uint64 // the current header section's Content-Length
	remain   uint64 // the bytes of a body or chunk still to come
	// notes[head:] are the notes of the header sections read and not yet
	// taken, oldest first.
	notes []framingNote
	head  int
}

// take returns the oldest pending note.
func (s *framingScan) take() (framingNote, bool) {
	if s.head == len(s.notes) {
		return 0, false
	}
	n := s.notes[s.head]
	s.head++
	if s.head == len(s.notes) {
		s.notes, s.head = s.notes[:0], 0
	}
	return n, true
}

// push queues a header section's note, and reports false when
// maxFramingNotes are pending already.
func (s *framingScan) push(n framingNote) bool {
	if len(s.notes)-s.head == maxFramingNotes {
		return false
	}
	if s.head > 0 && len(s.notes) == cap(s.notes) {
		// Reuse the room of the notes taken rather than grow.
		k := copy(s.notes, s.notes[s.head:])
		s.notes, s.head = s.notes[:k], 0
	}
	s.notes = append(s.notes, n)
	return true
}

// read follows b, the next bytes read.
func (s *framingScan) read(b []byte) {
	for i := 0; i < len(b); {
		switch s.state {
		case inRequestLine, inLine, inTrailerLine:
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				return
			}
			i += j + 1
			if s.state == inTrailerLine {
				s.state = atTrailerLine
			} else {
				s.state = atFieldLine
			}
		case inBody, inChunk:
			n := min(s.remain, uint64(len(b)-i))
			i += int(n)
			s.remain -= n
			if s.remain == 0 {
				if s.state == inChunk {
					s.state = atChunkCR
				} else {
					s.state = inRequestLine
				}
			}
		case lost:
			return
		default:
			s.step(b[i])
			i++
		}
	}
}

// step follows one byte in the states read leaves to it.
func (s *framingScan) step(ch byte) {
	switch s.state {
	case atFieldLine:
		s.fieldLine(ch)
	case atFieldCR:
		if ch != '\n' {
			s.state = lost // net/http refuses a line that begins with a CR
			return
		}
		s.endHeader()
	case inFieldName:
		s.fieldName(ch)
	case inLength:
		s.lengthValue(ch)
	case atLengthLF:
		s.state = lost
		if ch == '\n' && s.digits > 0 {
			s.note |= noteLength
			s.length = s.value
			s.state = atFieldLine
		}
	case inChunkSize, afterChunkSize, inChunkExtension, atChunkSizeLF:
		s.chunkSize(ch)
	case atChunkCR:
		s.state = lost
		if ch == '\r' {
			s.state = atChunkLF
		}
	case atChunkLF:
		s.state = lost
		if ch == '\n' {
			s.startChunk()
		}
	case atTrailerLine:
		switch ch {
		case '\n':
			s.state = inRequestLine
		case '\r':
			s.state = atTrailerCR
		default:
			s.state = inTrailerLine
		}
	case atTrailerCR:
		s.state = lost
		if ch == '\n' {
			s.state = inRequestLine
		}
	}
}

// fieldLine follows the first byte of a field line or of the empty line.
func (s *framingScan) fieldLine(ch byte) {
	prev := s.field
	s.field = ""
	switch {
	case ch == '\n':
		s.endHeader()
	case ch == '\r':
		s.state = atFieldCR
	case ch|0x20 == 'c': // lower case for letters
		s.field, s.match, s.state = lengthField, 1, inFieldName
	case ch|0x20 == 't':
		s.field, s.match, s.state = codingField, 1, inFieldName
	case (ch == ' ' || ch == '\t') && prev == lengthField:
		// A continuation of Content-Length's value (obs-fold), which
		// net/http joins to it.
		s.state = lost
	default:
		s.state = inLine
	}
}

// fieldName follows a byte of a field line that has begun as field does.
func (s *framingScan) fieldName(ch byte) {
	if ch|0x20 != s.field[s.match] {
		s.field, s.state = "", inLine
		if ch == '\n' {
			s.state = atFieldLine
		}
		return
	}
	s.match++
	if s.match < len(s.field) {
		return
	}
	if s.field == codingField {
		s.note |= noteCoding
		s.state = inLine
		return
	}
	s.digits, s.value, s.trailing = 0, 0, false
	s.state = inLength
}

// lengthValue follows a byte of Content-Length's value: optional
// whitespace, digits of a number below 2^63 (as net/http takes it),
// optional whitespace.
func (s *framingScan) lengthValue(ch byte) {
	switch {
	case ch == ' ' || ch == '\t':
		s.trailing = s.digits > 0
	case '0' <= ch && ch <= '9' && !s.trailing && s.value <= (math.MaxInt64-uint64(ch-'0'))/10:
		s.digits++
		s.value = s.value*10 + uint64(ch-'0')
	case ch == '\r':
		s.state = atLengthLF
	case ch == '\n':
		s.state = atLengthLF
		s.step(ch)
	default:
		s.state = lost
	}
}

// endHeader ends a header section: its note joins the queue, and its body
// follows.
func (s *framingScan) endHeader() {
	if !s.push(s.note) {
		s.state = lost
		return
	}
	switch {
	case s.note&noteCoding != 0:
		s.startChunk()
	case s.length > 0: // set with noteLength
		s.state, s.remain = inBody, s.length
	default:
		s.state = inRequestLine
	}
	s.note, s.length, s.field = 0, 0, ""
}

// startChunk expects a chunk's size line.
func (s *framingScan) startChunk() {
	s.digits, s.value, s.state = 0, 0, inChunkSize
}

// chunkSize follows a byte of a chunk's size line as net/http reads it: 1
// to 16 hexadecimal digits, optional whitespace or an extension after a
// semicolon, CRLF.
func (s *framingScan) chunkSize(ch byte) {
	state := s.state
	s.state = lost
	switch {
	case state == atChunkSizeLF:
		if ch == '\n' {
			s.endChunkSize()
		}
	case state == inChunkExtension:
		s.state = inChunkExtension
		if ch == '\r' {
			s.state = atChunkSizeLF
		} else if ch == '\n' {
			s.state = lost
		}
	case state == inChunkSize && hexDigit(ch) >= 0 && s.digits < 16:
		s.digits++
		s.value = s.value<<4 | uint64(hexDigit(ch))
		s.state = inChunkSize
	case s.digits == 0:
	case ch == ' ' || ch == '\t':
		s.state = afterChunkSize
	case ch == ';' && state == inChunkSize:
		s.state = inChunkExtension
	case ch == '\r':
		s.state = atChunkSizeLF
	}
}

// endChunkSize follows the chunk whose size line has ended: its data, or
// the trailer section after the last one.
func (s *framingScan) endChunkSize() {
	if s.value == 0 {
		s.state = atTrailerLine
		return
	}
	s.state, s.remain = inChunk, s.value
}

// hexDigit returns the value of a hexadecimal digit, or -1.
func hexDigit(ch byte) int {
	switch {
	case '0' <= ch && ch <= '9':
		return int(ch - '0')
	case 'a' <= ch|0x20 && ch|0x20 <= 'f':
		return int(ch|0x20-'a') + 10
	}
	return -1
}

type framingConnKey struct{}

// closeAmbiguousFraming serves next, and makes net/http close the
// connection after a request whose framing RFC 9112 §6.1 calls faulty: a
// chunked one that had a Content-Length too is served and the connection
// closed; an HTTP/1.0 one with a Transfer-Encoding, which net/http framed
// by its length, is refused with 400. options: answer OPTIONS * as
// net/http's general OPTIONS handler does.
type closeAmbiguousFraming struct {
	next    http.Handler
	options bool
}

func (h closeAmbiguousFraming) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// HTTP/2 in cleartext (WithH2C) frames its requests itself, on a
	// connection of Serve's too.
	if c, ok := r.Context().Value(framingConnKey{}).(*framingConn); ok && r.ProtoMajor == 1 {
		note, known := c.take()
		switch {
		case note&noteCoding != 0 && !r.ProtoAtLeast(1, 1):
			r.Close = true
			w.Header().Set("Connection", "close")
			writeStatus(w, r, http.StatusBadRequest, "Transfer-Encoding in HTTP/1.0")
			return
		case !known || note == noteLength|noteCoding:
			r.Close = true
			w.Header().Set("Connection", "close")
		}
	}
	if h.options && r.Method == "OPTIONS" && r.RequestURI == "*" {
		serveOptions(w, r)
		return
	}
	h.next.ServeHTTP(w, r)
}

// serveOptions answers OPTIONS * as net/http does: 200, no body; it reads
// up to 4 KiB of a request body, and closes the connection after a longer
// one.
func serveOptions(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Length", "0")
	if r.ContentLength != 0 {
		_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 4<<10))
	}
}

// serveFraming makes srv close a connection after a request with an
// ambiguous framing, for Serve on the std engine: ln's connections note
// each request's framing fields, and srv's handler reads the note. So that
// the handler sees every request, it answers OPTIONS * itself, as srv
// would unless DisableGeneralOptionsHandler.
func serveFraming(srv *http.Server, ln net.Listener) net.Listener {
	connContext := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if connContext != nil {
			ctx = connContext(ctx, c)
		}
		if fc, ok := c.(*framingConn); ok {
			ctx = context.WithValue(ctx, framingConnKey{}, fc)
		}
		return ctx
	}
	srv.Handler = closeAmbiguousFraming{next: srv.Handler, options: !srv.DisableGeneralOptionsHandler}
	srv.DisableGeneralOptionsHandler = true
	return framingListener{Listener: ln}
}
