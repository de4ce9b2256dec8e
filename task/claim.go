package task

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// The wait between two attempts at a Locker that is unavailable doubles
// from minRetry to maxRetry, so that a store back from a restart is seen
// within maxRetry, and instances waiting for it do not retry in step.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 5 * time.Second
)

// runLocked claims the occurrence at and runs it if the claim is this
// instance's, then takes over an occurrence a dead holder left unfinished.
// A claim or take-over that finds the Locker unavailable is tried again,
// backing off, until MisfireGrace after the first attempt; an occurrence
// still unclaimed then is counted as missed and logged once, and its
// take-over is left to the next trigger.
func (j *job) runLocked(ctx context.Context, at time.Time) {
	s := j.s
	deadline := s.now().Add(MisfireGrace)
	j.mu.Lock()
	j.claiming++
	j.mu.Unlock()
	claim, attempts, err := j.claim(ctx, at, deadline)
	j.mu.Lock()
	j.claiming--
	j.mu.Unlock()
	switch {
	case err == nil:
		if attempts > 1 {
			s.log.Warn("task: claimed once the locker was back", "job", j.name, "scheduled", at, "attempts", attempts)
		}
		j.runClaimed(ctx, at, claim)
	case errors.Is(err, ErrClaimed):
		j.skipped(ClaimedElsewhere, 1)
	case errors.Is(err, errStopped):
		return
	case errors.Is(err, ErrUnavailable):
		s.log.Error("task: occurrence missed: locker unavailable", "job", j.name, "scheduled", at, "attempts", attempts, "err", err)
		j.skipped(Missed, 1)
		return // a take-over would find the Locker unavailable too; the next trigger's tries
	default:
		j.record(at, s.now(), 0, fmt.Errorf("task: job %q: claim %s: %w", j.name, at.Format(time.RFC3339), err))
	}
	j.takeOver(ctx, deadline)
}

// errStopped ends a wait for the Locker when the Scheduler shuts down.
var errStopped = errors.New("task: scheduler stopped")

// claim asks the Locker for the occurrence at until it answers or deadline
// passes; it returns the claim, the attempts made, and the last error.
func (j *job) claim(ctx context.Context, at, deadline time.Time) (Claim, int, error) {
	var wait time.Duration
	for attempts := 1; ; attempts++ {
		claim, err := j.s.locker.Claim(ctx, j.name, at)
		if !errors.Is(err, ErrUnavailable) {
			return claim, attempts, err
		}
		if !j.retry(ctx, &wait, deadline) {
			if ctx.Err() != nil || j.stopped() {
				return nil, attempts, errStopped
			}
			return nil, attempts, err
		}
	}
}

// takeOver runs once more any occurrence whose holder died before finishing
// it, retrying an unavailable Locker until deadline.
func (j *job) takeOver(ctx context.Context, deadline time.Time) {
	var wait time.Duration
	for {
		at, claim, ok, err := j.s.locker.TakeOver(ctx, j.name)
		switch {
		case err == nil && ok:
			ctx = context.WithValue(ctx, scheduledKey, at)
			j.runClaimed(ctx, at, claim)
			return
		case err == nil:
			return
		case errors.Is(err, ErrUnavailable) && j.retry(ctx, &wait, deadline):
			continue
		}
		if ctx.Err() == nil && !j.stopped() {
			j.s.log.Error("task: take over", "job", j.name, "err", err)
		}
		return
	}
}

// retry waits before the next attempt at the Locker: twice the last wait,
// between minRetry and maxRetry, jittered, and never past deadline. It is
// false when deadline has passed, the Scheduler stops, or ctx ends.
func (j *job) retry(ctx context.Context, wait *time.Duration, deadline time.Time) bool {
	left := deadline.Sub(j.s.now())
	if left <= 0 {
		return false
	}
	*wait = min(max(2**wait, minRetry), maxRetry)
	d := *wait/2 + rand.N(*wait/2+1)
	timer := j.s.clock.NewTimer(min(d, left))
	defer timer.Stop()
	select {
	case <-timer.C():
		return true
	case <-j.s.stop:
	case <-ctx.Done():
	}
	return false
}

func (j *job) stopped() bool {
	select {
	case <-j.s.stop:
		return true
	default:
		return false
	}
}

// runClaimed runs the claimed occurrence at, after any other claimed run of
// the job on this instance unless its overlap policy is Allow, and ends the
// claim.
func (j *job) runClaimed(ctx context.Context, at time.Time, claim Claim) {
	var err error
	if j.cfg.overlap != Allow {
		select {
		case j.turn <- struct{}{}:
			defer func() { <-j.turn }()
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
	}
	if err == nil {
		err = j.call(ctx, at)
	}
	if err := claim.Done(context.WithoutCancel(ctx), err); err != nil {
		j.s.log.Error("task: end claim", "job", j.name, "scheduled", at, "err", err)
	}
}
