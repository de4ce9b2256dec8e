package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// DefaultBodyTimeout is how long a request of an App made without
// BodyTimeout may take to deliver its body. A JSON or form body arrives in
// milliseconds; 30 seconds carries the whole DefaultBodyLimit (10 MiB) at
// about 2.8 Mbit/s, and a route for larger or slower uploads raises it with
// RouteBodyTimeout.
const DefaultBodyTimeout = 30 * time.Second

// ErrBodyTimeout is matched (errors.Is) by the error of a read from a request
// body that did not arrive within its BodyTimeout. JSON, ReadJSON, ParseForm
// and the Form helpers turn it into a 408 *Error; returned from a handler as
// it is, or wrapped with %w, it is rendered as the same 408.
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
// sending too much or too slowly into the *Error it gets, 413 or 408; for
// any other error it returns nil.
func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	var slow *bodyTimeoutError
	switch {
	case errors.As(err, &tooBig):
		return tooLarge(tooBig.Limit)
	case errors.As(err, &slow):
		return slow.response()
	}
	return nil
}

// expiredBody returns the 408 for r when a read of its body failed at the
// deadline, and nil otherwise. It is for parsers that report a body cut
// short as malformed (textproto: "malformed MIME header") rather than pass
// the read error on.
func expiredBody(r *http.Request) error {
	if b, ok := r.Body.(*timedBody); ok && b.expired != nil {
		return b.expired.response()
	}
	return nil
}

// timedBody is a request body with a read deadline on its connection. Reads
// past the deadline fail with a *bodyTimeoutError.
//
// Once the body has been read to its end, net/http clears the deadline and
// reads the connection in the background to notice a client that leaves; a
// deadline set after that would fail that read and cancel the request's
// context while the handler still works. So a timedBody is never re-armed
// after its end, and a route cannot arm a body that a decorator replaced
// (the original may be spent): its deadline stays the App's.
//
// Like any request body, it is read by one goroutine at a time; arm is
// called before the handler runs, on the goroutine that hands it over.
type timedBody struct {
	body    io.ReadCloser
	control *http.ResponseController
	timeout time.Duration     // 0: no deadline
	done    bool              // the body hit EOF
	expired *bodyTimeoutError // a read failed at the deadline
}

// timeBody wraps r's body in a timedBody with d, from now, to arrive; with
// d == 0 it has no deadline yet (a route may give it one). It does nothing
// for a request without a body, when the server has its own ReadTimeout
// (which already bounds the body, and whose deadline the App would
// override), and when w cannot set a read deadline (a recorder, a writer
// wrapped without Unwrap): that request is served without one rather than
// refused.
func timeBody(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); srv != nil && srv.ReadTimeout > 0 {
		return
	}
	control := http.NewResponseController(w)
	var deadline time.Time
	if d > 0 {
		deadline = time.Now().Add(d)
	}
	if control.SetReadDeadline(deadline) != nil {
		return
	}
	r.Body = &timedBody{body: r.Body, control: control, timeout: d}
}

// arm sets the deadline to d from now, or clears it when d is 0.
func (b *timedBody) arm(d time.Duration) {
	if b.done {
		return
	}
	b.timeout = d
	var deadline time.Time
	if d > 0 {
		deadline = time.Now().Add(d)
	}
	_ = b.control.SetReadDeadline(deadline) // it worked when the body was wrapped
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	switch {
	case err == nil:
	case err == io.EOF:
		b.done = true
	case b.timeout > 0 && errors.Is(err, os.ErrDeadlineExceeded):
		b.expired = &bodyTimeoutError{timeout: b.timeout, err: err}
		err = b.expired
	}
	return n, err
}

func (b *timedBody) Close() error { return b.body.Close() }

// bodyTimeoutRoute arms a route's own body timeout (RouteBodyTimeout) when
// the request reaches the route, before the route's decorators.
type bodyTimeoutRoute struct {
	timeout time.Duration
	next    http.Handler
}

func (h *bodyTimeoutRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if b, ok := r.Body.(*timedBody); ok {
		b.arm(h.timeout)
	}
	h.next.ServeHTTP(w, r)
}
