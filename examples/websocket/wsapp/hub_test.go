package wsapp

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// next returns m's next event, or fails the test after 10 s.
func next(t *testing.T, m *Member) (Event, bool) {
	t.Helper()
	select {
	case data, ok := <-m.Events():
		if !ok {
			return Event{}, false
		}
		var e Event
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		return e, true
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
		return Event{}, false
	}
}

func TestHubDropsSlowMember(t *testing.T) {
	const queue = 4
	hub := NewHub(queue)
	defer hub.Close()
	ctx := t.Context()

	slow, err := hub.Join(ctx, "slow")
	if err != nil {
		t.Fatal(err)
	}
	fast, err := hub.Join(ctx, "fast")
	if err != nil {
		t.Fatal(err)
	}
	// slow reads nothing: its queue takes its own join, fast's join and two
	// messages; the third message finds it full and the hub drops it. fast
	// reads as it goes, and hears of each message and then of slow leaving.
	expect := func(want Event) {
		t.Helper()
		if e, ok := next(t, fast); !ok || e != want {
			t.Fatalf("fast: got %+v (open %t); want %+v", e, ok, want)
		}
	}
	expect(Event{Kind: KindJoined, From: "fast", Online: 2})
	for i := range 3 {
		if err := hub.Publish(ctx, fast, "message"); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		expect(Event{Kind: KindMessage, From: "fast", Text: "message"})
	}
	expect(Event{Kind: KindLeft, From: "slow", Online: 1})

	var got int
	for {
		if _, ok := next(t, slow); !ok {
			break
		}
		got++
	}
	if got != queue {
		t.Errorf("slow got %d events before being dropped; want its queue, %d", got, queue)
	}
	if !slow.Dropped() || fast.Dropped() {
		t.Errorf("got Dropped() = %t for slow, %t for fast; want true, false", slow.Dropped(), fast.Dropped())
	}
	// Leaving after being dropped is harmless.
	hub.Leave(slow)
	hub.Leave(slow)
}

func TestHubClose(t *testing.T) {
	hub := NewHub(0)
	m, err := hub.Join(t.Context(), "ada")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := next(t, m); e != (Event{Kind: KindJoined, From: "ada", Online: 1}) {
		t.Errorf("got %+v; want ada's join", e)
	}
	if err := hub.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := next(t, m); ok {
		t.Error("after Close: got an event; want the channel closed")
	}
	if m.Dropped() {
		t.Error("after Close: got Dropped() = true; want false")
	}
	if _, err := hub.Join(t.Context(), "bob"); !errors.Is(err, ErrHubClosed) {
		t.Errorf("Join after Close: got %v; want ErrHubClosed", err)
	}
	if err := hub.Publish(t.Context(), m, "x"); !errors.Is(err, ErrHubClosed) {
		t.Errorf("Publish after Close: got %v; want ErrHubClosed", err)
	}
	hub.Leave(m) // must not block
	if err := hub.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestHubJoinContext(t *testing.T) {
	// A hub whose goroutine has not started never takes a member, so Join
	// can only end by its context.
	idle := &Hub{join: make(chan *Member), quit: make(chan struct{}), queue: 1}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if m, err := idle.Join(ctx, "ada"); !errors.Is(err, context.DeadlineExceeded) || m != nil {
		t.Errorf("Join on a busy hub: got %v, %v; want nil, context.DeadlineExceeded", m, err)
	}
}
