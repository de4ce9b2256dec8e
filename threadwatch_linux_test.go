package loom

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
)

// childEnv names the child-process test a re-executed test binary runs.
const childEnv = "LOOM_TEST_CHILD"

// runChild runs the test named test in a child process with childEnv set to
// role, and returns its output. The thread limit these tests lower applies to
// the whole process, so they cannot run in the parent.
func runChild(t *testing.T, test, role string, env ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(append(os.Environ(), childEnv+"="+role), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// sleepThread holds the calling OS thread in nanosleep(2) for d, as a cgo
// call or a blocking driver would: the runtime must start another thread
// for the other goroutines.
func sleepThread(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

// diedOfThreads reports whether a Go program's stderr says it died for want
// of OS threads: past its own limit ("thread exhaustion"), or refused a new
// thread by the system first ("newosproc", when a machine busy with other
// processes reaches its own limit on threads before the program's).
func diedOfThreads(stderr string) bool {
	return strings.Contains(stderr, "fatal error: thread exhaustion") ||
		strings.Contains(stderr, "fatal error: newosproc")
}

func TestThreadWatchTripsAndRecovers(t *testing.T) {
	if os.Getenv(childEnv) == "watch" {
		if err := watchChild(); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(2)
		}
		fmt.Println("PASS: watch")
		return
	}
	if testing.Short() {
		t.Skip("starts a child process with hundreds of blocked threads")
	}
	out, errOut, err := runChild(t, t.Name(), "watch")
	if err != nil || !strings.Contains(out, "PASS: watch") {
		t.Fatalf("child: %v\nstdout: %s\nstderr: %s", err, out, lastLines(errOut, 5))
	}
}

// watchChild lowers the thread limit to 400, starts a watch with its
// high-water mark at half (200 threads in use) and blocks threads one by one
// until it trips; then releases them and waits for it to recover.
func watchChild() error {
	debug.SetMaxThreads(400)
	var logs syncBuffer
	w := &ThreadWatch{High: 0.5, Every: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Close()
	if refusedAs("early") {
		return fmt.Errorf("refusing before any thread blocked: %+v", w.Stats())
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	defer func() { stop.Store(true); wg.Wait() }()
	for i := 0; !w.Stats().Tripped; i++ {
		if i == 350 {
			return fmt.Errorf("not tripped with %d goroutines blocked: %+v", i, w.Stats())
		}
		wg.Go(func() {
			for !stop.Load() {
				sleepThread(20 * time.Millisecond)
			}
		})
		time.Sleep(2 * time.Millisecond) // let the thread start and the watch see it
	}
	s := w.Stats()
	// Read after the trip: the count may have fallen since, but not below
	// the low-water mark, or the watch would no longer be tripped.
	if s.High != 200 || s.Low != 150 || s.Limit != 400 || s.PeakThreads < s.High {
		return fmt.Errorf("tripped with high %d, low %d, limit %d, peak %d threads; want 200, 150, 400, at least 200", s.High, s.Low, s.Limit, s.PeakThreads)
	}
	if !refusedAs("child") {
		return fmt.Errorf("tripped but not refusing: %+v", s)
	}
	e := Virtual()
	defer e.Shutdown(context.Background())
	if got := e.Stats().Threads; !got.Running || !got.Tripped || got.High != 200 || got.Episodes != 1 || got.PeakThreads < 200 {
		return fmt.Errorf("an executor's Stats().Threads while tripped: %+v; want running, tripped, high 200, one episode, peak at least 200", got)
	}
	stop.Store(true)
	wg.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for w.Stats().Tripped {
		if time.Now().After(deadline) {
			return fmt.Errorf("still tripped 20 s after every blocked goroutine returned: %+v", w.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	if refusedAs("late") {
		return fmt.Errorf("refusing after recovering: %+v", w.Stats())
	}
	if got := w.Stats().Episodes; got != 1 {
		return fmt.Errorf("%d episodes; want 1", got)
	}
	if got := e.Stats().Threads; got.Tripped || got.InUse >= got.Low || got.Episodes != 1 {
		return fmt.Errorf("an executor's Stats().Threads after recovering: %+v; want not tripped, in use below low, one episode", got)
	}
	log := logs.String()
	if strings.Count(log, "level=WARN") != 2 || !strings.Contains(log, `refused="child=1"`) {
		return fmt.Errorf("log %q; want two lines, the second with refused=child=1", log)
	}
	fmt.Printf("tripped at %d in use (%d threads, peak %d)\n", s.InUse, s.Threads, s.PeakThreads)
	return nil
}

// TestThreadWatchBoundsABurst sends a burst of blocking tasks at a process
// whose thread limit is lowered, all within one reading interval of its
// watch: each admitted task holds its thread in a raw system call for a
// second, so a guard that only samples the thread count admits every one of
// them and the process dies of thread exhaustion. The thread budget admits
// no more than the headroom at the last reading, and the child lives. The
// burst comes as a thousand callers of Run, as an HTTP server's connections
// run their handlers, and as a thousand calls of Go from one goroutine, whose
// tasks are runnable, not yet blocked, when the budget is read again; each at
// GOMAXPROCS 1, 2 and 8.
func TestThreadWatchBoundsABurst(t *testing.T) {
	if role := os.Getenv(childEnv); role == "burst-run" || role == "burst-go" {
		if err := burstChild(role == "burst-go"); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(2)
		}
		return
	}
	if testing.Short() {
		t.Skip("starts child processes with a burst of blocked threads")
	}
	for _, role := range []string{"burst-run", "burst-go"} {
		for _, procs := range []int{1, 2, 8} {
			t.Run(fmt.Sprintf("%s/GOMAXPROCS=%d", role, procs), func(t *testing.T) {
				out, errOut, err := runChild(t, "TestThreadWatchBoundsABurst", role, "GOMAXPROCS="+strconv.Itoa(procs))
				if diedOfThreads(errOut) {
					t.Fatalf("child died of thread exhaustion: the burst crossed the thread limit\nstderr: %s", lastLines(errOut, 5))
				}
				if err != nil || !strings.Contains(out, "admitted=") {
					t.Fatalf("child: %v\nstdout: %s\nstderr: %s", err, out, lastLines(errOut, 5))
				}
				t.Log(lineWith(out, "admitted="))
			})
		}
	}
}

// burstChild lowers the thread limit to 200 and starts a watch that reads
// the count once, at Start, and then not for an hour: the whole burst
// arrives within one interval. A thousand tasks that each hold their thread
// for a second are submitted at once to a Virtual executor: by a thousand
// callers of Run released together, or by one goroutine calling Go. Some
// must be admitted and some refused.
func burstChild(viaGo bool) error {
	const limit, tasks = 200, 1000
	debug.SetMaxThreads(limit)
	w := &ThreadWatch{Every: time.Hour, Logger: slog.New(slog.DiscardHandler)}
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Close()
	e := Virtual()
	defer e.Shutdown(context.Background())
	var admitted, refused atomic.Int64
	count := func(err error) {
		switch {
		case err == nil:
			admitted.Add(1)
		case errors.Is(err, ErrRejected):
			refused.Add(1)
		default:
			fmt.Println("submit:", err)
		}
	}
	block := func(context.Context) { sleepThread(time.Second) }
	if viaGo {
		for range tasks {
			count(e.Go(context.Background(), block))
		}
	} else {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range tasks {
			wg.Go(func() {
				<-start
				count(e.Run(context.Background(), block))
			})
		}
		close(start)
		wg.Wait()
	}
	if err := e.Shutdown(context.Background()); err != nil {
		return err
	}
	threads := osthreads.NewSampler().Read().Total
	fmt.Printf("admitted=%d refused=%d threads=%d limit=%d\n", admitted.Load(), refused.Load(), threads, limit)
	if admitted.Load() == 0 || refused.Load() == 0 {
		return fmt.Errorf("%d admitted, %d refused; want some of each", admitted.Load(), refused.Load())
	}
	if s := e.Stats(); s.RejectedByWatch != uint64(refused.Load()) {
		return fmt.Errorf("Stats().RejectedByWatch = %d; want the %d refused", s.RejectedByWatch, refused.Load())
	}
	return nil
}

// refusedAs reports whether the thread watch refuses a task now, as an
// executor called name would be refused, and counts the refusal as such.
func refusedAs(name string) bool {
	if threadBudget.Take() || threadBudget.Refill() && threadBudget.Take() {
		return false
	}
	threadRefusals.count(name)
	return true
}

// syncBuffer is a bytes.Buffer safe for concurrent use, for a logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lineWith returns the first line of s that contains sub.
func lineWith(s, sub string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
