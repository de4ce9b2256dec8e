package web

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
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

// ServeHTTP calls f and renders its error, if any; an error after f began
// the response is logged to slog.Default instead, as an App does.
func (f HandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if recorded(w) == nil { // outside an App: record what f sends
		rw := getWriter(w)
		defer putWriter(rw)
		w = rw
	}
	err := f(w, r)
	switch {
	case err == nil:
	case headerSent(w):
		slog.Default().LogAttrs(r.Context(), slog.LevelError, "handler error after response began",
			slog.String("route", r.Pattern), slog.String("error", err.Error()))
	default:
		writeError(w, r, err, false, slog.Default())
	}
}

// renderError writes err as the response, unless a response has begun.
func (a *App) renderError(w http.ResponseWriter, r *http.Request, err error) {
	if headerSent(w) {
		a.logger.LogAttrs(r.Context(), slog.LevelError, "handler error after response began",
			slog.String("route", r.Pattern), slog.String("error", err.Error()))
		return
	}
	if a.settings.errorHandler != nil {
		a.settings.errorHandler(w, r, err)
		return
	}
	writeError(w, r, err, a.settings.debug, a.logger)
}

// writeError renders err as text, or as {"error": "..."} for clients that
// accept JSON. Errors that are not an *Error (or a body-limit or
// body-timeout error) are logged and shown as a bare 500.
func writeError(w http.ResponseWriter, r *http.Request, err error, debug bool, logger *slog.Logger) {
	status, message := http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError)
	var e *Error
	switch {
	case errors.As(err, &e):
		status, message = e.status(), e.message()
		if status >= 500 {
			logger.LogAttrs(r.Context(), slog.LevelError, "handler error",
				slog.String("route", r.Pattern), slog.String("error", err.Error()))
		}
	case errors.As(bodyError(err), &e): // too large (413) or too slow (408)
		status, message = e.status(), e.message()
	default:
		logger.LogAttrs(r.Context(), slog.LevelError, "handler error",
			slog.String("route", r.Pattern), slog.String("error", err.Error()))
		if debug {
			message = err.Error()
		}
	}
	if debug && e != nil {
		message = e.Error()
	}
	h := w.Header()
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	h.Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusRequestTimeout {
		// The rest of the body may still be on its way: the connection
		// cannot carry another request (RFC 9110, 15.5.9).
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
