package remote

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/loomrt/loom/actor"
)

// EventKind says what happened to a node.
type EventKind int

const (
	// Joined: the node's first heartbeat or message arrived.
	Joined EventKind = iota + 1
	// Left: the node announced it leaves (Node.Leave).
	Left
	// Down: the node was silent past the failure bound, or came back as a
	// new incarnation (then a Joined follows).
	Down
)

func (k EventKind) String() string {
	switch k {
	case Joined:
		return "joined"
	case Left:
		return "left"
	case Down:
		return "down"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// MemberEvent is a change in the cluster as this node sees it.
type MemberEvent struct {
	Node   string
	Kind   EventKind
	Reason error // for Left and Down: wraps ErrNodeLeft or ErrNodeDown
}

type memberSub struct{ f func(MemberEvent) }

// SubscribeMembers calls f for every membership change from now on, in
// the order this node saw them, on one goroutine of the node's, until the
// returned cancel is called. f must not block for long: later events wait.
func (n *Node) SubscribeMembers(f func(MemberEvent)) (cancel func()) {
	sub := &memberSub{f}
	n.mu.Lock()
	n.watchers = append(n.watchers, sub)
	n.mu.Unlock()
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		for i, s := range n.watchers {
			if s == sub {
				n.watchers = append(n.watchers[:i:i], n.watchers[i+1:]...)
				return
			}
		}
	}
}

// Members returns the names of the other nodes this node sees alive,
// sorted.
func (n *Node) Members() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var names []string
	for name, p := range n.peers {
		if p.instance != 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// event queues e for the events goroutine; the caller holds n.mu.
func (n *Node) event(e MemberEvent) {
	n.events = append(n.events, e)
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *Node) deliverEvents() {
	defer n.wg.Done()
	for {
		select {
		case <-n.wake:
		case <-n.stop:
			return
		}
		for {
			n.mu.Lock()
			if len(n.events) == 0 {
				n.mu.Unlock()
				break
			}
			e := n.events[0]
			n.events = n.events[1:]
			subs := n.watchers
			n.mu.Unlock()
			for _, s := range subs {
				s.f(e)
			}
		}
	}
}

// Heartbeats: kind:u8 instance:u64le name, or for beatRefused
// kind:u8 instance:u64le refused:u64le name.
const (
	beatAlive byte = iota
	beatLeaving
	beatHello   // alive, and new here or back: answer with a heartbeat
	beatRefused // to the incarnation refused: you were declared down here
)

func (n *Node) beat(kind byte) { n.beatTo(kind, 0) }

func (n *Node) beatTo(kind byte, refused uint64) {
	var b [1 + 8 + 8 + 256]byte
	msg := append(b[:0], kind)
	msg = binary.LittleEndian.AppendUint64(msg, n.instance)
	if kind == beatRefused {
		msg = binary.LittleEndian.AppendUint64(msg, refused)
	}
	msg = append(msg, n.name...)
	// An error means a closed connection; a reconnecting one buffers.
	_ = n.nc.Publish(n.prefix+"hb", msg)
}

func (n *Node) onHeartbeat(m *nats.Msg) {
	data := m.Data
	if len(data) < 10 {
		n.malformed.Add(1)
		return
	}
	kind, instance := data[0], binary.LittleEndian.Uint64(data[1:9])
	var refused uint64
	data = data[9:]
	if kind == beatRefused {
		if len(data) < 9 {
			n.malformed.Add(1)
			return
		}
		refused, data = binary.LittleEndian.Uint64(data), data[8:]
	}
	name := string(data)
	if kind > beatRefused || instance == 0 || !validName(name) {
		n.malformed.Add(1)
		return
	}
	if name == n.name {
		if instance == n.instance && kind != beatRefused {
			n.echoed.Store(time.Now().UnixNano())
		}
		return // our own, or a namesake's
	}
	switch kind {
	case beatLeaving:
		n.mu.Lock()
		p := n.peers[name]
		n.mu.Unlock()
		if p != nil && p.instance == instance {
			n.remove(p, fmt.Errorf("%w: %s", ErrNodeLeft, name), Left)
		}
		return
	case beatRefused:
		if refused != n.instance {
			return
		}
		// name declared this node down and ignores it: so does this node
		// with name, so that both sides see the same split.
		n.mu.Lock()
		p := n.peers[name]
		n.mu.Unlock()
		if p != nil && p.instance == instance {
			n.remove(p, fmt.Errorf("%w: %s declared this node down (%w)", ErrNodeDown, name, ErrDeclaredDown), Down)
		}
		return
	}
	p, isNew := n.peerFrom(name, instance)
	switch {
	case p == nil:
		n.mu.Lock()
		_, refuse := n.downed[instance]
		n.mu.Unlock()
		if refuse {
			n.beatTo(beatRefused, instance)
		}
	case isNew || kind == beatHello:
		n.beat(beatAlive) // let a newcomer know us now, not a heartbeat later
	}
}

// peerNamed returns the current incarnation of node name, adding one not
// yet heard from; nil once the node has left.
func (n *Node) peerNamed(name string) *peer {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	p := n.peers[name]
	if p == nil {
		p = n.newPeer(name, 0)
	}
	return p
}

// peerFrom returns the peer of a heartbeat or batch from incarnation
// instance of node name, and whether it is new; nil for a stale
// incarnation. An incarnation that replaces another puts the old one down.
func (n *Node) peerFrom(name string, instance uint64) (p *peer, isNew bool) {
	n.mu.Lock()
	if _, gone := n.downed[instance]; gone || n.closed {
		n.mu.Unlock()
		return nil, false
	}
	p = n.peers[name]
	var old *peer
	switch {
	case p == nil:
		p, isNew = n.newPeer(name, instance), true
		n.event(MemberEvent{Node: name, Kind: Joined})
	case p.instance == 0:
		p.heardFrom(instance)
		isNew = true
		n.event(MemberEvent{Node: name, Kind: Joined})
	case p.instance != instance:
		old = p
	}
	if old == nil {
		p.lastSeen = time.Now()
		n.mu.Unlock()
		return p, isNew
	}
	n.mu.Unlock()
	n.remove(old, fmt.Errorf("%w: %s restarted", ErrNodeDown, name), Down)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		// Leave ran while the lock was let go: a peer made now would
		// start a flusher after Leave waited for them all.
		return nil, false
	}
	p = n.peers[name]
	if p == nil {
		p = n.newPeer(name, instance)
	} else if p.instance == 0 {
		p.heardFrom(instance)
	}
	n.event(MemberEvent{Node: name, Kind: Joined})
	return p, true
}

// monitor sends heartbeats and declares down the nodes silent past the
// failure bound. While this node's own connection is down it declares
// nothing: the silence is its own. Once reconnected, every node gets a full
// bound from then to be heard again. Nor does it declare while its own
// heartbeats come back late: then what this node has not yet read, not
// what the others did not send, may be the silence (a process whose
// goroutines outnumber its cores many times over reads its socket late).
// Heartbeats arrive on one subscription in the order the server relays
// them, so once this node has read its latest heartbeat it has read the
// others' sent before it.
func (n *Node) monitor() {
	defer n.wg.Done()
	t := time.NewTicker(n.heartbeat)
	defer t.Stop()
	offline, reconnects := false, n.nc.Stats().Reconnects
	for {
		select {
		case <-t.C:
		case <-n.stop:
			return
		}
		if n.nc.Status() != nats.CONNECTED {
			offline = true
			continue
		}
		now := time.Now()
		if r := n.nc.Stats().Reconnects; offline || r != reconnects {
			offline, reconnects = false, r
			n.mu.Lock()
			for _, p := range n.peers {
				p.lastSeen = now
			}
			n.mu.Unlock()
			n.beat(beatHello)
		} else {
			n.beat(beatAlive)
		}
		if n.lagging(now) {
			continue
		}
		var silent []*peer
		n.mu.Lock()
		for _, p := range n.peers {
			if now.Sub(p.lastSeen) > n.failAfter {
				silent = append(silent, p)
			}
		}
		n.mu.Unlock()
		for _, p := range silent {
			n.remove(p, p.silence(n.failAfter), Down)
		}
	}
}

// silence is why p, silent for failAfter, is declared down.
func (p *peer) silence(failAfter time.Duration) error {
	p.n.mu.Lock()
	heard := p.instance != 0
	p.n.mu.Unlock()
	if !heard {
		return fmt.Errorf("%w: %s not heard from in %v", ErrNodeDown, p.name, failAfter)
	}
	return fmt.Errorf("%w: %s silent for %v", ErrNodeDown, p.name, failAfter)
}

// lagging reports whether this node's own heartbeats come back later than
// two heartbeats: its reading of the heartbeat subject is behind. A
// connection without echo never hears its own, and never lags.
func (n *Node) lagging(now time.Time) bool {
	if n.nc.Opts.NoEcho {
		return false
	}
	return now.Sub(time.Unix(0, n.echoed.Load())) > 2*n.heartbeat
}

// remove ends incarnation p: its Refs' watchers get Terminated with
// reason, Asks to it fail, what waits to be sent to it goes to dead
// letters, and its actors' watches of this node's actors end. kind is the
// event to report, if the node had been heard from (0: none).
func (n *Node) remove(p *peer, reason error, kind EventKind) {
	n.mu.Lock()
	if p.removed {
		n.mu.Unlock()
		return
	}
	p.removed = true
	p.goneErr = reason // before removed is seen unlocked: Signal reads it under n.mu
	if n.peers[p.name] == p {
		delete(n.peers, p.name)
	}
	if p.instance != 0 {
		n.downed[p.instance] = struct{}{}
		if kind != 0 {
			n.event(MemberEvent{Node: p.name, Kind: kind, Reason: reason})
		}
	}
	proxies, watches, inWatches := p.proxies, p.watches, p.inWatches
	p.proxies, p.watches, p.inWatches = nil, nil, nil
	for _, a := range proxies {
		a.end()
	}
	for _, a := range watches {
		a.end()
	}
	n.mu.Unlock()

	p.mu.Lock()
	p.closed = true
	pending := p.out
	p.out = nil
	p.mu.Unlock()
	close(p.gone)

	for k, a := range watches {
		k.watcher.TellFrom(context.Background(), actor.Terminated{Actor: a.ref, Reason: reason}, a.ref)
	}
	for k := range inWatches {
		k.target.Signal(actor.SignalUnwatch, k.watcher)
	}
	n.undeliverable(p, pending, reason, proxies)
}
