package loom

import (
	"math"
	"testing"
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
