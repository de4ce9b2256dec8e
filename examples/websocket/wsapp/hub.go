package wsapp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
)

// ErrHubClosed is returned by Hub.Join and Hub.Publish after Hub.Close.
var ErrHubClosed = errors.New("chat hub closed")

// DefaultQueue is the number of events a member may have waiting to be
// written before the hub drops it as too slow.
const DefaultQueue = 64

// Hub is a chat room: every message a member publishes goes to all members,
// the sender included, in one order that every member sees.
//
// One goroutine, started by NewHub and stopped by Close, owns the member
// list, so that joining, leaving and broadcasting need no lock. Broadcasting
// never waits for a member: one whose queue is full is dropped, its Events
// channel closed and its leaving announced, so that a slow client cannot
// stall the room. A Hub is safe
// for concurrent use.
type Hub struct {
	join    chan *Member
	leave   chan *Member
	publish chan Event
	quit    chan struct{} // closed by Close: the goroutine must stop
	done    chan struct{} // closed by the goroutine when it has stopped
	once    sync.Once
	queue   int
}

// A Member is one connection's place in the room. Its events arrive on
// Events until it leaves, is dropped, or the hub closes; then the channel is
// closed and Dropped says whether the member was too slow.
type Member struct {
	Name string

	events  chan []byte
	dropped bool // set by the hub goroutine before closing events
}

// Events returns the channel of encoded Events for this member.
func (m *Member) Events() <-chan []byte { return m.events }

// Dropped reports whether the hub dropped the member for not keeping up.
// It is meaningful once Events is closed.
func (m *Member) Dropped() bool { return m.dropped }

// NewHub starts a chat room whose members may each have queue events
// waiting (DefaultQueue when queue <= 0). Call Close to stop it.
func NewHub(queue int) *Hub {
	if queue <= 0 {
		queue = DefaultQueue
	}
	h := &Hub{
		join:    make(chan *Member),
		leave:   make(chan *Member),
		publish: make(chan Event),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		queue:   queue,
	}
	go h.run()
	return h
}

// Close stops the hub's goroutine and waits for it. Every member's Events
// channel is closed; later Joins fail with ErrHubClosed and Publish and
// Leave do nothing. Close may be called more than once.
func (h *Hub) Close() error {
	h.once.Do(func() { close(h.quit) })
	<-h.done
	return nil
}

// Join adds a member called name and announces it to the room. It blocks
// until the hub takes the member, ctx ends, or the hub closes.
func (h *Hub) Join(ctx context.Context, name string) (*Member, error) {
	m := &Member{Name: name, events: make(chan []byte, h.queue)}
	select {
	case h.join <- m:
		return m, nil
	case <-h.quit:
		return nil, ErrHubClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Leave removes m and announces it to the room. Leaving twice, or after
// being dropped, is harmless.
func (h *Hub) Leave(m *Member) {
	select {
	case h.leave <- m:
	case <-h.quit:
	}
}

// Publish sends text from m to every member. It blocks until the hub takes
// the message (not until members receive it), ctx ends, or the hub closes.
func (h *Hub) Publish(ctx context.Context, m *Member, text string) error {
	select {
	case h.publish <- Event{Kind: KindMessage, From: m.Name, Text: text}:
		return nil
	case <-h.quit:
		return ErrHubClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Hub) run() {
	defer close(h.done)
	members := make(map[*Member]struct{})
	defer func() {
		for m := range members {
			close(m.events)
		}
	}()
	for {
		select {
		case m := <-h.join:
			members[m] = struct{}{}
			h.broadcast(members, Event{Kind: KindJoined, From: m.Name, Online: len(members)})
		case m := <-h.leave:
			if _, ok := members[m]; !ok {
				continue // already dropped
			}
			delete(members, m)
			close(m.events)
			h.broadcast(members, Event{Kind: KindLeft, From: m.Name, Online: len(members)})
		case e := <-h.publish:
			h.broadcast(members, e)
		case <-h.quit:
			return
		}
	}
}

// broadcast queues e for every member. A member whose queue is full is
// dropped, and the others are told it left.
func (h *Hub) broadcast(members map[*Member]struct{}, e Event) {
	data, err := json.Marshal(e)
	if err != nil {
		panic("wsapp: encode event: " + err.Error()) // strings and ints always encode
	}
	var dropped []*Member
	for m := range members {
		select {
		case m.events <- data:
		default:
			m.dropped = true
			delete(members, m)
			close(m.events)
			dropped = append(dropped, m)
		}
	}
	// Each round drops at least one member, so this ends.
	for _, m := range dropped {
		h.broadcast(members, Event{Kind: KindLeft, From: m.Name, Online: len(members)})
	}
}
