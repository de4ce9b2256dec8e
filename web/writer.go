package web

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
)

// responseWriter records what a handler wrote so that the app can log it,
// count it, and know whether an error can still change the status. One is
// taken from a pool per request; it never outlives the request.
type responseWriter struct {
	http.ResponseWriter
	app      *App  // the App serving the request; nil outside one
	status   int   // status sent, or the status logged for a response never sent (499)
	written  int64 // body bytes written
	wrote    bool  // header sent
	panicked bool  // a handler or decorator panicked
}

var writerPool = sync.Pool{New: func() any { return new(responseWriter) }}

func getWriter(w http.ResponseWriter, a *App) *responseWriter {
	rw := writerPool.Get().(*responseWriter)
	rw.ResponseWriter, rw.app = w, a
	return rw
}

func putWriter(rw *responseWriter) {
	*rw = responseWriter{}
	writerPool.Put(rw)
}

// WriteHeader records a final status and passes it on. An invalid one
// (not three digits) is not recorded: the engine's writer panics on it, as
// net/http's does, and the App answers 500.
func (w *responseWriter) WriteHeader(status int) {
	if !w.wrote && status >= 200 && status <= 999 || status == http.StatusSwitchingProtocols {
		w.status = status
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.status = http.StatusOK
		w.wrote = true
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

// WriteString passes s on as it is: without it, io.WriteString, the usual
// way to write a string, would copy s into a new slice on every call.
func (w *responseWriter) WriteString(s string) (int, error) {
	if !w.wrote {
		w.status = http.StatusOK
		w.wrote = true
	}
	n, err := io.WriteString(w.ResponseWriter, s)
	w.written += int64(n)
	return n, err
}

// ReadFrom keeps the sendfile path of *http.response for static files.
func (w *responseWriter) ReadFrom(r io.Reader) (int64, error) {
	if !w.wrote {
		w.status = http.StatusOK
		w.wrote = true
	}
	n, err := io.Copy(w.ResponseWriter, r)
	w.written += n
	return n, err
}

// Flush implements http.Flusher when the underlying writer does.
func (w *responseWriter) Flush() {
	if !w.wrote {
		w.status = http.StatusOK
		w.wrote = true
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack implements http.Hijacker for WebSocket upgrades.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// recorded finds the app's responseWriter under any decorator wrappers.
func recorded(w http.ResponseWriter) *responseWriter {
	for {
		if rw, ok := w.(*responseWriter); ok {
			return rw
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
}

// headerSent reports whether a response has begun on w, as far as the app can tell.
func headerSent(w http.ResponseWriter) bool {
	rw := recorded(w)
	return rw != nil && rw.wrote
}
