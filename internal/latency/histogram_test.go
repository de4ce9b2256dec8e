package latency

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestQuantileEmpty(t *testing.T) {
	var h Histogram
	if got := h.Quantile(0.5); got != 0 {
		t.Errorf("Quantile of an empty histogram = %v; want 0", got)
	}
}

func TestQuantileWithinBucketError(t *testing.T) {
	tests := []struct {
		name   string
		values []time.Duration
		q      float64
		want   time.Duration
	}{
		{"one value", []time.Duration{time.Millisecond}, 0.5, time.Millisecond},
		{"exact small", []time.Duration{3, 3, 3}, 0.99, 3},
		{"median of 1..1000µs", spread(1000, time.Microsecond), 0.5, 500 * time.Microsecond},
		{"p99 of 1..1000µs", spread(1000, time.Microsecond), 0.99, 990 * time.Microsecond},
		{"p0 is the smallest", spread(100, time.Millisecond), 0, time.Millisecond},
		{"p100 is the largest", spread(100, time.Millisecond), 1, 100 * time.Millisecond},
		{"huge values land in the last bucket", []time.Duration{1000 * time.Hour}, 0.5, time.Duration(middle(buckets - 1))},
		{"negative counts as zero", []time.Duration{-time.Second}, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			for _, v := range tt.values {
				h.Record(v)
			}
			got := h.Quantile(tt.q)
			if diff := float64(got-tt.want) / float64(max(tt.want, 1)); diff > 0.125 || diff < -0.125 {
				t.Errorf("Quantile(%v) = %v; want %v within 12.5%%", tt.q, got, tt.want)
			}
		})
	}
}

func spread(n int, unit time.Duration) []time.Duration {
	values := make([]time.Duration, n)
	for i := range values {
		values[i] = time.Duration(i+1) * unit
	}
	rand.Shuffle(n, func(i, j int) { values[i], values[j] = values[j], values[i] })
	return values
}

// TestIndexIsMonotonic checks that larger values never land in smaller
// buckets and that each bucket's middle maps back to it.
func TestIndexIsMonotonic(t *testing.T) {
	last := 0
	for v := uint64(0); v < 1<<20; v += 1 + v/64 {
		i := index(v)
		if i < last {
			t.Fatalf("index(%d) = %d < index of a smaller value, %d", v, i, last)
		}
		last = i
	}
	for i := range buckets - 1 {
		if got := index(middle(i)); got != i {
			t.Errorf("index(middle(%d) = %d) = %d; want %d", i, middle(i), got, i)
		}
	}
}

func TestConcurrentRecord(t *testing.T) {
	var h Histogram
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 1000 {
				h.Record(time.Duration(i))
			}
		})
	}
	wg.Wait()
	if got := h.Count(); got != 8000 {
		t.Errorf("Count = %d; want 8000", got)
	}
}

func BenchmarkRecord(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		d := time.Duration(rand.Int64N(int64(time.Second)))
		for pb.Next() {
			h.Record(d)
		}
	})
}
