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
	// messages; the third message finds it full and the hub drops slow.
	for i := range 3 {
		if err := hub.Publish(ctx, fast, "message"); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	// The hub takes one request at a time, so once it has taken fast's
	// Leave it has finished broadcasting the third message.
	hub.Leave(fast)

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
	if !slow.Dropped() {
		t.Error("slow: got Dropped() = false; want true")
	}
	// fast's queue was large enough for every event: its join and three
	// messages, then its channel was closed by Leave, not by a drop.
	for got = 0; ; got++ {
		if _, ok := next(t, fast); !ok {
			break
		}
	}
	if got != 4 || fast.Dropped() {
		t.Errorf("fast: got %d events, dropped %t; want 4, false", got, fast.Dropped())
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
