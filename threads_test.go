package loom

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loomrt/loom/internal/osthreads"
)

// TestThreadsLockEachWorkerToItsThread engages all workers at once, then runs
// many more tasks: the tasks must see exactly n thread ids, and a task must
// not change thread across a sleep, which an unlocked goroutine may.
func TestThreadsLockEachWorkerToItsThread(t *testing.T) {
	const workers = 3
	e := Threads(workers, WithQueue(1000))
	defer shutdown(t, e)

	var mu sync.Mutex
	tids := make(map[int]int) // tid -> tasks seen on it
	moved := 0
	task := func(context.Context) {
		before := unix.Gettid()
		time.Sleep(50 * time.Microsecond)
		after := unix.Gettid()
		mu.Lock()
		defer mu.Unlock()
		tids[before]++
		if after != before {
			moved++
		}
	}

	// All workers busy at once: each must be on its own thread.
	var ready, release sync.WaitGroup
	ready.Add(workers)
	release.Add(1)
	for range workers {
		if err := e.Go(context.Background(), func(ctx context.Context) {
			task(ctx)
			ready.Done()
			release.Wait()
		}); err != nil {
			t.Fatal(err)
		}
	}
	ready.Wait()
	mu.Lock()
	if len(tids) != workers {
		t.Errorf("%d busy workers ran on %d threads; want %d", workers, len(tids), workers)
	}
	mu.Unlock()
	release.Done()

	for range 300 {
		if err := e.Go(context.Background(), task); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Run(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	shutdown(t, e)
	if len(tids) != workers {
		t.Errorf("tasks ran on %d threads (%v); want %d, one per worker", len(tids), tids, workers)
	}
	if moved != 0 {
		t.Errorf("%d tasks changed thread while running; want 0", moved)
	}
}

// TestThreadPerTaskUsesFreshThreads runs tasks one after another: each must
// see a thread id no earlier task saw, because each thread is retired.
func TestThreadPerTaskUsesFreshThreads(t *testing.T) {
	e := ThreadPerTask()
	defer shutdown(t, e)
	seen := make(map[int]int)
	for i := range 20 {
		var tid int
		submit := e.Run
		if i%2 == 1 {
			submit = func(ctx context.Context, task Task) error {
				done := make(chan struct{})
				err := e.Go(ctx, func(ctx context.Context) { task(ctx); close(done) })
				<-done
				return err
			}
		}
		if err := submit(context.Background(), func(context.Context) { tid = unix.Gettid() }); err != nil {
			t.Fatal(err)
		}
		if previous, ok := seen[tid]; ok {
			t.Errorf("task %d ran on thread %d, which task %d used; want a new thread per task", i, tid, previous)
		}
		seen[tid] = i
	}
}

// TestGoroutinesCarryPprofLabels blocks a task on every executor and looks
// for the executor's labels in a goroutine profile.
func TestGoroutinesCarryPprofLabels(t *testing.T) {
	for _, tc := range everyExecutor {
		t.Run(tc.kind, func(t *testing.T) {
			name := "labelled-" + tc.kind
			e := tc.make(WithName(name))
			defer shutdown(t, e)
			started, release := make(chan struct{}), make(chan struct{})
			if err := e.Go(context.Background(), func(context.Context) {
				close(started)
				<-release
			}); err != nil {
				t.Fatal(err)
			}
			<-started
			var profile bytes.Buffer
			if err := pprof.Lookup("goroutine").WriteTo(&profile, 1); err != nil {
				t.Fatal(err)
			}
			close(release)
			want := fmt.Sprintf(`# labels: {"executor":%q, "kind":%q}`, name, tc.kind)
			if !bytes.Contains(profile.Bytes(), []byte(want)) {
				t.Errorf("goroutine profile has no %s", want)
			}
		})
	}
}

// TestLockedThreadsCounted checks that the thread watch's estimate of
// threads in use (osthreads.Locked) counts every Threads worker, busy or idle,
// and every running ThreadPerTask task: each holds an OS thread even while
// parked, where no runtime metric sees it.
func TestLockedThreadsCounted(t *testing.T) {
	before := int64(osthreads.Locked())
	const workers, tasks = 4, 3
	busy := func(e Executor, n int) (release func()) {
		t.Helper()
		var ready, done sync.WaitGroup
		ready.Add(n)
		done.Add(1)
		for range n {
			if err := e.Go(context.Background(), func(context.Context) { ready.Done(); done.Wait() }); err != nil {
				t.Fatal(err)
			}
		}
		ready.Wait()
		return done.Done
	}

	pool := Threads(workers)
	release := busy(pool, workers) // every worker has started, and locked its thread
	if got, want := int64(osthreads.Locked())-before, int64(workers); got != want {
		t.Errorf("with %d busy Threads workers: %d locked threads counted; want %d", workers, got, want)
	}
	release()
	if err := pool.Run(context.Background(), func(context.Context) {}); err != nil {
		t.Fatal(err)
	}
	if got, want := int64(osthreads.Locked())-before, int64(workers); got != want {
		t.Errorf("with %d idle Threads workers: %d locked threads counted; want %d", workers, got, want)
	}
	shutdown(t, pool)
	if got := int64(osthreads.Locked()) - before; got != 0 {
		t.Errorf("after Shutdown of Threads(%d): %d locked threads counted; want 0", workers, got)
	}

	perTask := ThreadPerTask()
	release = busy(perTask, tasks)
	if got, want := int64(osthreads.Locked())-before, int64(tasks); got != want {
		t.Errorf("with %d ThreadPerTask tasks running: %d locked threads counted; want %d", tasks, got, want)
	}
	release()
	shutdown(t, perTask)
	if got := int64(osthreads.Locked()) - before; got != 0 {
		t.Errorf("after Shutdown of ThreadPerTask: %d locked threads counted; want 0", got)
	}
}
