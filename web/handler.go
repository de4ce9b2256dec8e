package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
)

// HandlerFunc is the handler form of this package: it writes the response,
// or returns an error and writes nothing. An *Error (see Errorf) chooses the
// status and message; any other error is a 500 whose details are logged, not
// sent (unless the App is in Debug mode).
//
// A HandlerFunc is also an http.Handler, so it can be used with any mux; its
// ServeHTTP renders a returned error the way an App does by default.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP calls f and renders its error, if any, as the App serving w
// does (with its error handler, debug mode and logger), or as an App made without
// options would outside an App.
func (f HandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rw := recorded(w)
	if rw == nil { // outside an App: record what f sends
		rw = getWriter(w, nil)
		defer putWriter(rw)
		w = rw
	}
	if err := f(w, r); err != nil {
		rw.app.renderError(w, r, err)
	}
}

// renderError writes err as the response. When the client has gone, or a
// response has begun, it can only log it: at Debug level when the client
// caused it (it left: counted as 499; it stopped reading: the write timed
// out), at Error level otherwise. A nil App renders as an App made without
// options.
func (a *App) renderError(w http.ResponseWriter, r *http.Request, err error) {
	gone := r.Context().Err() != nil
	switch {
	case gone && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		markClientClosed(w)
		a.log(r, slog.LevelDebug, "client gone", err)
	case headerSent(w) && (gone || errors.Is(err, os.ErrDeadlineExceeded)):
		a.log(r, slog.LevelDebug, "client gone or not reading", err)
	case headerSent(w):
		a.log(r, slog.LevelError, "handler error after response began", err)
	case a != nil && a.settings.errorHandler != nil:
		a.settings.errorHandler(w, r, err)
	default:
		a.writeError(w, r, err)
	}
}

// log logs err about r at level; it is the one path for errors that have no
// response left to carry them. A nil App logs to slog.Default().
func (a *App) log(r *http.Request, level slog.Level, msg string, err error, attrs ...slog.Attr) {
	logger := slog.Default()
	if a != nil {
		logger = a.logger
	}
	logger.LogAttrs(r.Context(), level, msg,
		append([]slog.Attr{slog.String("route", r.Pattern), slog.String("error", err.Error())}, attrs...)...)
}

// logPanic logs a recovered panic v with its stack, marks it for the
// observers, and answers 500 unless a response has begun.
func (a *App) logPanic(w http.ResponseWriter, r *http.Request, msg string, v any) {
	for rw := recorded(w); rw != nil; rw = recorded(rw.ResponseWriter) {
		rw.panicked = true
	}
	a.log(r, slog.LevelError, msg, fmt.Errorf("%v", v), slog.String("stack", string(debug.Stack())))
	if !headerSent(w) {
		writeStatus(w, r, http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError))
	}
}

// writeError renders err as text, or as {"error": "..."} for clients that
// accept JSON. Errors that are not an *Error (or a body-limit or
// body-timeout error) are logged and shown as a bare 500.
func (a *App) writeError(w http.ResponseWriter, r *http.Request, err error) {
	debugging := a != nil && a.settings.debug
	status, message := http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError)
	var e *Error
	switch {
	case errors.As(err, &e):
		status, message = e.status(), e.message()
		if status >= 500 {
			a.log(r, slog.LevelError, "handler error", err)
		}
	case errors.As(bodyError(err), &e): // too large (413) or too slow (408)
		status, message = e.status(), e.message()
	default:
		a.log(r, slog.LevelError, "handler error", err)
		if debugging {
			message = err.Error()
		}
	}
	if debugging && e != nil {
		message = e.Error()
	}
	writeStatus(w, r, status, message)
}

// writeStatus writes an error response with status and message.
func writeStatus(w http.ResponseWriter, r *http.Request, status int, message string) {
	h := w.Header()
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	h.Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusRequestTimeout || status == http.StatusRequestEntityTooLarge {
		// The rest of the body may still be on its way: the connection
		// cannot carry another request (RFC 9110, 15.5.9 and 15.5.14).
		h.Set("Connection", "close")
	}
	if wantsJSON(r) {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(struct {
			Error string `json:"error"`
		}{message})
		return
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(message + "\n"))
}

// wantsJSON reports whether the client sent or asked for JSON.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json") ||
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
}
