package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loomrt/loom"
)

// ErrDuplicateJob is returned by Add for a name already scheduled.
var ErrDuplicateJob = errors.New("task: duplicate job name")

// maxSleep bounds one wait for a timer, so that a wall clock stepped while
// the Scheduler sleeps is noticed within a minute.
const maxSleep = time.Minute

// A Scheduler runs jobs on their triggers. Each job has its own goroutine
// that waits for its next time and hands the run to the executor, so a slow
// job never delays another job's trigger. Its methods are safe for
// concurrent use.
type Scheduler struct {
	clock   Clock
	exec    loom.Executor
	ownExec bool
	locker  Locker
	log     *slog.Logger
	hooks   []Hooks

	runCtx     context.Context
	cancelRuns context.CancelCauseFunc
	stop       chan struct{} // closed by Shutdown: the job loops end
	loops      sync.WaitGroup

	mu      sync.Mutex
	jobs    []*job
	names   map[string]*job
	closed  bool
	running int           // runs under way, all jobs
	idle    chan struct{} // closed when running falls to 0 after Shutdown began
}

// NewScheduler returns a Scheduler with no jobs. Without WithExecutor it
// builds its executor with loom.FromEnv("scheduler", ""), and a bad spec in
// LOOM_EXECUTOR_SCHEDULER or LOOM_EXECUTOR is its error. Shut it down with
// Shutdown.
func NewScheduler(opts ...Option) (*Scheduler, error) {
	s := &Scheduler{clock: SystemClock, log: slog.Default(), names: map[string]*job{}, stop: make(chan struct{}), idle: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	if s.clock == nil {
		s.clock = SystemClock
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.exec == nil {
		exec, err := loom.FromEnv("scheduler", "")
		if err != nil {
			return nil, fmt.Errorf("task: scheduler executor: %w", err)
		}
		s.exec, s.ownExec = exec, true
	}
	s.runCtx, s.cancelRuns = context.WithCancelCause(context.Background())
	return s, nil
}

// Add schedules fn under name on trigger, from now on. It returns an error,
// and schedules nothing, for an empty or duplicate name (ErrDuplicateJob), a
// nil fn (ErrNilFunc), a bad trigger (ErrCron, ErrInterval), a bad option
// (an unknown WithTimeZone, a negative WithJitter or WithInitialDelay), or after Shutdown
// has begun (loom.ErrClosed).
//
// fn gets a context that ends when Shutdown gives up waiting, and that
// carries the job's name and scheduled time (JobName, ScheduledAt). An
// error it returns, or a panic, is logged, counted and reported to the
// hooks; the job stays scheduled.
func (s *Scheduler) Add(name string, trigger Trigger, fn func(ctx context.Context) error, opts ...JobOption) error {
	cfg := jobConfig{loc: time.Local}
	for _, o := range opts {
		o(&cfg)
	}
	var err error
	switch {
	case name == "":
		err = errors.New("task: empty job name")
	case fn == nil:
		err = ErrNilFunc
	case trigger.kind == "":
		err = errors.New("task: no trigger")
	case trigger.err != nil:
		err = trigger.err
	case cfg.err != nil:
		err = cfg.err
	case cfg.jitter < 0:
		err = fmt.Errorf("task: negative jitter %v", cfg.jitter)
	case cfg.initialDelay < 0:
		err = fmt.Errorf("task: negative initial delay %v", cfg.initialDelay)
	case cfg.overlap < SkipIfRunning || cfg.overlap > Allow:
		err = fmt.Errorf("task: unknown overlap policy %d", cfg.overlap)
	case cfg.misfire < RunOnce || cfg.misfire > Skip:
		err = fmt.Errorf("task: unknown misfire policy %d", cfg.misfire)
	}
	if err != nil {
		return fmt.Errorf("add job %q: %w", name, err)
	}
	j := &job{s: s, name: name, fn: fn, trigger: trigger, cfg: cfg, ended: make(chan time.Time, 1), turn: make(chan struct{}, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("add job %q: %w", name, loom.ErrClosed)
	}
	if _, ok := s.names[name]; ok {
		return fmt.Errorf("add job %q: %w", name, ErrDuplicateJob)
	}
	s.names[name] = j
	s.jobs = append(s.jobs, j)
	s.loops.Add(1)
	go j.loop(s.now())
	return nil
}

// now reads the wall clock: occurrences are wall-clock times, and a clock
// stepped forward must show as lateness.
func (s *Scheduler) now() time.Time { return s.clock.Now().Round(0) }

// JobInfo describes a job, as Jobs returns it.
type JobInfo struct {
	Name    string
	Trigger string    // "cron 0 * * * *", "every 1m0s", …
	Next    time.Time // the next occurrence; zero if none (an At that ran)
	Running int       // runs under way now

	LastRun      time.Time     // when the last run started; zero if none
	LastDuration time.Duration // how long it took
	LastError    error         // its error; nil if it succeeded

	Runs     uint64 // runs finished
	Failures uint64 // runs that returned an error or panicked, were refused by the executor, or whose claim the Locker refused
	Panics   uint64 // runs that panicked (also counted in Failures)
	// Missed counts occurrences that did not run because they were late
	// (see Misfire), or because the Locker stayed unavailable
	// (ErrUnavailable) for MisfireGrace after their first claim attempt.
	Missed   uint64
	Overlaps uint64 // occurrences that did not run because the job was running (see Overlap)
	// Elsewhere counts occurrences another instance claimed (see Locker).
	Elsewhere uint64
}

// Jobs returns a snapshot of every job, in the order they were added.
func (s *Scheduler) Jobs() []JobInfo {
	s.mu.Lock()
	jobs := slices.Clone(s.jobs)
	s.mu.Unlock()
	out := make([]JobInfo, 0, len(jobs))
	for _, j := range jobs {
		j.mu.Lock()
		info := j.info
		info.Running = j.running
		j.mu.Unlock()
		out = append(out, info)
	}
	return out
}

// AbandonedError is what Shutdown returns when its context ends before the
// running jobs return: it names them, and wraps loom.ErrAbandoned and the
// context's error.
type AbandonedError struct {
	Jobs  []string
	cause error
}

func (e *AbandonedError) Error() string {
	return fmt.Sprintf("task: shutdown: %v: jobs abandoned: %s", e.cause, strings.Join(e.Jobs, ", "))
}

func (e *AbandonedError) Unwrap() []error { return []error{loom.ErrAbandoned, e.cause} }

// Shutdown stops triggering jobs and waits for the runs under way to
// return; queued runs do not start. When ctx ends first it cancels the
// runs' contexts (cause loom.ErrAbandoned) and returns an *AbandonedError
// naming the jobs still running. It then shuts down the executor if the
// Scheduler built it. It may be called more than once.
func (s *Scheduler) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stop)
		if s.running == 0 {
			close(s.idle)
		}
	}
	s.mu.Unlock()

	// A loop may be waiting for room in a full executor: that wait ends
	// when the runs' context is cancelled.
	loopsDone := make(chan struct{})
	go func() {
		s.loops.Wait()
		close(loopsDone)
	}()
	var err error
	select {
	case <-loopsDone:
		select {
		case <-s.idle:
		case <-ctx.Done():
			err = s.abandon(ctx)
		}
	case <-ctx.Done():
		err = s.abandon(ctx)
		<-loopsDone
	}
	if s.ownExec {
		err = errors.Join(err, s.exec.Shutdown(ctx))
	}
	return err
}

// abandon cancels the runs under way and returns the error that names them,
// nil if there are none.
func (s *Scheduler) abandon(ctx context.Context) error {
	// Name the jobs before cancelling them: they may end at once.
	abandoned := &AbandonedError{cause: ctx.Err()}
	for _, info := range s.Jobs() {
		if info.Running > 0 {
			abandoned.Jobs = append(abandoned.Jobs, info.Name)
		}
	}
	s.cancelRuns(loom.ErrAbandoned)
	if len(abandoned.Jobs) == 0 {
		return nil
	}
	return abandoned
}

type contextKey int

const (
	nameKey contextKey = iota
	scheduledKey
)

// JobName returns the name of the job running with ctx; "" outside a job.
func JobName(ctx context.Context) string {
	name, _ := ctx.Value(nameKey).(string)
	return name
}

// ScheduledAt returns the time the running occurrence was scheduled for
// (before jitter, and the missed time for a catch-up run); zero outside a
// job.
func ScheduledAt(ctx context.Context) time.Time {
	at, _ := ctx.Value(scheduledKey).(time.Time)
	return at
}

type job struct {
	s       *Scheduler
	name    string
	fn      func(context.Context) error
	trigger Trigger
	cfg     jobConfig
	ended   chan time.Time // After: when a run ends

	mu       sync.Mutex
	info     JobInfo
	running  int // runs under way, claiming included
	claiming int // runs waiting for the Locker's answer
	queued   bool
	queuedAt time.Time

	// turn lets one claimed run call fn at a time unless the policy is
	// Allow: the claims that waited for an unavailable Locker are all
	// answered when it comes back.
	turn chan struct{}
}

// loop waits for each occurrence and triggers it, until Shutdown.
func (j *job) loop(now time.Time) {
	defer j.s.loops.Done()
	j.mu.Lock()
	j.info.Name, j.info.Trigger = j.name, j.trigger.String()
	j.mu.Unlock()

	start := now.Add(j.cfg.initialDelay)
	var next time.Time
	switch {
	case j.trigger.kind == "after" && j.cfg.initialDelay > 0:
		next = start
	case j.trigger.kind == "after":
		next = now.Add(j.trigger.every)
	case j.trigger.kind == "at":
		next = j.trigger.at // if it has passed, a misfire
	default:
		next = j.trigger.next(start, j.cfg.loc)
	}
	for !next.IsZero() {
		j.setNext(next)
		var jitter time.Duration
		if j.cfg.jitter > 0 {
			jitter = rand.N(j.cfg.jitter)
		}
		if !j.sleepUntil(next.Add(jitter)) {
			return
		}
		now := j.s.now().Add(-jitter)
		last, due := j.dueUntil(next, now)
		run := true
		missed := due - 1
		if now.Sub(last) > MisfireGrace && j.cfg.misfire == Skip {
			run, missed = false, due
		}
		if missed > 0 {
			j.skipped(Missed, missed)
		}
		started := run && j.fire(last)
		if j.trigger.kind != "after" {
			next = j.trigger.next(last, j.cfg.loc)
			continue
		}
		end := now
		if started {
			select {
			case end = <-j.ended:
			case <-j.s.stop:
				return
			}
		}
		next = end.Add(j.trigger.every)
	}
	j.setNext(time.Time{})
}

func (j *job) setNext(t time.Time) {
	j.mu.Lock()
	j.info.Next = t
	j.mu.Unlock()
}

// sleepUntil waits until the wall clock reads t or later; false if the
// Scheduler stops first. It wakes at least every maxSleep to read the clock
// again, and waits again if the clock was stepped back.
func (j *job) sleepUntil(t time.Time) bool {
	for {
		d := t.Sub(j.s.now())
		if d <= 0 {
			return true
		}
		timer := j.s.clock.NewTimer(min(d, maxSleep))
		select {
		case <-timer.C():
		case <-j.s.stop:
			timer.Stop()
			return false
		}
	}
}

// maxCount bounds the counting of missed occurrences after a long jump.
const maxCount = 1 << 20

// dueUntil returns the latest occurrence in [first, now], and how many there
// are (at least one: first itself, even if the clock went back).
func (j *job) dueUntil(first, now time.Time) (last time.Time, n int) {
	last, n = first, 1
	if j.trigger.kind == "every" {
		if now.After(first) {
			k := int(min(now.Sub(first)/j.trigger.every, maxCount))
			return first.Add(time.Duration(k) * j.trigger.every), k + 1
		}
		return last, n
	}
	for n < maxCount {
		t := j.trigger.next(last, j.cfg.loc)
		if t.IsZero() || t.After(now) {
			break
		}
		last, n = t, n+1
	}
	return last, n
}

func (j *job) skipped(reason SkipReason, n int) {
	j.mu.Lock()
	switch reason {
	case Missed:
		j.info.Missed += uint64(n)
	case Overlapped:
		j.info.Overlaps += uint64(n)
	case ClaimedElsewhere:
		j.info.Elsewhere += uint64(n)
	}
	j.mu.Unlock()
	for _, h := range j.s.hooks {
		if h.Skipped != nil {
			h.Skipped(j.name, reason, n)
		}
	}
}

// fire applies the overlap policy to the occurrence at and starts a run if
// it allows; it reports whether a run started.
func (j *job) fire(at time.Time) bool {
	j.mu.Lock()
	if j.running-j.claiming > 0 {
		switch {
		case j.cfg.overlap == Queue && !j.queued:
			j.queued, j.queuedAt = true, at
			j.mu.Unlock()
			return true // After waits for the queued run's end too
		case j.cfg.overlap != Allow:
			j.mu.Unlock()
			j.skipped(Overlapped, 1)
			return false
		}
	}
	j.mu.Unlock()
	return j.start(at)
}

// start hands a run of the occurrence at to the executor.
func (j *job) start(at time.Time) bool {
	s := j.s
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.running++
	s.mu.Unlock()
	j.mu.Lock()
	j.running++
	j.mu.Unlock()

	ctx := context.WithValue(context.WithValue(s.runCtx, nameKey, j.name), scheduledKey, at)
	err := s.exec.Go(ctx, func(ctx context.Context) { j.run(ctx, at) })
	if err != nil {
		err = fmt.Errorf("task: job %q at %s: executor: %w", j.name, at.Format(time.RFC3339), err)
		s.log.Error("task: job not started", "job", j.name, "scheduled", at, "err", err)
		j.mu.Lock()
		j.info.Failures++
		j.info.LastError = err
		j.mu.Unlock()
		j.finish(s.now())
		return false
	}
	return true
}

// run runs one occurrence: claims it if a Locker is set, calls fn with the
// hooks around it, and records the outcome.
func (j *job) run(ctx context.Context, at time.Time) {
	s := j.s
	defer func() { j.finish(s.now()) }()
	if s.locker != nil && j.trigger.distributed() {
		j.runLocked(ctx, at)
		return
	}
	j.call(ctx, at)
}

// call runs fn once with the hooks around it and records the outcome.
func (j *job) call(ctx context.Context, at time.Time) error {
	s := j.s
	var ends []func(error)
	for _, h := range s.hooks {
		if h.Trace != nil {
			var end func(error)
			ctx, end = h.Trace(ctx, j.name, at)
			if end != nil {
				ends = append(ends, end)
			}
		}
	}
	for _, h := range s.hooks {
		if h.BeforeRun != nil {
			h.BeforeRun(j.name, at)
		}
	}
	began := s.now()
	_, err := call(ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, j.fn(ctx) })
	took := s.now().Sub(began)
	j.record(at, began, took, err)
	for _, h := range s.hooks {
		if h.AfterRun != nil {
			h.AfterRun(j.name, at, took, err)
		}
	}
	for i := len(ends) - 1; i >= 0; i-- {
		ends[i](err)
	}
	return err
}

func (j *job) record(at, began time.Time, took time.Duration, err error) {
	if err != nil {
		j.s.log.Error("task: job failed", "job", j.name, "scheduled", at, "err", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.info.Runs++
	j.info.LastRun, j.info.LastDuration, j.info.LastError = began, took, err
	if err != nil {
		j.info.Failures++
		if errors.Is(err, ErrPanicked) {
			j.info.Panics++
		}
	}
}

// finish ends a run: it starts the queued one, if any, or tells an After
// loop when the job ended.
func (j *job) finish(end time.Time) {
	j.mu.Lock()
	j.running--
	queued, at := j.queued, j.queuedAt
	j.queued = false
	j.mu.Unlock()

	s := j.s
	s.mu.Lock()
	s.running--
	if s.closed && s.running == 0 {
		close(s.idle)
	}
	s.mu.Unlock()

	if queued && j.start(at) {
		return
	}
	select {
	case j.ended <- end:
	default:
	}
}
