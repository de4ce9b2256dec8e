package web

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
)

// RFC 9112 §6.1: a server that receives a request with both Content-Length
// and Transfer-Encoding, or an HTTP/1.0 request with Transfer-Encoding,
// MUST close the connection after responding to it: a proxy in front may
// have framed the body differently, and what it took for body may be a
// second, smuggled request. net/http serves such a request by its chunked
// framing (by its length in HTTP/1.0) and keeps the connection open, and it
// deletes both fields before the handler runs, so the handler cannot tell.
// Serve, which owns the listener, tells: its connections note a header
// section with both fields (field lines with no empty line between them)
// and a Transfer-Encoding line, and the handler closes the connection after
// a chunked request on a connection that carried such a header section,
// and refuses an HTTP/1.0 request on one that carried a Transfer-Encoding
// line.
//
// The notes are per connection, not per request: net/http may have read
// the next requests ahead, and only a note that never clears misses none.
// So a chunked request pipelined before the one with both fields closes
// the connection too, as does one after a body that holds such lines:
// harmless, a connection may close after any response.

// framingListener hands out framingConns.
type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framingConn{Conn: c}, nil
}

// framingConn is a connection that notes the Content-Length and
// Transfer-Encoding field lines read from it.
type framingConn struct {
	net.Conn
	// The reading goroutine's scan. field is the name the current line has
	// begun with so far, match how much of it: 0 at a line's start, -1 not
	// at a line's start or past a mismatch; afterCR: the line began with a
	// CR. length and coding: the lines since the last empty one hold a
	// Content-Length, a Transfer-Encoding.
	field          string
	match          int
	afterCR        bool
	length, coding bool
	// sawBoth and sawCoding are set, and stay set, once a header section
	// with both fields, or a Transfer-Encoding line, has been read;
	// handlers read them on their own goroutines.
	sawBoth, sawCoding atomic.Bool
}

const (
	lengthField = "content-length:"
	codingField = "transfer-encoding:"
)

func (c *framingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.sawBoth.Load() {
		c.scan(p[:n])
	}
	return n, err
}

// scan follows b, the next bytes read, and notes the lines that begin
// with "content-length:" or "transfer-encoding:", in any case, and the
// empty lines between them. The first byte read starts a line (the
// request line, which cannot begin so).
func (c *framingConn) scan(b []byte) {
	for i := 0; i < len(b); {
		if c.match < 0 {
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				return
			}
			i += j + 1
			c.match = 0
			continue
		}
		ch := b[i] | 0x20 // lower case for letters; '-' and ':' are kept
		if c.match == 0 {
			switch {
			case b[i] == '\n':
				c.length, c.coding, c.afterCR = false, false, false // an empty line
				i++
				continue
			case b[i] == '\r' && !c.afterCR:
				c.afterCR = true
				i++
				continue
			case ch == 'c' && !c.afterCR:
				c.field = lengthField
			case ch == 't' && !c.afterCR:
				c.field = codingField
			default:
				c.match, c.afterCR = -1, false
				continue // this byte may be the LF that starts the next line
			}
		}
		if ch != c.field[c.match] {
			c.match = -1
			continue
		}
		i++
		c.match++
		if c.match == len(c.field) {
			c.match = -1
			if c.field == lengthField {
				c.length = true
			} else {
				c.coding = true
				c.sawCoding.Store(true)
			}
			if c.length && c.coding {
				c.sawBoth.Store(true)
			}
		}
	}
}

// ReadFrom keeps net/http's sendfile path.
func (c *framingConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

func (c *framingConn) Unwrap() net.Conn { return c.Conn }

type framingConnKey struct{}

// closeAmbiguousFraming serves next, and makes net/http close the
// connection after a request whose framing RFC 9112 §6.1 calls faulty: a
// chunked one that had a Content-Length too is served and the connection
// closed; an HTTP/1.0 one with a Transfer-Encoding, which net/http framed
// by its length, is refused with 400.
type closeAmbiguousFraming struct{ next http.Handler }

func (h closeAmbiguousFraming) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case len(r.TransferEncoding) > 0 && noted(r, func(c *framingConn) bool { return c.sawBoth.Load() }):
		r.Close = true
		w.Header().Set("Connection", "close")
	case !r.ProtoAtLeast(1, 1) && noted(r, func(c *framingConn) bool { return c.sawCoding.Load() }):
		r.Close = true
		w.Header().Set("Connection", "close")
		writeStatus(w, r, http.StatusBadRequest, "Transfer-Encoding in HTTP/1.0")
		return
	}
	h.next.ServeHTTP(w, r)
}

// noted reports what saw says of r's connection, one of Serve's.
func noted(r *http.Request, saw func(*framingConn) bool) bool {
	c, ok := r.Context().Value(framingConnKey{}).(*framingConn)
	return ok && saw(c)
}

// serveFraming makes srv close a connection after a request with an
// ambiguous framing, for Serve on the std engine: ln's connections note
// their Content-Length lines, and srv's handler reads the note.
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
	srv.Handler = closeAmbiguousFraming{next: srv.Handler}
	return framingListener{Listener: ln}
}
