package loom

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
)

func TestThreadWatchStartErrors(t *testing.T) {
	tests := []struct {
		name string
		w    *ThreadWatch
		want string
	}{
		{"high above 1", &ThreadWatch{High: 1.01}, "high-water mark 1.01"},
		{"high negative", &ThreadWatch{High: -0.5}, "high-water mark -0.5"},
		{"low at high", &ThreadWatch{High: 0.5, Low: 0.5}, "low-water mark 0.5"},
		{"low negative", &ThreadWatch{Low: -0.1}, "low-water mark -0.1"},
		{"interval negative", &ThreadWatch{Every: -1}, "interval -1ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.w.Start()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start() = %v; want an error naming %q", err, tt.want)
			}
			tt.w.Close()
		})
	}
}

func TestThreadWatchLifecycle(t *testing.T) {
	var w ThreadWatch
	if err := w.Close(); err != nil {
		t.Errorf("Close before Start = %v; want nil", err)
	}
	if err := w.Start(); err != nil {
		t.Fatalf("Start() = %v", err)
	}
	if err := w.Start(); !errors.Is(err, ErrWatchRunning) {
		t.Errorf("second Start() = %v; want ErrWatchRunning", err)
	}
	s := w.Stats()
	if !s.Running || s.Threads <= 0 || s.InUse <= 0 || s.InUse > s.Threads || s.Limit != osthreads.MaxThreads() || s.High != s.Limit*8/10 || s.Low != s.Limit*6/10 || s.Tripped {
		t.Errorf("Stats() = %+v; want running, threads, in use ≤ threads, the limit, high at 80%%, low at 60%%, not tripped", s)
	}
	// The process-wide figures, which every executor's Stats carries.
	e := Virtual()
	defer shutdown(t, e)
	for name, got := range map[string]ThreadWatchStats{"WatchedThreads()": WatchedThreads(), "Stats().Threads": e.Stats().Threads} {
		if !got.Running || got.Threads <= 0 || got.InUse <= 0 || got.Limit != s.Limit || got.High != s.High || got.Low != s.Low || got.PeakThreads < got.Threads || got.Tripped {
			t.Errorf("%s = %+v while a watch runs; want running, its limit and marks (%+v), not tripped", name, got, s)
		}
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if s := w.Stats(); s.Running {
		t.Errorf("Stats() after Close = %+v; want not running", s)
	}
	if got := e.Stats().Threads; got.Running || got.Limit != s.Limit {
		t.Errorf("Stats().Threads after Close = %+v; want not running, the last reading kept", got)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close() = %v", err)
	}
	// Stopped watches may start again; goleak (TestMain) checks each
	// Close ended its goroutine.
	if err := w.Start(); err != nil {
		t.Fatalf("Start after Close = %v", err)
	}
	w.Close()
}

func TestThreadWatchRefusal(t *testing.T) {
	for _, tc := range everyExecutor {
		t.Run(tc.kind, func(t *testing.T) {
			threadRefusals.trip()
			tripped := true
			untrip := func() {
				if tripped {
					tripped = false
					threadRefusals.untrip()
				}
			}
			defer untrip()
			e := tc.make(WithName("guarded"))
			defer shutdown(t, e)
			if s := e.Stats(); !s.Threads.Tripped {
				t.Errorf("Stats().Threads while tripped = %+v; want Tripped", s.Threads)
			}
			for name, submit := range map[string]func(context.Context, Task) error{"Go": e.Go, "Run": e.Run} {
				if err := submit(context.Background(), func(context.Context) {}); !errors.Is(err, ErrRejected) {
					t.Errorf("%s while tripped = %v; want ErrRejected", name, err)
				}
			}
			ignoring := tc.make(WithoutThreadWatch())
			defer shutdown(t, ignoring)
			if err := ignoring.Run(context.Background(), func(context.Context) {}); err != nil {
				t.Errorf("Run with WithoutThreadWatch while tripped = %v; want nil", err)
			}
			if got := threadRefusals.untrip(); got != "guarded=2" {
				t.Errorf("episode report %q; want guarded=2", got)
			}
			tripped = false
			if err := e.Run(context.Background(), func(context.Context) {}); err != nil {
				t.Errorf("Run after the watch recovered = %v; want nil", err)
			}
			s := e.Stats()
			if s.Rejected != 2 || s.RejectedByWatch != 2 || s.Threads.Tripped {
				t.Errorf("Stats() after the episode: Rejected %d, RejectedByWatch %d, Threads.Tripped %v; want 2, 2, false", s.Rejected, s.RejectedByWatch, s.Threads.Tripped)
			}
		})
	}
}

// TestThreadWatchStartsAtItsMarksEdges starts watches whose marks lie
// exactly on the edges of their ranges: a high-water mark of 1 (the whole
// thread limit) and a low-water mark just under the high one. (The marks
// one past each edge are in TestThreadWatchStartErrors.)
func TestThreadWatchStartsAtItsMarksEdges(t *testing.T) {
	for _, w := range []*ThreadWatch{
		{High: 1},
		{High: 0.5, Low: math.Nextafter(0.5, 0)},
		{High: 0.5, Low: math.SmallestNonzeroFloat64},
	} {
		if err := w.Start(); err != nil {
			t.Errorf("Start() with high %v, low %v = %v; want nil", w.High, w.Low, err)
		}
		if err := w.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	}
}

// TestThreadWatchReadsLessOftenFarBelowItsMark reads the thread count once
// with a high-water mark of the whole limit, which the test process is far
// below: the next read is 10 intervals away, the interval being Every or,
// when 0, a millisecond (threadwatch.go, check: every == 0, count < high/2).
func TestThreadWatchReadsLessOftenFarBelowItsMark(t *testing.T) {
	for _, tc := range []struct{ every, want time.Duration }{
		{0, 10 * time.Millisecond},
		{3 * time.Millisecond, 30 * time.Millisecond},
	} {
		w := &ThreadWatch{High: 1, Every: tc.every}
		if got := w.check(osthreads.NewSampler()); got != tc.want {
			t.Errorf("check with Every %s, far below the mark (%+v): next read in %s; want %s", tc.every, w.Stats(), got, tc.want)
		}
	}
}
