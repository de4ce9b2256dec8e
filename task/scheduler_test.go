package task_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
)

var epoch = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC) // a Monday

// recorder is a job that records the scheduled time of each run.
type recorder struct {
	mu  sync.Mutex
	got []time.Time
}

func (r *recorder) run(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, task.ScheduledAt(ctx))
	return nil
}

func (r *recorder) times() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.got...)
}

func newScheduler(t *testing.T, clock task.Clock, opts ...task.Option) *task.Scheduler {
	t.Helper()
	exec := loom.Virtual()
	var logs bytes.Buffer
	opts = append([]task.Option{task.WithClock(clock), task.WithExecutor(exec), task.WithLogger(slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil)))}, opts...)
	s, err := task.NewScheduler(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := exec.Shutdown(ctx); err != nil {
			t.Errorf("executor shutdown: %v", err)
		}
	})
	return s
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.String()
}

func equalTimes(t *testing.T, got, want []time.Time) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d runs %v; want %d %v", len(got), got, len(want), want)
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			t.Errorf("run %d: got %v; want %v", i, got[i], want[i])
		}
	}
}

// step advances the clock by d, count times, letting the scheduler settle
// after each step.
func step(t *testing.T, c *fakeClock, s *task.Scheduler, jobs int, d time.Duration, count int) {
	t.Helper()
	for range count {
		c.Advance(d)
		settle(t, c, s, jobs)
	}
}

func TestEveryFixedRateAligned(t *testing.T) {
	c := newFakeClock(epoch.Add(250 * time.Millisecond))
	s := newScheduler(t, c)
	var r recorder
	if err := s.Add("tick", task.Every(time.Second), r.run); err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	step(t, c, s, 1, time.Second, 3)
	// Aligned to whole seconds, not to the start time.
	equalTimes(t, r.times(), []time.Time{epoch.Add(time.Second), epoch.Add(2 * time.Second), epoch.Add(3 * time.Second)})
}

func TestCronTrigger(t *testing.T) {
	c := newFakeClock(epoch)
	s := newScheduler(t, c)
	var r recorder
	if err := s.Add("quarter", task.Cron("*/15 * * * *"), r.run, task.WithLocation(time.UTC)); err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	step(t, c, s, 1, 5*time.Minute, 9)
	equalTimes(t, r.times(), []time.Time{epoch.Add(15 * time.Minute), epoch.Add(30 * time.Minute), epoch.Add(45 * time.Minute)})
	if got, want := s.Jobs()[0].Next, epoch.Add(time.Hour); !got.Equal(want) {
		t.Errorf("next: got %v; want %v", got, want)
	}
}

func TestCronInZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	c := newFakeClock(epoch)
	s := newScheduler(t, c)
	var r recorder
	if err := s.Add("nine", task.Cron("0 9 * * *"), r.run, task.WithTimeZone("Europe/Berlin")); err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	step(t, c, s, 1, time.Hour, 24)
	equalTimes(t, r.times(), []time.Time{time.Date(2026, 1, 5, 9, 0, 0, 0, berlin)})
}

func TestAfterFixedDelay(t *testing.T) {
	c := newFakeClock(epoch)
	s := newScheduler(t, c)
	// Each run takes 3 s of the fake clock: the next starts 10 s after it ends.
	started := make(chan time.Time)
	release := make(chan struct{})
	err := s.Add("delay", task.After(10*time.Second), func(ctx context.Context) error {
		started <- c.Now()
		<-release
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	var starts []time.Time
	for range 2 {
		c.Advance(10 * time.Second)
		starts = append(starts, <-started)
		c.Advance(3 * time.Second)
		release <- struct{}{}
		settle(t, c, s, 1)
	}
	equalTimes(t, starts, []time.Time{epoch.Add(10 * time.Second), epoch.Add(23 * time.Second)})
}

func TestInitialDelayAndAt(t *testing.T) {
	c := newFakeClock(epoch)
	s := newScheduler(t, c)
	var every, once recorder
	if err := s.Add("delayed", task.Every(time.Minute), every.run, task.WithInitialDelay(90*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("once", task.At(epoch.Add(150*time.Second)), once.run); err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 2)
	step(t, c, s, 2, 30*time.Second, 4) // to 2m
	step(t, c, s, 1, 30*time.Second, 5) // to 4m30s: the At job ran at 2m30s and its loop ended
	equalTimes(t, every.times(), []time.Time{epoch.Add(2 * time.Minute), epoch.Add(3 * time.Minute), epoch.Add(4 * time.Minute)})
	equalTimes(t, once.times(), []time.Time{epoch.Add(150 * time.Second)})
	if next := s.Jobs()[1].Next; !next.IsZero() {
		t.Errorf("At after its run: next %v; want zero", next)
	}
}

// TestOverlap runs a job that takes 2.5 periods, under each policy.
func TestOverlap(t *testing.T) {
	tests := []struct {
		policy       task.Overlap
		wantRuns     int // started while the first one blocks, plus the first
		wantOverlaps uint64
		maxRunning   int
	}{
		{task.SkipIfRunning, 1, 3, 1},
		{task.Queue, 2, 2, 1}, // one waits; two more are skipped
		{task.Allow, 4, 0, 4},
	}
	for _, tt := range tests {
		t.Run(map[task.Overlap]string{task.SkipIfRunning: "skip", task.Queue: "queue", task.Allow: "allow"}[tt.policy], func(t *testing.T) {
			c := newFakeClock(epoch)
			s := newScheduler(t, c)
			release := make(chan struct{})
			var mu sync.Mutex
			started, running, peak := 0, 0, 0
			err := s.Add("slow", task.Every(time.Second), func(ctx context.Context) error {
				mu.Lock()
				started++
				running++
				peak = max(peak, running)
				mu.Unlock()
				<-release
				mu.Lock()
				running--
				mu.Unlock()
				return nil
			}, task.WithOverlap(tt.policy))
			if err != nil {
				t.Fatal(err)
			}
			for range 4 {
				c.Advance(time.Second)
				waitFor(t, "the loop to wait again", func() bool { return c.Pending() == 1 })
			}
			// The runs the policy lets overlap are on goroutines of their
			// own: wait until they are all inside the job before letting
			// them go, or a late one never overlaps.
			waitFor(t, "the runs to start", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return running == tt.maxRunning
			})
			close(release)
			settle(t, c, s, 1)
			info := s.Jobs()[0]
			mu.Lock()
			defer mu.Unlock()
			if started != tt.wantRuns || info.Overlaps != tt.wantOverlaps || peak != tt.maxRunning {
				t.Errorf("got %d runs, %d overlaps, %d at once; want %d, %d, %d", started, info.Overlaps, peak, tt.wantRuns, tt.wantOverlaps, tt.maxRunning)
			}
		})
	}
}

// TestMisfire steps the clock forward at once (a suspended laptop, a
// stepped clock): the missed occurrences are counted, and the job runs once
// or not at all, never many times back to back.
func TestMisfire(t *testing.T) {
	tests := []struct {
		name       string
		every      time.Duration
		jump       time.Duration
		policy     task.Misfire
		want       []time.Time
		wantMissed uint64
	}{
		// The last occurrence is on time (30 s late): it runs under either policy.
		{"minutely run once", time.Minute, time.Hour + 30*time.Second, task.RunOnce, []time.Time{epoch.Add(time.Hour)}, 59},
		{"minutely skip", time.Minute, time.Hour + 30*time.Second, task.Skip, []time.Time{epoch.Add(time.Hour)}, 59},
		// The last occurrence (5:00) is 30 minutes late.
		{"hourly run once", time.Hour, 5*time.Hour + 30*time.Minute, task.RunOnce, []time.Time{epoch.Add(5 * time.Hour)}, 4},
		{"hourly skip", time.Hour, 5*time.Hour + 30*time.Minute, task.Skip, nil, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFakeClock(epoch)
			s := newScheduler(t, c)
			var r recorder
			if err := s.Add("job", task.Every(tt.every), r.run, task.WithMisfire(tt.policy)); err != nil {
				t.Fatal(err)
			}
			settle(t, c, s, 1)
			c.Advance(tt.jump)
			settle(t, c, s, 1)
			equalTimes(t, r.times(), tt.want)
			if got := s.Jobs()[0].Missed; got != tt.wantMissed {
				t.Errorf("missed: got %d; want %d", got, tt.wantMissed)
			}
			// Then back to normal.
			before := len(r.times())
			c.Set(s.Jobs()[0].Next)
			settle(t, c, s, 1)
			if got := len(r.times()); got != before+1 {
				t.Errorf("after the jump: got %d more runs; want 1", got-before)
			}
		})
	}
}

// TestMisfireWithinGrace: an occurrence late by less than MisfireGrace runs
// under Skip as well.
func TestMisfireWithinGrace(t *testing.T) {
	c := newFakeClock(epoch)
	s := newScheduler(t, c)
	var r recorder
	if err := s.Add("hourly", task.Cron("0 * * * *"), r.run, task.WithMisfire(task.Skip), task.WithLocation(time.UTC)); err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	c.Advance(time.Hour + task.MisfireGrace) // exactly at the edge: still on time
	settle(t, c, s, 1)
	equalTimes(t, r.times(), []time.Time{epoch.Add(time.Hour)})
	c.Advance(time.Hour + task.MisfireGrace + time.Second) // one past: skipped
	settle(t, c, s, 1)
	equalTimes(t, r.times(), []time.Time{epoch.Add(time.Hour)})
	if got := s.Jobs()[0].Missed; got != 1 {
		t.Errorf("missed: got %d; want 1", got)
	}
}

// TestClockSteppedBack: a wall clock set back an hour must not run the
// hour's occurrences again.
func TestClockSteppedBack(t *testing.T) {
	c := newFakeClock(epoch)
	s := newScheduler(t, c)
	var r recorder
	if err := s.Add("minutely", task.Every(time.Minute), r.run); err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	step(t, c, s, 1, time.Minute, 2)
	c.Set(epoch.Add(-time.Hour + 2*time.Minute))
	settle(t, c, s, 1)
	step(t, c, s, 1, 10*time.Minute, 6)
	if got := len(r.times()); got != 2 {
		t.Errorf("after stepping back: got %d runs; want 2 (none until the clock is past 00:02 again)", got)
	}
	step(t, c, s, 1, time.Minute, 1)
	equalTimes(t, r.times(), []time.Time{epoch.Add(time.Minute), epoch.Add(2 * time.Minute), epoch.Add(3 * time.Minute)})
}

func TestJitterBounds(t *testing.T) {
	c := newFakeClock(epoch)
	s := newScheduler(t, c)
	var mu sync.Mutex
	var delays []time.Duration
	jitter := 10 * time.Second
	err := s.Add("spread", task.Every(time.Minute), func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		delays = append(delays, c.Now().Sub(task.ScheduledAt(ctx)))
		return nil
	}, task.WithJitter(jitter))
	if err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	step(t, c, s, 1, time.Second, 3000)
	mu.Lock()
	defer mu.Unlock()
	if len(delays) < 45 {
		t.Fatalf("got %d runs; want at least 45", len(delays))
	}
	distinct := map[time.Duration]bool{}
	for _, d := range delays {
		// The clock moves in whole seconds, so a draw in [9 s, 10 s) is seen at 10 s.
		if d < 0 || d > jitter {
			t.Errorf("delay %v outside [0, %v]", d, jitter)
		}
		distinct[d] = true
	}
	if len(distinct) < 3 {
		t.Errorf("delays %v: jitter does not spread the runs", delays)
	}
	if got := s.Jobs()[0].Missed; got != 0 {
		t.Errorf("jitter counted as missed: %d", got)
	}
}

func TestPanicAndErrorAreCountedAndRescheduled(t *testing.T) {
	c := newFakeClock(epoch)
	var logs bytes.Buffer
	w := &syncWriter{w: &logs}
	var hookMu sync.Mutex
	var before, after int
	var afterErrs []error
	s := newScheduler(t, c, task.WithLogger(slog.New(slog.NewTextHandler(w, nil))), task.WithHooks(task.Hooks{
		BeforeRun: func(string, time.Time) { hookMu.Lock(); before++; hookMu.Unlock() },
		AfterRun: func(_ string, _ time.Time, _ time.Duration, err error) {
			hookMu.Lock()
			after++
			afterErrs = append(afterErrs, err)
			hookMu.Unlock()
		},
	}))
	n := 0
	boom := errors.New("boom")
	err := s.Add("flaky", task.Every(time.Second), func(context.Context) error {
		n++
		switch n {
		case 1:
			panic("kaboom")
		case 2:
			return boom
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	step(t, c, s, 1, time.Second, 3)
	info := s.Jobs()[0]
	if info.Runs != 3 || info.Failures != 2 || info.Panics != 1 || info.LastError != nil {
		t.Errorf("got runs %d, failures %d, panics %d, last error %v; want 3, 2, 1, nil", info.Runs, info.Failures, info.Panics, info.LastError)
	}
	hookMu.Lock()
	defer hookMu.Unlock()
	if before != 3 || after != 3 || !errors.Is(afterErrs[0], task.ErrPanicked) || !errors.Is(afterErrs[1], boom) || afterErrs[2] != nil {
		t.Errorf("hooks: got %d before, %d after, errors %v", before, after, afterErrs)
	}
	if out := w.String(); !strings.Contains(out, "kaboom") || !strings.Contains(out, "scheduler_test.go") || !strings.Contains(out, "boom") {
		t.Errorf("log lacks the panic, its stack or the error:\n%s", out)
	}
}

func TestShutdownReportsAbandonedJobs(t *testing.T) {
	c := newFakeClock(epoch)
	exec := loom.Virtual()
	defer exec.Shutdown(context.Background())
	s, err := task.NewScheduler(task.WithClock(c), task.WithExecutor(exec))
	if err != nil {
		t.Fatal(err)
	}
	cause := make(chan error, 1)
	err = s.Add("stuck", task.Every(time.Second), func(ctx context.Context) error {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	var quick recorder
	if err := s.Add("quick", task.Every(time.Second), quick.run); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both loops", func() bool { return c.Pending() == 2 })
	c.Advance(time.Second)
	waitFor(t, "the stuck run", func() bool { return s.Jobs()[0].Running == 1 && s.Jobs()[1].Runs == 1 })

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.Shutdown(ctx)
	var abandoned *task.AbandonedError
	if !errors.As(err, &abandoned) || !errors.Is(err, loom.ErrAbandoned) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v; want an AbandonedError wrapping ErrAbandoned and context.Canceled; jobs %+v", err, s.Jobs())
	}
	if len(abandoned.Jobs) != 1 || abandoned.Jobs[0] != "stuck" {
		t.Errorf("abandoned: got %v; want [stuck]", abandoned.Jobs)
	}
	if got := <-cause; !errors.Is(got, loom.ErrAbandoned) {
		t.Errorf("the job's context cause: got %v; want ErrAbandoned", got)
	}
	if err := s.Add("late", task.Every(time.Second), quick.run); !errors.Is(err, loom.ErrClosed) {
		t.Errorf("Add after Shutdown: got %v; want ErrClosed", err)
	}
	waitFor(t, "the stuck run to end", func() bool { return s.Jobs()[0].Running == 0 })
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

func TestShutdownWaitsForRunningJobs(t *testing.T) {
	c := newFakeClock(epoch)
	s := newScheduler(t, c)
	release := make(chan struct{})
	finished := false
	err := s.Add("slow", task.Every(time.Second), func(ctx context.Context) error {
		<-release
		finished = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	c.Advance(time.Second)
	waitFor(t, "the run", func() bool { return s.Jobs()[0].Running == 1 })
	go func() { time.Sleep(10 * time.Millisecond); close(release) }()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !finished {
		t.Error("Shutdown returned before the running job")
	}
}

func TestAddRefusesBadInput(t *testing.T) {
	c := newFakeClock(epoch)
	s := newScheduler(t, c)
	nop := func(context.Context) error { return nil }
	if err := s.Add("taken", task.Every(time.Second), nop); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		job     string
		trigger task.Trigger
		fn      func(context.Context) error
		opts    []task.JobOption
		want    error  // errors.Is, if not nil
		wantMsg string // in the message
	}{
		{"bad cron field", "a", task.Cron("61 * * * *"), nop, nil, task.ErrCron, `minute "61"`},
		{"bad cron value", "a", task.Cron("* * * JANUAR *"), nop, nil, task.ErrCron, `month`},
		{"nil function", "a", task.Every(time.Second), nil, nil, task.ErrNilFunc, ""},
		{"zero interval", "a", task.Every(0), nop, nil, task.ErrInterval, "Every(0s)"},
		{"negative interval", "a", task.After(-time.Second), nop, nil, task.ErrInterval, "After(-1s)"},
		{"unknown zone", "a", task.Cron("@daily"), nop, []task.JobOption{task.WithTimeZone("Mars/Olympus")}, nil, `"Mars/Olympus"`},
		{"duplicate name", "taken", task.Every(time.Second), nop, nil, task.ErrDuplicateJob, `"taken"`},
		{"empty name", "", task.Every(time.Second), nop, nil, nil, "empty job name"},
		{"no trigger", "a", task.Trigger{}, nop, nil, nil, "no trigger"},
		{"negative jitter", "a", task.Every(time.Second), nop, []task.JobOption{task.WithJitter(-1)}, nil, "jitter"},
		{"negative initial delay", "a", task.Every(time.Second), nop, []task.JobOption{task.WithInitialDelay(-1)}, nil, "initial delay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Add(tt.job, tt.trigger, tt.fn, tt.opts...)
			if err == nil {
				t.Fatal("got nil error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("got %v; want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("got %q; want it to contain %q", err, tt.wantMsg)
			}
		})
	}
	// Nothing was scheduled half-way.
	if got := len(s.Jobs()); got != 1 {
		t.Errorf("jobs: got %d; want 1", got)
	}
	settle(t, c, s, 1)
}

func TestJobsListing(t *testing.T) {
	c := newFakeClock(epoch)
	s := newScheduler(t, c)
	if err := s.Add("b", task.Every(time.Minute), func(context.Context) error { return errors.New("no") }); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("a", task.Cron("@hourly"), func(context.Context) error { return nil }, task.WithLocation(time.UTC)); err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 2)
	step(t, c, s, 2, time.Minute, 1)
	jobs := s.Jobs()
	if len(jobs) != 2 || jobs[0].Name != "b" || jobs[1].Name != "a" {
		t.Fatalf("got %+v; want b then a", jobs)
	}
	b, a := jobs[0], jobs[1]
	if b.Trigger != "every 1m0s" || b.Runs != 1 || b.Failures != 1 || b.LastError == nil || !b.LastRun.Equal(epoch.Add(time.Minute)) || !b.Next.Equal(epoch.Add(2*time.Minute)) {
		t.Errorf("b: got %+v", b)
	}
	if a.Trigger != "cron @hourly" || a.Runs != 0 || !a.Next.Equal(epoch.Add(time.Hour)) || !a.LastRun.IsZero() {
		t.Errorf("a: got %+v", a)
	}
}

// TestClockSteppedForward: a wall clock stepped forward past a daily job's
// time, while the scheduler sleeps towards it, is noticed within a minute
// of elapsed time, not when the long sleep would have ended.
func TestClockSteppedForward(t *testing.T) {
	c := newFakeClock(epoch) // 00:00
	s := newScheduler(t, c)
	var r recorder
	if err := s.Add("nightly", task.Cron("0 2 * * *"), r.run, task.WithLocation(time.UTC)); err != nil {
		t.Fatal(err)
	}
	settle(t, c, s, 1)
	c.Step(3 * time.Hour) // now 03:00; no timer fires
	settle(t, c, s, 1)
	if got := len(r.times()); got != 0 {
		t.Fatalf("before any time passed: got %d runs", got)
	}
	c.Advance(time.Minute - time.Second) // one short of the longest sleep
	settle(t, c, s, 1)
	if got := len(r.times()); got != 0 {
		t.Fatalf("59 s after the step: got %d runs; want 0", got)
	}
	c.Advance(time.Second) // exactly the longest sleep
	settle(t, c, s, 1)
	// 02:00 is an hour late: a misfire, run once under RunOnce.
	equalTimes(t, r.times(), []time.Time{epoch.Add(2 * time.Hour)})
}

// TestShutdownWhileWaitingForRoom: a job loop blocked handing a run to a
// full executor does not hold Shutdown past its context.
func TestShutdownWhileWaitingForRoom(t *testing.T) {
	c := newFakeClock(epoch)
	exec, err := loom.Parse("pool:1,queue=1,full=wait")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer func() {
		close(release)
		exec.Shutdown(context.Background())
	}()
	exec.Go(context.Background(), func(context.Context) { <-release }) // the worker
	exec.Go(context.Background(), func(context.Context) { <-release }) // the queue
	s, err := task.NewScheduler(task.WithClock(c), task.WithExecutor(exec))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add("starved", task.Every(time.Second), func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the loop", func() bool { return c.Pending() == 1 })
	c.Advance(time.Second)
	waitFor(t, "the loop to wait for room", func() bool { return c.Pending() == 0 && s.Jobs()[0].Running == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.Shutdown(ctx)
	var abandoned *task.AbandonedError
	if !errors.As(err, &abandoned) || len(abandoned.Jobs) != 1 || abandoned.Jobs[0] != "starved" {
		t.Errorf("got %v; want starved abandoned", err)
	}
}

func TestDefaultExecutorFromEnv(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR_SCHEDULER", "pool:x")
	if _, err := task.NewScheduler(); err == nil || !strings.Contains(err.Error(), "LOOM_EXECUTOR_SCHEDULER") {
		t.Errorf("bad spec: got %v; want an error naming LOOM_EXECUTOR_SCHEDULER", err)
	}
	t.Setenv("LOOM_EXECUTOR_SCHEDULER", "limit:3")
	s, err := task.NewScheduler()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	done := make(chan struct{})
	err = s.Add("probe", task.At(time.Now()), func(context.Context) error {
		defer close(done)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-done
}

// TestSchedulerDaylightSaving drives the scheduler across New York's two
// change days on the fake clock, in 5-minute steps: the nightly job at 2:30
// runs once on the spring day (at 3:00, the jump), the one at 1:30 once on
// the autumn day, and the quarter-hour job 92 and 100 times.
func TestSchedulerDaylightSaving(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	days := []struct {
		name        string
		day         time.Time
		fixed       string
		wantFixed   time.Time
		wantQuarter int
	}{
		{"spring", time.Date(2026, 3, 8, 0, 0, 0, 0, ny), "30 2 * * *", time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), 92},
		{"autumn", time.Date(2026, 11, 1, 0, 0, 0, 0, ny), "30 1 * * *", time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), 100},
	}
	for _, d := range days {
		t.Run(d.name, func(t *testing.T) {
			c := newFakeClock(d.day.Add(-time.Second))
			s := newScheduler(t, c)
			var fixed, quarter recorder
			if err := s.Add("nightly", task.Cron(d.fixed), fixed.run, task.WithLocation(ny)); err != nil {
				t.Fatal(err)
			}
			if err := s.Add("quarter", task.Cron("*/15 * * * *"), quarter.run, task.WithTimeZone("America/New_York")); err != nil {
				t.Fatal(err)
			}
			settle(t, c, s, 2)
			c.Advance(time.Second) // midnight
			settle(t, c, s, 2)
			end := d.day.AddDate(0, 0, 1)
			for c.Now().Add(5 * time.Minute).Before(end) { // up to 23:55
				c.Advance(5 * time.Minute)
				settle(t, c, s, 2)
			}
			got := fixed.times()
			if len(got) != 1 || !got[0].Equal(d.wantFixed) {
				t.Errorf("nightly: got %v; want once, at %v", got, d.wantFixed)
			}
			q := quarter.times()
			if len(q) != d.wantQuarter {
				t.Errorf("quarter-hourly: got %d runs; want %d", len(q), d.wantQuarter)
			}
			for i := 1; i < len(q); i++ {
				if gap := q[i].Sub(q[i-1]); gap != 15*time.Minute {
					t.Errorf("quarter-hourly: %v after %v", gap, q[i-1])
				}
			}
			if got := s.Jobs()[1].Missed; got != 0 {
				t.Errorf("quarter-hourly: %d missed", got)
			}
		})
	}
}
