package nbio

import (
	"testing"
	"time"
)

// TestStalledCountsFromTheFirstLook: the sweep counts a stall from the
// first sweep that finds bytes queued and none of them written, not from
// the server's start, so that on a server up for longer than the write
// timeout a connection whose first response has not reached the socket yet
// is not cut off at once; it is once the bytes stay unwritten for the
// timeout, and progress restarts the count (sweep.go, stalled's
// st.stalledSince == 0).
func TestStalledCountsFromTheFirstLook(t *testing.T) {
	const timeout = time.Second
	s := &server{writeTimeout: timeout}
	st := &connState{}
	at := func(d time.Duration) int64 { return int64(d) }

	if s.stalled(st, at(10*timeout)) {
		t.Fatal("a connection with nothing queued is stalled")
	}
	st.queued.Add(100) // the first response, none of it written yet
	for _, tc := range []struct {
		clock   time.Duration
		written int64
		want    bool
	}{
		{10 * timeout, 0, false},                                // first seen: the count starts
		{10*timeout + timeout/2, 0, false},                      // half the timeout
		{11*timeout + timeout/2, 40, false},                     // progress: the count starts again
		{12*timeout + timeout/4, 40, false},                     // three quarters since the progress
		{12*timeout + timeout/2, 40, true},                      // the whole timeout without progress
		{12*timeout + timeout/2 + time.Millisecond, 100, false}, // all written: not stalled
	} {
		st.written.Store(tc.written)
		if got := s.stalled(st, at(tc.clock)); got != tc.want {
			t.Errorf("at %v with %d of 100 bytes written: stalled %v; want %v", tc.clock, tc.written, got, tc.want)
		}
	}
}
