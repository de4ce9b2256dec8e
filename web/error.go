package web

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is an error that carries the HTTP status and the message the client
// sees. Return one from a HandlerFunc to choose the response; wrap a cause in
// Err to keep it for logs without showing it to the client.
type Error struct {
	Status  int    // HTTP status code; 0 means 500
	Message string // shown to the client; "" means the status text
	Err     error  // the cause, logged but never sent (outside debug mode)
}

// Errorf returns an *Error with the given status and a formatted message.
// As with fmt.Errorf, a %w verb keeps the wrapped error as the cause.
func Errorf(status int, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &Error{Status: status, Message: err.Error(), Err: errors.Unwrap(err)}
}

// Abort returns an *Error with the status and its standard text, for a
// handler that wants to stop with a bare status: return web.Abort(403).
func Abort(status int) error {
	return &Error{Status: status}
}

func (e *Error) Error() string {
	msg := e.message()
	if e.Err != nil && e.Err.Error() != msg {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) status() int {
	if e.Status == 0 {
		return http.StatusInternalServerError
	}
	return e.Status
}

func (e *Error) message() string {
	if e.Message != "" {
		return e.Message
	}
	return http.StatusText(e.status())
}

// badRequest builds the 400 returned when client input does not parse.
func badRequest(format string, args ...any) error {
	return &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}
