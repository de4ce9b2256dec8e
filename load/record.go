package load

import (
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds, from 1 µs to one hour, with three
// significant digits (0.1% resolution).
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
	// latencyBatch latencies are kept per worker before they go into a shared
	// histogram under its lock: a histogram per connection would cost 10,000 ×
	// 180 KB at -c 10000, and a lock per request would bounce between cores.
	latencyBatch = 256
)

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histDigits)
}

// shard is one of a few histograms that workers flush their batches into.
type shard struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
	_  [48]byte // keep neighbouring locks off one cache line
}

func (s *shard) record(values []int64) {
	s.mu.Lock()
	for _, v := range values {
		if v > histHighest {
			v = histHighest
		}
		_ = s.h.RecordValue(v) // cannot fail: v is within range
	}
	s.mu.Unlock()
}

// timeline accumulates per-second counts from workers. It is safe for
// concurrent use.
type timeline struct {
	mu      sync.Mutex
	seconds []Second
}

func (t *timeline) add(s Second) {
	if s.Requests == 0 && s.Errors == 0 && s.Bytes == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.seconds) <= s.Second {
		t.seconds = append(t.seconds, Second{Second: len(t.seconds)})
	}
	p := &t.seconds[s.Second]
	p.Requests += s.Requests
	p.Errors += s.Errors
	p.Bytes += s.Bytes
	p.LatencyTotal += s.LatencyTotal
	p.LatencyMax = max(p.LatencyMax, s.LatencyMax)
}

func (t *timeline) list() []Second {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Second(nil), t.seconds...)
}

// summarize computes a latency summary of h (recorded in microseconds).
func summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	usf := func(v float64) time.Duration { return time.Duration(v * float64(time.Microsecond)) }
	return Latency{
		Min:   us(h.Min()),
		Mean:  usf(h.Mean()),
		Stdev: usf(h.StdDev()),
		P50:   us(h.ValueAtPercentile(50)),
		P75:   us(h.ValueAtPercentile(75)),
		P90:   us(h.ValueAtPercentile(90)),
		P99:   us(h.ValueAtPercentile(99)),
		P999:  us(h.ValueAtPercentile(99.9)),
		P9999: us(h.ValueAtPercentile(99.99)),
		Max:   us(h.Max()),
	}
}
