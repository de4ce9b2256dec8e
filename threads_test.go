package loom

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
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

// TestThreadLimitErrorSaysHowManyFit checks the number the thread-limit
// error offers: at most the limit less the headroom and the threads already
// running (at least one), and not negative. (pool.go, checkThreads: the "at most
// %d workers fit" figure.)
func TestThreadLimitErrorSaysHowManyFit(t *testing.T) {
	limit, headroom := osthreads.MaxThreads(), osthreads.Headroom()
	err := checkThreads(limit)
	if !errors.Is(err, ErrThreadLimit) {
		t.Fatalf("checkThreads(%d): got %v; want ErrThreadLimit", limit, err)
	}
	var most int
	if _, scanErr := fmt.Sscanf(err.Error()[strings.LastIndex(err.Error(), "at most "):], "at most %d workers fit", &most); scanErr != nil {
		t.Fatalf("error %q: no \"at most N workers fit\": %v", err, scanErr)
	}
	if most < 0 || most >= limit-headroom {
		t.Errorf("error %q: %d workers fit; want 0 ≤ n < %d (limit %d less headroom %d and the running threads)", err, most, limit-headroom, limit, headroom)
	}
}

// TestThreadPerTaskReleasesItsThreadCount checks that a thread-per-task
// task's locked thread is uncounted when it ends: lockedThreads is back where
// it was after the executor shuts down. (threadpertask.go, finish.)
func TestThreadPerTaskReleasesItsThreadCount(t *testing.T) {
	before := int64(osthreads.Locked())
	e := ThreadPerTask()
	for range 10 {
		if err := e.Run(context.Background(), func(context.Context) {}); err != nil {
			t.Fatal(err)
		}
	}
	shutdown(t, e)
	if got := int64(osthreads.Locked()); got != before {
		t.Errorf("lockedThreads after 10 tasks: got %d; want %d, as before", got, before)
	}
}

// threads:N with N at the process's thread limit (10,000 by default) used
// to log "serving" and then die with "fatal error: thread exhaustion". It
// is refused before a thread starts, with the limit and the headroom named.
func TestThreadsPastTheThreadLimitRefused(t *testing.T) {
	limit := osthreads.MaxThreads()
	spec := fmt.Sprintf("threads:%d", limit)
	e, err := Parse(spec)
	if err == nil {
		shutdown(t, e)
		t.Fatalf("Parse(%q) = nil error; want one naming the thread limit", spec)
	}
	for _, want := range []string{
		fmt.Sprintf("build executor spec %q: ", spec),
		fmt.Sprintf("the process's thread limit of %d (debug.SetMaxThreads)", limit),
		fmt.Sprintf("the runtime's headroom of %d (GOMAXPROCS+%d)", runtime.GOMAXPROCS(0)+osthreads.HeadroomFixed, osthreads.HeadroomFixed),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %q; want it to contain %q", spec, err, want)
		}
	}
	if !errors.Is(err, ErrThreadLimit) || !errors.Is(err, ErrBadSpec) {
		t.Errorf("Parse(%q) error %v; want ErrThreadLimit and ErrBadSpec", spec, err)
	}

	defer func() {
		v := recover()
		msg, _ := v.(string)
		if want := fmt.Sprintf("loom: Threads(%d): not enough OS threads: ", limit); !strings.HasPrefix(msg, want) {
			t.Errorf("Threads(%d) panicked with %v; want a message starting %q", limit, v, want)
		}
	}()
	Threads(limit)
}

// The most workers the check lets through really fit: a child process with
// its thread limit lowered to 100 builds threads at that most, keeps every
// worker busy while it serves HTTP on loopback and collects garbage, and
// exits normally; one more worker is refused. It runs at GOMAXPROCS 1, 2
// and 8, as the headroom grows with it.
func TestThreadsAtTheMostFit(t *testing.T) {
	if os.Getenv("LOOM_TEST_THREADS_CHILD") != "" {
		threadsAtTheMostChild()
		return
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, procs := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestThreadsAtTheMostFit$", "-test.count=1")
			cmd.Env = append(os.Environ(), "LOOM_TEST_THREADS_CHILD=1", "GOMAXPROCS="+strconv.Itoa(procs))
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "fit: ") {
				t.Fatalf("child: %v\n%.2000s", err, out)
			}
			line := string(out[strings.Index(string(out), "fit: "):])
			line, _, _ = strings.Cut(line, "\n")
			t.Log(line)
		})
	}
}

// threadsAtTheMostChild is TestThreadsAtTheMostFit's child process. A crash
// (thread exhaustion) fails the parent.
func threadsAtTheMostChild() {
	const limit = 100
	debug.SetMaxThreads(limit)
	most := limit - osthreads.Live() - osthreads.Headroom()
	if err := checkThreads(most + 1); !errors.Is(err, ErrThreadLimit) {
		fmt.Printf("threads:%d (one past the most) = %v; want ErrThreadLimit\n", most+1, err)
		os.Exit(1)
	}
	e, err := (Spec{Kind: KindThreads, Workers: most, Queue: most}).New()
	if err != nil {
		fmt.Printf("threads:%d (the most) = %v; want it built\n", most, err)
		os.Exit(1)
	}
	var busy sync.WaitGroup
	release := make(chan struct{})
	for range most {
		busy.Add(1)
		if err := e.Go(context.Background(), func(context.Context) { busy.Done(); <-release }); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	}
	busy.Wait()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
	go srv.Serve(ln)
	var clients sync.WaitGroup
	for range 32 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			for range 10 {
				resp, err := http.Get("http://" + ln.Addr().String())
				if err != nil {
					fmt.Println(err)
					os.Exit(1)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				runtime.GC()
			}
		}()
	}
	clients.Wait()
	srv.Close()
	close(release)
	if err := e.Shutdown(context.Background()); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Printf("fit: %d workers under a limit of %d at GOMAXPROCS %d\n", most, limit, runtime.GOMAXPROCS(0))
	os.Exit(0)
}
