package taskpg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/loomrt/loom/task"
)

// unavailable reports whether err means the database could not answer, not
// that it refused the statement: the same statement may succeed once the
// server is back. That is:
//
//   - the connection failed or broke: refused, reset or timed out while
//     connecting, a network error, an end of stream, a connection pgx had
//     closed already;
//   - the server says it is going away or cannot serve for now: class 08
//     (connection exception), 57P01 (terminated by an administrator: a fast
//     shutdown or restart), 57P02 (crash shutdown), 57P03 (starting up or
//     shutting down), class 53 (too many connections, out of memory, disk
//     full), 40001 and 40P01 (the transaction lost a serialization or
//     deadlock race), 25006 (a read-only server: a standby mid-failover).
//
// Any other server error (a missing table, a denied permission, a failed
// login, an unknown database) is a refusal that a retry would meet again;
// a context the caller cancelled, or whose deadline passed during a
// statement, means the caller gave up. A statement whose reply was lost
// may have been applied: the package comment says what a retry then does.
func unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "40001", "40P01", "25006":
			return true
		}
		class := pgErr.Code[:min(2, len(pgErr.Code))]
		return class == "08" || class == "53"
	}
	// A connection attempt that timed out (connect_timeout) is an
	// unreachable server, whereas a statement past its deadline is the
	// caller's.
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed)
}

// classify wraps err with task.ErrUnavailable if the database could not
// answer.
func classify(err error) error {
	if unavailable(err) {
		return fmt.Errorf("%w: %w", task.ErrUnavailable, err)
	}
	return err
}

// The wait between two attempts at an unavailable database doubles from
// minRetry up to maxRetry, or a shorter cap the caller sets.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = time.Second
)

// backoff returns the wait after last: twice it, at least minRetry, at most
// limit.
func backoff(last, limit time.Duration) time.Duration {
	return max(min(2*last, limit), min(minRetry, limit))
}
