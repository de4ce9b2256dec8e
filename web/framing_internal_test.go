package web

import "testing"

// TestFramingNotesQueueInOrder: notes pushed while others wait come out in
// the order pushed, also when the queue, full to its capacity with the
// front ones taken, reuses their room instead of growing; the room of
// a queue taken to its end is reused too (framing.go, push and take).
func TestFramingNotesQueueInOrder(t *testing.T) {
	var s framingScan
	s.notes = make([]framingNote, 0, 4)
	var want []framingNote
	push := func(n framingNote) {
		t.Helper()
		if !s.push(n) {
			t.Fatalf("push refused with %d notes pending", len(s.notes)-s.head)
		}
		want = append(want, n)
	}
	take := func() {
		t.Helper()
		got, ok := s.take()
		if !ok || len(want) == 0 || got != want[0] {
			t.Fatalf("take = %v, %v; want %v", got, ok, want)
		}
		want = want[1:]
	}
	push(noteLength)
	push(noteCoding)
	push(noteLength | noteCoding)
	take()           // head 1 of 3
	push(0)          // at capacity's edge: appended
	push(noteLength) // full with the front taken: moved to the front
	if s.head != 0 || cap(s.notes) != 4 {
		t.Errorf("head %d, capacity %d; want the taken room reused: head 0, capacity 4", s.head, cap(s.notes))
	}
	for len(want) > 0 {
		take()
	}
	if n, ok := s.take(); ok {
		t.Errorf("take of an empty queue = %v, true; want false", n)
	}
	if len(s.notes) != 0 || s.head != 0 {
		t.Errorf("after the last take: %d notes, head %d; want the queue emptied to its start", len(s.notes), s.head)
	}
}
