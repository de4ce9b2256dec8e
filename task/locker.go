package task

import (
	"context"
	"errors"
	"time"
)

// ErrClaimed is returned by Locker.Claim when another instance has claimed
// the occurrence already.
var ErrClaimed = errors.New("task: occurrence claimed by another instance")

// ErrUnavailable is wrapped by the errors of a Locker that could not reach
// its store (a database restarting, a connection refused or dropped): the
// same call may succeed once the store is back. The Scheduler retries such a
// claim or take-over, backing off, for up to MisfireGrace.
var ErrUnavailable = errors.New("task: locker unavailable")

// A Locker lets several instances of a service share a Scheduler's jobs so
// that each occurrence, a job name and a scheduled time, runs once. The
// Scheduler claims an occurrence before running it and ends the claim when
// the job returns. Implementations must be safe for concurrent use; see the
// taskpg sub-package for PostgreSQL.
//
// Claim and TakeOver return an error wrapping ErrUnavailable when their
// store cannot answer for now, and any other error when it refused the
// call; the Scheduler retries only the first kind.
type Locker interface {
	// Claim claims the occurrence of job scheduled at at, or returns
	// ErrClaimed if another instance holds or has run it.
	Claim(ctx context.Context, job string, at time.Time) (Claim, error)
	// TakeOver claims an occurrence of job whose holder stopped renewing
	// its claim before finishing it, so that it runs again (at least
	// once); ok is false when there is none, or the Locker gives at most
	// once.
	TakeOver(ctx context.Context, job string) (at time.Time, claim Claim, ok bool, err error)
}

// A Claim is an occurrence held by this instance.
type Claim interface {
	// Done records that the occurrence has run, with the job's error, and
	// stops renewing the claim.
	Done(ctx context.Context, err error) error
}
