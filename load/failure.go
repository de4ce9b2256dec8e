package load

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// failure is the outcome of one request: ok or the cause it failed.
type failure uint8

const (
	ok failure = iota
	failConnect
	failRefused
	failTimeout
	failRead
	failWrite
	failReset
	// failClosed: the server closed the connection (a clean close, not a
	// reset) after the request was written and before any byte of its
	// response, and the request was not sent again (see exchange).
	failClosed
	failStatus
	failBody
	// failTimeoutUnsent: open loop, the request's timeout, counted from
	// when it was due, passed while it waited for a free connection; it was
	// never sent.
	failTimeoutUnsent
	// aborted: the run ended while the request was in flight. Such requests
	// are neither served nor failed: they were cut off by the caller.
	aborted
)

// add counts f in e.
func (e *Errors) add(f failure) {
	switch f {
	case failConnect:
		e.Connect++
	case failRefused:
		e.Refused++
	case failTimeout:
		e.Timeout++
	case failRead:
		e.Read++
	case failWrite:
		e.Write++
	case failReset:
		e.Reset++
	case failClosed:
		e.Closed++
	case failStatus:
		e.Status++
	case failBody:
		e.Body++
	case failTimeoutUnsent:
		e.TimeoutUnsent++
	}
}

// merge adds o to e.
func (e *Errors) merge(o Errors) {
	e.Connect += o.Connect
	e.Refused += o.Refused
	e.Timeout += o.Timeout
	e.Read += o.Read
	e.Write += o.Write
	e.Reset += o.Reset
	e.Closed += o.Closed
	e.Status += o.Status
	e.Body += o.Body
	e.TimeoutUnsent += o.TimeoutUnsent
}

// classify names the cause of an I/O error; def is used when nothing more
// specific fits.
func classify(err error, def failure) failure {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return failTimeout
	case isReset(err):
		return failReset
	case errors.Is(err, syscall.ECONNREFUSED):
		return failRefused
	}
	return def
}

// classifyDial names the cause of a failed connection attempt. A dial that
// outlasts Config.Timeout is a connect error, not a timeout: it says the
// server is not accepting (a full backlog), where a timeout says it is slow
// to answer (docs/load.md keeps the same split).
func classifyDial(err error) failure {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return failRefused
	}
	return failConnect
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED)
}

// closedByPeer reports whether err, on a connection that had served requests
// before and before any byte of the response arrived, means the server closed
// the idle connection: the request may go again on a fresh one, if it is
// replayable or was not written at all.
func closedByPeer(err error) bool {
	return err == io.EOF || isReset(err)
}
