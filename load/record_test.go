package load

import (
	"reflect"
	"testing"
)

// TestTimelineKeepsEverySecondWithSomething adds seconds that hold one
// kind of count each (requests, errors, bytes) and one that holds none: the
// empty second is left out, and lists no seconds before it either, while
// each of the others counts.
func TestTimelineKeepsEverySecondWithSomething(t *testing.T) {
	var tl timeline
	tl.add(Second{Second: 5})
	if got := tl.list(); len(got) != 0 {
		t.Fatalf("after an empty second: %+v; want nothing", got)
	}
	tl.add(Second{Second: 0, Requests: 1, LatencyTotal: 3, LatencyMax: 3})
	tl.add(Second{Second: 1, Errors: 2})
	tl.add(Second{Second: 2, Bytes: 3})
	tl.add(Second{Second: 0, Requests: 1, Bytes: 10, LatencyTotal: 5, LatencyMax: 5})
	want := []Second{
		{Second: 0, Requests: 2, Bytes: 10, LatencyTotal: 8, LatencyMax: 5},
		{Second: 1, Errors: 2},
		{Second: 2, Bytes: 3},
	}
	if got := tl.list(); !reflect.DeepEqual(got, want) {
		t.Errorf("timeline %+v; want %+v", got, want)
	}
}
