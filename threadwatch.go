package loom

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
	"github.com/loomrt/loom/internal/threadbudget"
)

// A ThreadWatch keeps the process below its OS thread limit
// (debug.SetMaxThreads), past which it dies of "thread exhaustion". While it
// runs, the executors built without WithoutThreadWatch admit, between two
// readings of the thread counts, at most the high-water mark less the threads
// in use, twice the runnable goroutines and GOMAXPROCS at the last reading
// (the allowance of package threadbudget), and refuse the rest
// with ErrRejected (web: 503); each task holds at most one thread, so a burst
// cannot pass the mark (docs/overload.md: tasks that park before they block).
// From a reading at the mark until one below the low-water mark they refuse
// every task; the watch logs that episode. Set the fields, then Start (one
// goroutine, stopped by Close); the zero value is ready; safe for concurrent use.
type ThreadWatch struct {
	// High is the high-water mark, a fraction of the thread limit in (0, 1];
	// 0 means 0.8.
	High float64
	// Low is the low-water mark, a fraction of the thread limit in
	// (0, High); 0 means three quarters of High.
	Low float64
	// Every is how often the count is read once it is past half the
	// high-water mark; below that, ten times less often. 0 means 1 ms. An
	// executor that has admitted the whole allowance reads the count itself
	// (at most every 100 µs), so a fast workload is not held to the
	// interval.
	Every time.Duration
	// Logger receives the episode reports; nil means slog.Default().
	Logger *slog.Logger

	mu      sync.Mutex // guards stop and done
	stop    chan struct{}
	done    chan struct{}
	tripped atomic.Bool
	threads atomic.Int64 // at the last reading
	inUse   atomic.Int64 // at the last reading
	peak    atomic.Int64
	limit   atomic.Int64 // the thread limit at the last reading
	trips   atomic.Uint64
}

// ErrWatchRunning is returned by Start on a ThreadWatch already started.
var ErrWatchRunning = errors.New("loom: thread watch already running")

// ThreadWatchStats is a snapshot of a ThreadWatch (ThreadWatch.Stats), or of
// every watch in the process (WatchedThreads, Stats.Threads).
type ThreadWatchStats struct {
	Running     bool   // a watch is reading the count; if not, these are its last reading
	Tripped     bool   // executors refuse every new task now, until below Low
	Threads     int    // OS threads the runtime owns, at the last reading
	InUse       int    // of which in use, estimated: the count the marks apply to
	PeakThreads int    // the most threads seen
	Limit       int    // the runtime's thread limit at the last reading
	High, Low   int    // the marks, in threads
	Episodes    uint64 // times it tripped
}

// WatchedThreads returns the figures of the process's thread watches, which
// every executor's Stats carries as Threads: the last reading of whichever
// watch read last, Running while any watch runs, Tripped while any is
// tripped (then executors refuse new tasks, unless built with
// WithoutThreadWatch), and PeakThreads and Episodes over every watch the
// process has run. All are zero until a watch has started. It loads a few
// atomic values and reads no runtime metric, so Stats stays cheap; it is
// safe for concurrent use.
func WatchedThreads() ThreadWatchStats {
	return ThreadWatchStats{
		Running:     watched.running.Load() > 0,
		Tripped:     threadRefusals.tripped.Load() > 0,
		Threads:     int(watched.threads.Load()),
		InUse:       int(watched.inUse.Load()),
		PeakThreads: int(watched.peak.Load()),
		Limit:       int(watched.limit.Load()),
		High:        int(watched.high.Load()),
		Low:         int(watched.low.Load()),
		Episodes:    watched.episodes.Load(),
	}
}

// watched holds what WatchedThreads reports. Each field is written by the
// watch that read last; a snapshot may mix two watches' readings.
var watched struct {
	running                          atomic.Int32 // watches started and not closed
	threads, inUse, limit, high, low atomic.Int64
	peak                             atomic.Int64 // raised by every watch
	episodes                         atomic.Uint64
}

// Start reads the thread count once, then starts the goroutine that keeps
// reading it. It returns an error, and starts nothing, if a mark is out of
// range or the watch is running already.
func (w *ThreadWatch) Start() error {
	high, low := w.marks()
	if high <= 0 || high > 1 {
		return fmt.Errorf("loom: thread watch: high-water mark %v is not in (0, 1]", high)
	}
	if low <= 0 || low >= high {
		return fmt.Errorf("loom: thread watch: low-water mark %v is not in (0, %v)", low, high)
	}
	if w.Every < 0 {
		return fmt.Errorf("loom: thread watch: interval %v is negative", w.Every)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil {
		return ErrWatchRunning
	}
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	watched.running.Add(1)
	samples := osthreads.NewSampler()
	next := w.check(samples)
	go w.loop(samples, next, w.stop, w.done)
	return nil
}

// Close stops the watch and waits for its goroutine to end; executors stop
// refusing on its account. It returns nil, also when the watch is not
// running, and may be called more than once.
func (w *ThreadWatch) Close() error {
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.stop, w.done = nil, nil
	w.mu.Unlock()
	if stop == nil {
		return nil
	}
	close(stop)
	<-done
	if w.tripped.Swap(false) {
		w.untrip("the watch was closed")
	}
	if watched.running.Add(-1) == 0 {
		threadBudget.Unbound()
	}
	return nil
}

// Stats returns a snapshot of the watch.
func (w *ThreadWatch) Stats() ThreadWatchStats {
	high, low := w.marks()
	limit := int(w.limit.Load())
	w.mu.Lock()
	running := w.stop != nil
	w.mu.Unlock()
	return ThreadWatchStats{
		Running:     running,
		Threads:     int(w.threads.Load()),
		InUse:       int(w.inUse.Load()),
		PeakThreads: int(w.peak.Load()),
		Limit:       limit,
		High:        int(high * float64(limit)),
		Low:         int(low * float64(limit)),
		Tripped:     w.tripped.Load(),
		Episodes:    w.trips.Load(),
	}
}

func (w *ThreadWatch) marks() (high, low float64) {
	high, low = w.High, w.Low
	if high == 0 {
		high = 0.8
	}
	if low == 0 {
		low = high * 3 / 4
	}
	return high, low
}

func (w *ThreadWatch) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.Default()
}

func (w *ThreadWatch) loop(samples *osthreads.Sampler, next time.Duration, stop, done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(next)
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-timer.C:
		}
		timer.Reset(w.check(samples))
	}
}

// check reads the count, trips or recovers, and returns when to read next.
func (w *ThreadWatch) check(samples *osthreads.Sampler) time.Duration {
	limit := osthreads.MaxThreads()
	highFraction, lowFraction := w.marks()
	high := int(highFraction * float64(limit))
	low := int(lowFraction * float64(limit))
	// The budget takes the reading itself, so that it can charge the tasks
	// admitted while the counts were read.
	counts := threadBudget.Set(high, samples.Read)
	total, count := counts.Total, counts.InUse
	w.limit.Store(int64(limit))
	w.threads.Store(int64(total))
	w.inUse.Store(int64(count))
	if int64(total) > w.peak.Load() {
		w.peak.Store(int64(total))
	}
	watched.limit.Store(int64(limit))
	watched.threads.Store(int64(total))
	watched.inUse.Store(int64(count))
	watched.high.Store(int64(high))
	watched.low.Store(int64(low))
	for p := watched.peak.Load(); int64(total) > p && !watched.peak.CompareAndSwap(p, int64(total)); p = watched.peak.Load() {
	}
	switch {
	case !w.tripped.Load() && count >= high:
		w.tripped.Store(true)
		w.trips.Add(1)
		watched.episodes.Add(1)
		threadRefusals.trip()
		w.logger().Warn("loom: OS threads past the high-water mark: executors refuse new tasks",
			"in_use", count, "threads", total, "high", high, "low", low, "limit", limit)
	case w.tripped.Load() && count < low:
		w.tripped.Store(false)
		w.untrip(fmt.Sprintf("%d threads in use, below the low-water mark %d", count, low))
	}
	every := w.Every
	if every == 0 {
		every = time.Millisecond
	}
	if count < high/2 {
		every *= 10
	}
	return every
}

// untrip ends this watch's episode and reports it.
func (w *ThreadWatch) untrip(why string) {
	refused := threadRefusals.untrip()
	w.logger().Warn("loom: thread watch episode over: executors admit tasks again",
		"why", why, "refused", refused)
}

// threadBudget is how many tasks the executors may admit until the next
// reading of the thread counts (see package threadbudget).
var threadBudget = threadbudget.New()

// unguarded is the budget of the executors built WithoutThreadWatch: never
// set, it never runs out.
var unguarded = threadbudget.New()

// threadRefusals counts the tripped watches, and the tasks each executor
// refused during the current episode, for the report at its end.
var threadRefusals refusals

type refusals struct {
	tripped atomic.Int32 // watches tripped now
	mu      sync.Mutex
	byName  map[string]uint64
}

func (r *refusals) trip() {
	r.mu.Lock()
	if r.tripped.Add(1) == 1 {
		r.byName = make(map[string]uint64)
		threadBudget.Hold()
	}
	r.mu.Unlock()
}

// untrip returns "name=count, …" for the executors that refused tasks, if
// this was the last tripped watch.
func (r *refusals) untrip() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tripped.Add(-1) != 0 {
		return "(another watch is still tripped)"
	}
	threadBudget.Release()
	if watched.running.Load() == 0 {
		threadBudget.Unbound()
	}
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(r.byName)) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if name == "" {
			fmt.Fprintf(&b, "(unnamed)=%d", r.byName[name])
		} else {
			fmt.Fprintf(&b, "%s=%d", name, r.byName[name])
		}
	}
	r.byName = nil
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// count counts a refusal against the executor called name, for the report
// at the end of the current episode, if one is under way.
func (r *refusals) count(name string) {
	r.mu.Lock()
	if r.byName != nil {
		r.byName[name]++
	}
	r.mu.Unlock()
}
