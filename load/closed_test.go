package load

import (
	"slices"
	"testing"
	"time"
)

// TestBackoffDoublesUpTo200ms walks the pauses between failed connection
// attempts from a success: 1 ms, doubling, and never past the 200 ms that
// docs/load.md gives.
func TestBackoffDoublesUpTo200ms(t *testing.T) {
	var got []time.Duration
	for d := time.Duration(0); len(got) < 11; {
		d = nextBackoff(d)
		got = append(got, d)
	}
	ms := time.Millisecond
	want := []time.Duration{ms, 2 * ms, 4 * ms, 8 * ms, 16 * ms, 32 * ms, 64 * ms, 128 * ms, 200 * ms, 200 * ms, 200 * ms}
	if !slices.Equal(got, want) {
		t.Errorf("pauses %v; want %v", got, want)
	}
}
