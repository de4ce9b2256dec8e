package loom

import "testing"

// TestEntryQueueKeepsOrderThroughEmpty pushes and pops adaptive's queue of
// waiting tasks across the moments it empties and holds several: each task
// comes out once, in the order it went in, and len follows.
func TestEntryQueueKeepsOrderThroughEmpty(t *testing.T) {
	var q entryQueue
	e := make([]*entry, 5)
	for i := range e {
		e[i] = &entry{admitted: int64(i)}
	}
	pop := func(want int) {
		t.Helper()
		if q.len == 0 {
			t.Fatalf("pop: queue empty; want entry %d", want)
		}
		if got := q.pop(); got != e[want] {
			t.Fatalf("pop = entry %d; want entry %d", got.admitted, want)
		}
	}
	q.push(e[0])
	pop(0) // empties the queue
	q.push(e[1])
	q.push(e[2])
	pop(1) // leaves one behind
	q.push(e[3])
	pop(2)
	pop(3)
	q.push(e[4])
	if q.len != 1 {
		t.Errorf("len = %d after refilling with one; want 1", q.len)
	}
	pop(4)
	if q.len != 0 || q.head != nil || q.tail != nil {
		t.Errorf("emptied queue: len %d, head %v, tail %v; want 0, nil, nil", q.len, q.head, q.tail)
	}
}
