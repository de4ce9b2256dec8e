package loom

import (
	"math"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
)

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
