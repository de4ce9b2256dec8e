package taskpg_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
	"github.com/loomrt/loom/task/taskpg"
	"github.com/loomrt/loom/task/tasktest"
)

// The tests below take the database away from schedulers on fake clocks:
// the occurrences are the clocks', the claims and leases the real server's.
// Each clock moves only when nothing is in flight: the job loop waits for
// its next time, and every run under way waits for its next attempt.

const period = 10 * time.Second

// runs records the occurrences run, by scheduled time, and by whom.
// Each run lasts a few milliseconds, so that runs started together overlap
// unless the scheduler keeps them apart.
type runs struct {
	mu      sync.Mutex
	who     map[time.Time][]string
	active  int
	overlap int // runs that started while another ran
}

func (r *runs) job(instance string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		r.mu.Lock()
		if r.who == nil {
			r.who = map[time.Time][]string{}
		}
		at := task.ScheduledAt(ctx).UTC()
		r.who[at] = append(r.who[at], instance)
		if r.active > 0 {
			r.overlap++
		}
		r.active++
		r.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		r.mu.Lock()
		r.active--
		r.mu.Unlock()
		return nil
	}
}

// check fails t unless exactly the occurrences want ran, once each.
func (r *runs) check(t *testing.T, want ...time.Time) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, at := range want {
		if n := len(r.who[at.UTC()]); n != 1 {
			t.Errorf("%v ran %d times (%v); want once", at.UTC(), n, r.who[at.UTC()])
		}
	}
	for at, who := range r.who {
		if !containsTime(want, at) {
			t.Errorf("%v ran (%v); want not", at, who)
		}
	}
	if r.overlap > 0 {
		t.Errorf("%d runs started while another ran; want none (SkipIfRunning)", r.overlap)
	}
}

func containsTime(ts []time.Time, t time.Time) bool {
	for _, x := range ts {
		if x.Equal(t) {
			return true
		}
	}
	return false
}

// logBuffer collects a scheduler's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// instance is one service instance: a scheduler on its own clock, pool and
// locker, running job every period.
type instance struct {
	clock *tasktest.Clock
	s     *task.Scheduler
	log   *logBuffer
}

func newInstance(t *testing.T, pool *pgxpool.Pool, start time.Time, name string, lease time.Duration, job func(context.Context) error) *instance {
	t.Helper()
	in := &instance{clock: tasktest.NewClock(start), log: &logBuffer{}}
	locker := newLocker(t, pool, taskpg.Config{Owner: name, Lease: lease})
	exec := loom.Virtual()
	s, err := task.NewScheduler(task.WithClock(in.clock), task.WithExecutor(exec), task.WithLocker(locker),
		task.WithLogger(slog.New(slog.NewTextHandler(in.log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		exec.Shutdown(context.Background())
	})
	if err := s.Add("tick", task.Every(period), job); err != nil {
		t.Fatal(err)
	}
	in.s = s
	tasktest.WaitFor(t, "the job loop", func() bool { return in.clock.Pending() == 1 })
	return in
}

// waiting waits until every run under way waits for its next attempt at the
// locker (one timer each, beside the job loop's).
func (in *instance) waiting(t *testing.T) {
	t.Helper()
	tasktest.WaitFor(t, "the runs to wait for the locker", func() bool {
		return in.clock.Pending() == 1+in.s.Jobs()[0].Running
	})
}

// drain moves the clock on by steps shorter than any retry wait until no
// run is under way; it fails t if that takes until the job's next time.
func (in *instance) drain(t *testing.T) {
	t.Helper()
	next := in.s.Jobs()[0].Next
	tasktest.WaitFor(t, "the runs to end", func() bool {
		if in.s.Jobs()[0].Running == 0 && in.clock.Pending() == 1 {
			return true
		}
		if in.clock.Pending() == 1+in.s.Jobs()[0].Running {
			if !in.clock.Now().Add(500 * time.Millisecond).Before(next) {
				t.Fatalf("runs still waiting for the locker at %v", in.clock.Now())
			}
			in.clock.Advance(500 * time.Millisecond)
		}
		return false
	})
}

// TestRestartLosesNoOccurrence: two instances with a lease; the database
// restarts (a fast shutdown, as pg_ctlcluster restart does) as an
// occurrence comes due. Both claims fail, are retried, and the occurrence
// runs once, on one of them, once the server is back.
func TestRestartLosesNoOccurrence(t *testing.T) {
	c := newCluster(t)
	base := time.Now().Truncate(period)
	var r runs
	a := newInstance(t, c.pool(t), base, "a", 30*time.Second, r.job("a"))
	b := newInstance(t, c.pool(t), base, "b", 30*time.Second, r.job("b"))
	both := []*instance{a, b}
	step := func(at time.Time) {
		for _, in := range both {
			in.clock.Set(at)
			tasktest.Settle(t, in.clock, in.s, 1)
		}
	}
	step(base.Add(period))

	c.stop(t)
	for _, in := range both {
		in.clock.Set(base.Add(2 * period))
		in.waiting(t)
		if in.s.Jobs()[0].Running != 1 {
			t.Fatalf("jobs: %+v; want the occurrence waiting for the locker", in.s.Jobs()[0])
		}
	}
	c.start(t)
	for _, in := range both {
		in.drain(t)
	}

	step(base.Add(3 * period))
	r.check(t, base.Add(period), base.Add(2*period), base.Add(3*period))
	for _, in := range both {
		info := in.s.Jobs()[0]
		if info.Failures != 0 || info.Missed != 0 {
			t.Errorf("jobs: %+v; want no failure, none missed", info)
		}
	}
}

// TestOutageLongerThanGrace: the database is down while ten occurrences
// come due, 10 s apart. Those whose claim is still unanswered MisfireGrace
// after their first attempt are counted as missed and logged once each;
// the others run once the server is back, and the job goes on by itself.
func TestOutageLongerThanGrace(t *testing.T) {
	c := newCluster(t)
	base := time.Now().Truncate(period)
	var r runs
	in := newInstance(t, c.pool(t), base, "a", 30*time.Second, r.job("a"))

	c.stop(t)
	for i := 1; i <= 10; i++ {
		in.clock.Set(base.Add(time.Duration(i) * period))
		in.waiting(t)
	}
	// At +103 s the occurrences at +10 s to +40 s have been tried until
	// MisfireGrace after they came due; +50 s to +100 s still wait.
	in.clock.Set(base.Add(103 * time.Second))
	in.waiting(t)
	if got := in.s.Jobs()[0]; got.Missed != 4 || got.Running != 6 {
		t.Fatalf("during the outage: %d missed, %d waiting; want 4, 6", got.Missed, got.Running)
	}
	c.start(t)
	in.drain(t)
	in.clock.Set(base.Add(11 * period))
	tasktest.Settle(t, in.clock, in.s, 1)

	var want []time.Time
	for i := 5; i <= 11; i++ {
		want = append(want, base.Add(time.Duration(i)*period))
	}
	r.check(t, want...)
	info := in.s.Jobs()[0]
	if info.Missed != 4 || info.Runs != 7 || info.Failures != 0 {
		t.Errorf("jobs: %d missed, %d runs, %d failures; want 4, 7, 0", info.Missed, info.Runs, info.Failures)
	}
	if n, other := in.log.count("occurrence missed"), in.log.count("level=ERROR"); n != 4 || other != 4 {
		t.Errorf("%d missed occurrences logged, %d errors in all; want 4 and 4 (one line each):\n%s", n, other, in.log.buf.String())
	}
}

// TestShutdownDuringOutage: Shutdown ends the runs that wait for the
// locker at once, without counting their occurrences as missed.
func TestShutdownDuringOutage(t *testing.T) {
	c := newCluster(t)
	base := time.Now().Truncate(period)
	var r runs
	in := newInstance(t, c.pool(t), base, "a", 30*time.Second, r.job("a"))
	c.stop(t)
	in.clock.Set(base.Add(period))
	in.waiting(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := in.s.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v; want nil (nothing running)", err)
	}
	if info := in.s.Jobs()[0]; info.Missed != 0 || info.Failures != 0 || info.Running != 0 {
		t.Errorf("after shutdown: %+v; want nothing missed, failed or running", info)
	}
	r.check(t)
}

// TestTakeOverRetried: a dead instance left an occurrence unfinished; the
// database goes down while the survivor's run is under way, so the
// take-over that follows the run finds it unavailable. The take-over is
// retried and runs the dead instance's occurrence once the server is back,
// without waiting for the next trigger.
func TestTakeOverRetried(t *testing.T) {
	c := newCluster(t)
	pool := c.pool(t)
	base := time.Now().Truncate(period)
	var r runs
	release := make(chan struct{})
	blocked := make(chan struct{})
	record := r.job("survivor")
	in := newInstance(t, pool, base, "survivor", time.Second, func(ctx context.Context) error {
		if task.ScheduledAt(ctx).Equal(base.Add(period)) {
			close(blocked)
			<-release
		}
		return record(ctx)
	})
	// The dead instance's claim: unfinished, its lease run out.
	if _, err := pool.Exec(context.Background(), `INSERT INTO loom_task_claims (job, scheduled_at, owner, lease_until)
		VALUES ('tick', $1, 'dead', now() - interval '1 second')`, base); err != nil {
		t.Fatal(err)
	}
	in.clock.Set(base.Add(period))
	<-blocked
	c.stop(t)
	close(release)
	in.waiting(t) // the run ended; its Done gave up after the lease; the take-over waits
	c.start(t)
	in.drain(t)
	r.check(t, base, base.Add(period))
	if n := in.log.count("take over"); n != 0 {
		t.Errorf("take-over failures logged: %d; want none", n)
	}
}

// TestLeaseKeptAcrossRestart: a claim held while the database restarts
// keeps its lease (the renewals resume once the server is back), so no
// other instance takes it over; a Done called while the server is down
// finishes the occurrence once it is back.
func TestLeaseKeptAcrossRestart(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	pool := c.pool(t)
	const lease = 9 * time.Second // renewed every 3 s; a restart takes about 1 s
	a := newLocker(t, pool, taskpg.Config{Owner: "a", Lease: lease})
	b := newLocker(t, c.pool(t), taskpg.Config{Owner: "b", Lease: lease})
	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	held, err := a.Claim(ctx, "long", at0)
	if err != nil {
		t.Fatal(err)
	}
	ending, err := a.Claim(ctx, "short", at0)
	if err != nil {
		t.Fatal(err)
	}
	var first time.Time
	if err := pool.QueryRow(ctx, "SELECT lease_until FROM loom_task_claims WHERE job = 'long'").Scan(&first); err != nil {
		t.Fatal(err)
	}

	c.stop(t)
	done := make(chan error, 1)
	go func() { done <- ending.Done(ctx, nil) }()
	time.Sleep(lease/3 + 500*time.Millisecond) // a renewal falls in the outage
	c.start(t)
	if err := <-done; err != nil {
		t.Errorf("Done while the server restarted: %v", err)
	}
	tasktest.WaitFor(t, "the lease to be renewed", func() bool {
		var until time.Time
		err := pool.QueryRow(ctx, "SELECT lease_until FROM loom_task_claims WHERE job = 'long'").Scan(&until)
		return err == nil && until.After(first)
	})
	for _, job := range []string{"long", "short"} {
		if _, _, ok, err := b.TakeOver(ctx, job); ok || err != nil {
			t.Errorf("take over %s: got %v, %v; want nothing", job, ok, err)
		}
	}
	if err := held.Done(ctx, nil); err != nil {
		t.Errorf("Done after the restart: %v", err)
	}
	var unfinished int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM loom_task_claims WHERE finished_at IS NULL").Scan(&unfinished); err != nil {
		t.Fatal(err)
	}
	if unfinished != 0 {
		t.Errorf("%d claims unfinished; want 0", unfinished)
	}
}

// TestErrorsUnavailable: a claim and a take-over with the server down wrap
// task.ErrUnavailable; a statement the server refuses, or a cancelled
// context, does not.
func TestErrorsUnavailable(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	pool := c.pool(t)
	l := newLocker(t, pool, taskpg.Config{Owner: "a", Lease: time.Minute})

	c.stop(t)
	_, claimErr := l.Claim(ctx, "tick", at0)
	_, _, _, takeOverErr := l.TakeOver(ctx, "tick")
	for name, err := range map[string]error{"claim": claimErr, "take over": takeOverErr} {
		if !errors.Is(err, task.ErrUnavailable) {
			t.Errorf("%s with the server down: got %v; want ErrUnavailable", name, err)
		}
	}
	c.start(t)

	if _, err := pool.Exec(ctx, "DROP TABLE loom_task_claims"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Claim(ctx, "tick", at0); err == nil || errors.Is(err, task.ErrUnavailable) {
		t.Errorf("claim on a dropped table: got %v; want an error, not ErrUnavailable", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Claim(cancelled, "tick", at0); err == nil || errors.Is(err, task.ErrUnavailable) {
		t.Errorf("claim with a cancelled context: got %v; want an error, not ErrUnavailable", err)
	}
}
