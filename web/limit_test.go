package web_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loomrt/loom/web"
)

// countingReader counts the bytes taken from r: what a request body's
// reader consumed from the connection.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// chunkReader hands over at most size bytes a read, as a connection does
// when the body arrives in pieces.
type chunkReader struct {
	r    io.Reader
	size int
}

func (c chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.size {
		p = p[:c.size]
	}
	return c.r.Read(p)
}

// TestBodyLimitReadEdges reads bodies with no declared length (so only the
// reader can enforce the limit) at the limit, one past and far past: a
// handler gets the whole body at the limit, an error matching
// *http.MaxBytesError and a 413 past it, never more than the limit, and the
// reader takes at most one byte past the limit from the connection however
// large the caller's buffer is.
func TestBodyLimitReadEdges(t *testing.T) {
	const limit = 10
	tests := []struct {
		size   int
		status int
	}{
		{limit - 1, 200},
		{limit, 200},
		{limit + 1, 413},
		{limit + 1000, 413},
	}
	for _, piece := range []int{1 << 20, 4} {
		for _, tt := range tests {
			testBodyLimitRead(t, limit, tt.size, piece, tt.status)
		}
	}
}

// testBodyLimitRead posts size bytes, handed over piece bytes a read, to a
// route under limit whose handler reads the whole body.
func testBodyLimitRead(t *testing.T, limit, size, piece, status int) {
	t.Helper()
	app := newApp(t, web.WithBodyLimit(int64(limit)))
	var got int
	var readErr error
	app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
		b, err := io.ReadAll(r.Body)
		got, readErr = len(b), err
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%d", len(b))
		return err
	})
	src := &countingReader{r: chunkReader{strings.NewReader(strings.Repeat("x", size)), piece}}
	req := httptest.NewRequest("POST", "/", src)
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, req)
	if rec.Code != status {
		t.Errorf("%d bytes in pieces of %d, limit %d: got %d %q; want %d", size, piece, limit, rec.Code, rec.Body.String(), status)
	}
	var tooBig *http.MaxBytesError
	switch {
	case status == 200 && (got != size || readErr != nil):
		t.Errorf("%d bytes in pieces of %d, limit %d: handler read %d, %v; want %d, nil", size, piece, limit, got, readErr, size)
	case status == 413 && (got > limit || !errors.As(readErr, &tooBig)):
		t.Errorf("%d bytes in pieces of %d, limit %d: handler read %d, %v; want at most %d and an *http.MaxBytesError", size, piece, limit, got, readErr, limit)
	}
	if n := src.n.Load(); n > int64(limit)+1 {
		t.Errorf("%d bytes in pieces of %d, limit %d: %d bytes taken from the connection; want at most %d", size, piece, limit, n, limit+1)
	}
}

// TestBodyLimitSingleReads reads a body longer than the limit with buffers
// of exact sizes: a read of exactly the limit succeeds and hands over the
// limit; the next read fails; a first read of one byte past the limit hands
// over no more than the limit, with the error, in that same call.
func TestBodyLimitSingleReads(t *testing.T) {
	const limit = 10
	for _, first := range []int{limit, limit + 1, limit + 100} {
		app := newApp(t, web.WithBodyLimit(limit))
		var n1, n2 int
		var err1, err2 error
		app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
			n1, err1 = io.ReadFull(r.Body, make([]byte, first))
			n2, err2 = r.Body.Read(make([]byte, 100))
			return nil
		})
		req := httptest.NewRequest("POST", "/", io.MultiReader(strings.NewReader(strings.Repeat("x", 3*limit))))
		req.ContentLength = -1
		app.ServeHTTP(httptest.NewRecorder(), req)
		var tooBig *http.MaxBytesError
		if first == limit {
			if n1 != limit || err1 != nil {
				t.Errorf("read of exactly the limit (%d): got %d, %v; want %d, nil", limit, n1, err1, limit)
			}
		} else if n1 > limit || !errors.As(err1, &tooBig) {
			t.Errorf("first read of %d, limit %d: got %d, %v; want at most %d and an *http.MaxBytesError", first, limit, n1, err1, limit)
		}
		if n2 != 0 || !errors.As(err2, &tooBig) {
			t.Errorf("read after %d bytes, limit %d: got %d, %v; want 0 and an *http.MaxBytesError", first, limit, n2, err2)
		}
	}
}

// TestBodyCeilingBeforeDecorators checks the App's own check of a declared
// length, which runs before its decorators: at the limit the decorator and
// handler run, one byte past neither does. The route checks the length
// again, so without the App's check the answer would still be 413: the
// decorator is what tells the two apart.
func TestBodyCeilingBeforeDecorators(t *testing.T) {
	const limit = 10
	var decorated, handled atomic.Int32
	app := newApp(t, web.WithBodyLimit(limit), web.WithDecorators(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			decorated.Add(1)
			next.ServeHTTP(w, r)
		})
	}))
	app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
		handled.Add(1)
		_, err := io.Copy(io.Discard, r.Body)
		return err
	})
	for _, tt := range []struct {
		size   int
		status int
		runs   int32
	}{
		{limit, 200, 1},
		{limit + 1, 413, 0},
	} {
		decorated.Store(0)
		handled.Store(0)
		rec := do(t, app, "POST", "/", strings.Repeat("x", tt.size))
		if rec.Code != tt.status || decorated.Load() != tt.runs || handled.Load() != tt.runs {
			t.Errorf("POST of %d bytes (declared), limit %d: got %d, decorator ran %d, handler %d; want %d, %d, %d",
				tt.size, limit, rec.Code, decorated.Load(), handled.Load(), tt.status, tt.runs, tt.runs)
		}
	}
}

// TestRouteLimitBelowWhatWasRead has an App decorator read part of a body
// before the route lowers the limit below what was read: the next read
// fails with the route's limit (413), it does not slice past the buffer.
func TestRouteLimitBelowWhatWasRead(t *testing.T) {
	app := newApp(t, web.WithBodyLimit(100), web.WithDecorators(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadFull(r.Body, make([]byte, 50)); err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			next.ServeHTTP(w, r)
		})
	}))
	var n int
	var readErr error
	app.Post("/small", func(w http.ResponseWriter, r *http.Request) error {
		n, readErr = r.Body.Read(make([]byte, 100))
		return readErr
	}, web.WithBodyLimit(10))
	req := httptest.NewRequest("POST", "/small", io.MultiReader(strings.NewReader(strings.Repeat("x", 80))))
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, req)
	var tooBig *http.MaxBytesError
	if rec.Code != 413 || n != 0 || !errors.As(readErr, &tooBig) || tooBig.Limit != 10 {
		t.Errorf("route limit 10 after 50 bytes read: got %d, read %d, %v; want 413, 0 and the route's *http.MaxBytesError", rec.Code, n, readErr)
	}
}

// TestUnlimitedBodyFillsTheBuffer checks that a body with no limit is not
// read in one-byte steps: a read of a buffer the size of the body gets all
// of it in one call.
func TestUnlimitedBodyFillsTheBuffer(t *testing.T) {
	app := newApp(t, web.WithBodyLimit(0))
	var n int
	app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
		var err error
		n, err = r.Body.Read(make([]byte, 100))
		return err
	})
	req := httptest.NewRequest("POST", "/", io.MultiReader(strings.NewReader(strings.Repeat("x", 100))))
	req.ContentLength = -1
	app.ServeHTTP(httptest.NewRecorder(), req)
	if n != 100 {
		t.Errorf("one read of 100 bytes from a 100-byte body with no limit: got %d; want 100", n)
	}
}
