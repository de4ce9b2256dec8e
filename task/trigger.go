package task

import (
	"errors"
	"fmt"
	"time"
)

// ErrInterval is wrapped by the error of Every or After given a duration
// that is not positive.
var ErrInterval = errors.New("task: interval must be positive")

// A Trigger says when a job runs. Make one with Cron, Every, After or At;
// a bad argument is reported by Scheduler.Add.
type Trigger struct {
	kind  string // "cron", "every", "after" or "at"
	cron  *CronSchedule
	every time.Duration
	at    time.Time
	err   error
}

// Cron runs the job at the times the cron expression names (see ParseCron),
// in the job's time zone (WithLocation, default time.Local).
func Cron(expr string) Trigger {
	c, err := ParseCron(expr)
	return Trigger{kind: "cron", cron: c, err: err}
}

// Every runs the job at a fixed rate, start to start, at the multiples of d
// since the Unix epoch: every minute runs at :00 of each minute on every
// instance of a service, so that a Locker sees one occurrence. A run still
// going when the next is due meets the job's Overlap policy.
func Every(d time.Duration) Trigger {
	t := Trigger{kind: "every", every: d}
	if d <= 0 {
		t.err = fmt.Errorf("%w: Every(%v)", ErrInterval, d)
	}
	return t
}

// After runs the job with a fixed delay, d from the end of one run to the
// start of the next; the first run is d after Add (or after WithInitialDelay).
// Its times are each instance's own, so a Locker does not apply to it.
func After(d time.Duration) Trigger {
	t := Trigger{kind: "after", every: d}
	if d <= 0 {
		t.err = fmt.Errorf("%w: After(%v)", ErrInterval, d)
	}
	return t
}

// At runs the job once, at t (at once if t has passed, as a misfire).
func At(t time.Time) Trigger {
	return Trigger{kind: "at", at: t}
}

// String describes the trigger: "cron 0 * * * *", "every 1m0s", ….
func (t Trigger) String() string {
	switch t.kind {
	case "cron":
		if t.cron != nil {
			return "cron " + t.cron.String()
		}
	case "every", "after":
		return t.kind + " " + t.every.String()
	case "at":
		return "at " + t.at.Format(time.RFC3339)
	}
	return t.kind
}

// next returns the first occurrence strictly after t; the zero time if there
// is none. After's occurrences depend on the end of a run: see job.loop.
func (t Trigger) next(after time.Time, loc *time.Location) time.Time {
	switch t.kind {
	case "cron":
		return t.cron.Next(after, loc)
	case "every":
		n := after.UnixNano()/int64(t.every) + 1
		return time.Unix(0, n*int64(t.every)).In(loc)
	case "after":
		return after.Add(t.every)
	case "at":
		if t.at.After(after) {
			return t.at
		}
	}
	return time.Time{}
}

// distributed reports whether every instance computes the same occurrences.
func (t Trigger) distributed() bool { return t.kind != "after" }
