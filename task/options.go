package task

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/loomrt/loom"
)

// An Option configures a Scheduler (NewScheduler). Options of one job are
// JobOptions (Scheduler.Add): a distinct type, so that neither compiles
// where the other belongs.
type Option func(*Scheduler)

// WithClock makes the Scheduler read time and make timers through c;
// default (and nil) SystemClock. Tests pass a fake clock.
func WithClock(c Clock) Option { return func(s *Scheduler) { s.clock = c } }

// WithExecutor runs the jobs on exec, which the caller owns and shuts down;
// default loom.FromEnv("scheduler", ""), which the Scheduler owns.
func WithExecutor(exec loom.Executor) Option { return func(s *Scheduler) { s.exec = exec } }

// WithLocker claims each occurrence of a Cron, Every or At job from l
// before running it, so that it runs once across instances; default none.
func WithLocker(l Locker) Option { return func(s *Scheduler) { s.locker = l } }

// WithLogger logs failed and panicking jobs to l; default (and nil)
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(s *Scheduler) { s.log = l } }

// WithHooks calls h's functions around every run; it may be given more
// than once, and the hooks run in that order.
func WithHooks(h Hooks) Option { return func(s *Scheduler) { s.hooks = append(s.hooks, h) } }

// Hooks are called by the Scheduler, on the goroutine that runs the job, for
// users' own metrics. Any field may be nil. They must be quick and safe for
// concurrent use: jobs run at once call them at once.
type Hooks struct {
	// BeforeRun is called as a run starts.
	BeforeRun func(job string, scheduled time.Time)
	// AfterRun is called as a run ends, with its duration and error (a
	// panic is an error wrapping ErrPanicked).
	AfterRun func(job string, scheduled time.Time, took time.Duration, err error)
	// Skipped is called for occurrences that did not run: n of them, for
	// the reason given.
	Skipped func(job string, reason SkipReason, n int)
	// Trace is called as a run starts, before BeforeRun: the job's
	// function gets the context it returns (the run's span, for
	// task/oteltask), and end, if not nil, is called as the run ends, after
	// AfterRun, with the run's error. ctx carries no request's values: a
	// scheduled run starts a trace of its own.
	Trace func(ctx context.Context, job string, scheduled time.Time) (traced context.Context, end func(err error))
}

// A SkipReason says why occurrences did not run.
type SkipReason int

const (
	// Missed: the process was suspended, busy or its clock stepped.
	Missed SkipReason = iota
	// Overlapped: the job was still running (SkipIfRunning, or Queue with
	// a run already waiting).
	Overlapped
	// ClaimedElsewhere: another instance claimed the occurrence.
	ClaimedElsewhere
)

func (r SkipReason) String() string {
	switch r {
	case Missed:
		return "missed"
	case Overlapped:
		return "overlapped"
	case ClaimedElsewhere:
		return "claimed elsewhere"
	}
	return fmt.Sprintf("SkipReason(%d)", int(r))
}

// An Overlap policy says what happens when a job is due while it runs. A
// run still waiting for its Locker's answer does not count as running; runs
// whose claims the Locker answers together run one after another (at once
// under Allow).
type Overlap int

const (
	// SkipIfRunning (the default) does not start the run, and counts it.
	SkipIfRunning Overlap = iota
	// Queue starts the run when the current one ends; at most one run
	// waits, a further one is skipped and counted.
	Queue
	// Allow starts the run at once, alongside the current one.
	Allow
)

// A Misfire policy says what happens to an occurrence that is late: the
// process was suspended or overloaded, or its clock was stepped forward.
// Every occurrence missed is counted either way; none runs twice.
type Misfire int

const (
	// RunOnce (the default) runs the latest missed occurrence once, at once.
	RunOnce Misfire = iota
	// Skip runs none of them and waits for the next occurrence.
	Skip
)

// MisfireGrace is how late an occurrence may start and still count as on
// time.
const MisfireGrace = time.Minute

// A JobOption configures one job (Scheduler.Add).
type JobOption func(*jobConfig)

type jobConfig struct {
	loc          *time.Location
	overlap      Overlap
	misfire      Misfire
	jitter       time.Duration
	initialDelay time.Duration
	err          error
}

// WithLocation computes the job's Cron times in loc; default time.Local.
func WithLocation(loc *time.Location) JobOption {
	return func(c *jobConfig) {
		if loc == nil {
			c.err = fmt.Errorf("task: WithLocation(nil): no time zone")
		}
		c.loc = loc
	}
}

// WithTimeZone is WithLocation with the IANA name of a time zone
// ("Europe/Berlin"); an unknown name is an error from Add.
func WithTimeZone(name string) JobOption {
	return func(c *jobConfig) {
		loc, err := time.LoadLocation(name)
		if err != nil {
			c.err = fmt.Errorf("task: time zone %q: %w", name, err)
			return
		}
		c.loc = loc
	}
}

// WithOverlap sets the job's Overlap policy; default SkipIfRunning.
func WithOverlap(p Overlap) JobOption { return func(c *jobConfig) { c.overlap = p } }

// WithMisfire sets the job's Misfire policy; default RunOnce.
func WithMisfire(p Misfire) JobOption { return func(c *jobConfig) { c.misfire = p } }

// WithJitter delays each run by a random duration in [0, d), to spread the
// load of jobs due at one time; default 0. The occurrence keeps its scheduled
// time (ScheduledAt, Locker).
func WithJitter(d time.Duration) JobOption { return func(c *jobConfig) { c.jitter = d } }

// WithInitialDelay lets no occurrence run before d after Add; default 0.
func WithInitialDelay(d time.Duration) JobOption { return func(c *jobConfig) { c.initialDelay = d } }
