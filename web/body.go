package web

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// DefaultBodyLimit is the request body limit of an App made without
// WithBodyLimit.
const DefaultBodyLimit = 10 << 20

// DefaultBodyTimeout is how long a request of an App made without
// WithBodyTimeout may take to deliver its body. A JSON or form body arrives in
// milliseconds; 30 seconds carries the whole DefaultBodyLimit (10 MiB) at
// about 2.8 Mbit/s, and a route for larger or slower uploads raises it with
// its own WithBodyTimeout.
const DefaultBodyTimeout = 30 * time.Second

// ErrBodyTimeout is matched (errors.Is) by the error of a read from a request
// body that did not arrive within its body timeout (WithBodyTimeout). JSON,
// ReadJSON, ParseForm and the Form helpers turn it into a 408 *Error;
// returned from a handler as it is, or wrapped with %w, it is rendered as the
// same 408.
var ErrBodyTimeout = errors.New("web: request body not received in time")

// bodyTimeoutError is what a timed body's Read returns once its deadline has
// passed. It unwraps to the connection's error (os.ErrDeadlineExceeded),
// whose text ("read tcp …: i/o timeout") it leaves out: the client's address
// and a timeout are all it would add.
type bodyTimeoutError struct {
	timeout time.Duration
	err     error
}

func (e *bodyTimeoutError) Error() string {
	return fmt.Sprintf("request body not received within %v", e.timeout)
}

func (e *bodyTimeoutError) Is(target error) bool { return target == ErrBodyTimeout }

func (e *bodyTimeoutError) Unwrap() error { return e.err }

// response is the 408 the client gets; it still matches ErrBodyTimeout.
func (e *bodyTimeoutError) response() error {
	return &Error{Status: http.StatusRequestTimeout, Message: e.Error(), Err: e}
}

// bodyError turns an error of reading a body that the client caused by
// sending too much, too slowly or malformed into the *Error it gets, 413,
// 408 or 400; for any other error it returns nil.
func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	var slow *bodyTimeoutError
	var bad *malformedBodyError
	switch {
	case errors.As(err, &tooBig):
		return tooLarge(tooBig.Limit)
	case errors.As(err, &slow):
		return slow.response()
	case errors.As(err, &bad):
		return &Error{Status: http.StatusBadRequest, Message: bad.Error(), Err: err}
	}
	return nil
}

// expiredBody returns the 408 for r when a read of its body failed at the
// deadline, and nil otherwise. It is for parsers that report a body cut
// short as malformed (textproto: "malformed MIME header") rather than pass
// the read error on.
func expiredBody(r *http.Request) error {
	if b, ok := r.Body.(*requestBody); ok && b.expired != nil {
		return b.expired.response()
	}
	return nil
}

// requestBody is a request body with a size limit and a read deadline on
// its connection: reads beyond the limit fail with an *http.MaxBytesError,
// reads past the deadline with a *bodyTimeoutError. The App wraps every body
// in one, with its own limit and timeout; a route with other settings
// re-arms it when the request reaches the route.
//
// Once the body has been read to its end, net/http clears the deadline and
// reads the connection in the background to notice a client that leaves; a
// deadline set after that would fail that read and cancel the request's
// context while the handler still works. So a requestBody is never re-armed
// after its end, and a route cannot arm a body that a decorator replaced
// (the original may be spent): its limit and deadline stay the App's.
//
// Like any request body, it is read by one goroutine at a time; arm is
// called before the handler runs, on the goroutine that hands it over.
type requestBody struct {
	body    io.ReadCloser
	control *http.ResponseController // nil: no deadline can be set
	limit   int64                    // bytes the body may have; 0: no limit
	read    int64                    // bytes read so far
	timeout time.Duration            // 0: no deadline
	done    bool                     // the body hit EOF
	expired *bodyTimeoutError        // a read failed at the deadline
}

// wrapBody wraps r's body in a requestBody with limit and, from now, timeout
// to arrive. The deadline is left out when the server has its own
// ReadTimeout (which already bounds the body, and whose deadline the App
// would override) and when w cannot set a read deadline (a recorder, a
// writer wrapped without Unwrap): that request is served without one rather
// than refused.
func wrapBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) {
	b := &requestBody{body: r.Body, limit: limit}
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); srv == nil || srv.ReadTimeout <= 0 {
		control := http.NewResponseController(w)
		var deadline time.Time
		if timeout > 0 {
			deadline = time.Now().Add(timeout)
		}
		if control.SetReadDeadline(deadline) == nil {
			b.control, b.timeout = control, timeout
		}
	}
	r.Body = b
}

// arm sets the limit, and the deadline to timeout from now (none when it
// is 0).
func (b *requestBody) arm(limit int64, timeout time.Duration) {
	if b.done {
		return
	}
	b.limit = limit
	if b.control == nil {
		return
	}
	b.timeout = timeout
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	_ = b.control.SetReadDeadline(deadline) // it worked when the body was wrapped
}

func (b *requestBody) Read(p []byte) (int, error) {
	if b.limit > 0 {
		left := b.limit - b.read
		if left < 0 {
			left = 0 // a route lowered the limit below what was read already
		}
		if int64(len(p)) > left+1 {
			p = p[:left+1] // one byte more than allowed tells an over-long body from an exact one
		}
	}
	n, err := b.body.Read(p)
	if b.limit > 0 && b.read+int64(n) > b.limit {
		n = int(max(b.limit-b.read, 0))
		b.read += int64(n)
		return n, &http.MaxBytesError{Limit: b.limit}
	}
	b.read += int64(n)
	switch {
	case err == nil:
	case err == io.EOF:
		b.done = true
	case b.timeout > 0 && errors.Is(err, os.ErrDeadlineExceeded):
		b.expired = &bodyTimeoutError{timeout: b.timeout, err: err}
		err = b.expired
	case malformed(err):
		err = &malformedBodyError{err: err}
	}
	return n, err
}

// malformed reports whether err, from net/http's body reader, says the
// body's framing is malformed (a chunk size that is not hexadecimal, a
// chunk without its CRLF): net/http's errors for those are its own, and
// the others are of the connection (a net.Error, net.ErrClosed included),
// a body cut short, or a closed body.
func malformed(err error) bool {
	var ne net.Error
	return !errors.As(err, &ne) && !errors.Is(err, io.ErrUnexpectedEOF) &&
		!errors.Is(err, http.ErrBodyReadAfterClose)
}

// malformedBodyError is what a body's Read returns when its framing is
// malformed; the client gets 400 (RFC 9112 §7.1).
type malformedBodyError struct{ err error }

func (e *malformedBodyError) Error() string { return "malformed request body: " + e.err.Error() }

func (e *malformedBodyError) Unwrap() error { return e.err }

func (b *requestBody) Close() error { return b.body.Close() }

// bodyRoute arms a route's own body limit and timeout when the request
// reaches the route, before the route's decorators. A declared length over
// the route's limit is refused at once, unread.
type bodyRoute struct {
	app     *App
	limit   int64
	timeout time.Duration
	next    http.Handler
}

func (h *bodyRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if b, ok := r.Body.(*requestBody); ok {
		if h.limit > 0 && r.ContentLength > h.limit {
			h.app.renderError(w, r, tooLarge(h.limit))
			return
		}
		b.arm(h.limit, h.timeout)
	}
	h.next.ServeHTTP(w, r)
}
