package remote

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/loomrt/loom/actor"
)

// askPrefix begins the path of an Ask's reply address: "$ask/<id>" on the
// asking node.
const askPrefix = "$ask/"

// remoteActor is an actor on another node, as this node's Refs reach it.
type remoteActor struct {
	p    *peer
	path string
	ref  actor.Ref
	// done is closed by end. An Ask's reply address, used once and never
	// ended by news of its actor, has none: nil, never ready.
	done  chan struct{}
	ended atomic.Bool // done is closed; set under n.mu
}

var _ actor.Remote = (*remoteActor)(nil)

// end closes done; the caller holds n.mu.
func (a *remoteActor) end() {
	if !a.ended.Load() {
		a.ended.Store(true)
		if a.done != nil {
			close(a.done)
		}
	}
}

func (a *remoteActor) Node() string { return a.p.name }

func (a *remoteActor) Done() <-chan struct{} { return a.done }

// Send queues msg for a's node. A Terminated is the news that a local actor
// a watches has stopped.
//
// It runs on the sender's turn, often a young goroutine's first frames: it
// keeps its frames small and leaves the encoding to the peer's flusher.
func (a *remoteActor) Send(ctx context.Context, msg any, sender actor.Ref) error {
	if _, ok := msg.(actor.Terminated); ok {
		return a.sendTerminated(msg.(actor.Terminated))
	}
	return a.p.tell(ctx, a.path, msg, sender)
}

//go:noinline
func (a *remoteActor) sendTerminated(t actor.Terminated) error {
	if t.Actor.Remote() != nil {
		return nil // not news this node gives
	}
	n := a.p.n
	n.mu.Lock()
	if a.p.inWatches != nil {
		delete(a.p.inWatches, inWatch{target: t.Actor, watcher: a.ref})
	}
	n.mu.Unlock()
	return a.p.terminated(a.path, t.Actor.Path(), reasonStopped)
}

// address returns how a frame names sender: its node ("" for this one) and
// path ("" for none).
func (n *Node) address(sender actor.Ref) (node, path string) {
	if sender.IsZero() {
		return "", ""
	}
	r := sender.Remote()
	if r == nil {
		return "", sender.Path()
	}
	if s, ok := r.(*remoteActor); ok && s.p.n == n {
		return s.p.name, s.path
	}
	return "", "" // another transport's actor: no reply can reach it
}

func (a *remoteActor) Signal(s actor.Signal, from actor.Ref) {
	n := a.p.n
	switch s {
	case actor.SignalWatch, actor.SignalUnwatch:
		if from.IsZero() || from.Remote() != nil {
			return
		}
		key := watchKey{path: a.path, watcher: from}
		n.mu.Lock()
		if a.p.removed {
			n.mu.Unlock()
			if s == actor.SignalWatch {
				from.TellFrom(context.Background(), actor.Terminated{Actor: a.ref, Reason: a.p.goneErr}, a.ref)
			}
			return
		}
		if s == actor.SignalWatch {
			a.p.watches[key] = a
		} else {
			delete(a.p.watches, key)
		}
		n.mu.Unlock()
		if err := a.p.signal(a.path, s, from.Path()); err != nil && s == actor.SignalWatch {
			n.mu.Lock()
			watched := a.p.watches[key] == a
			delete(a.p.watches, key)
			n.mu.Unlock()
			if watched {
				from.TellFrom(context.Background(), actor.Terminated{Actor: a.ref, Reason: err}, a.ref)
			}
		}
	case actor.SignalStop, actor.SignalKill:
		_ = a.p.signal(a.path, s, "")
	}
}

// pendingAsk is an Ask waiting for its reply.
type pendingAsk struct {
	reply chan any // room for one
}

// askFailure carries why an Ask's message was not handled.
type askFailure struct{ err error }

// Ask sends msg with a reply address of this node's and waits for the
// reply, ctx's end, or a's node's end.
func (a *remoteActor) Ask(ctx context.Context, msg any) (any, error) {
	n := a.p.n
	pa := &pendingAsk{reply: make(chan any, 1)}
	n.askMu.Lock()
	n.askSeq++
	id := n.askSeq
	n.asks[id] = pa
	n.askMu.Unlock()
	// answer removes the Ask it replies to; an Ask that ends unanswered
	// removes itself.
	forget := func() {
		n.askMu.Lock()
		delete(n.asks, id)
		n.askMu.Unlock()
	}
	if err := a.p.tellFrom(ctx, a.path, msg, "", askPrefix+strconv.FormatUint(id, 10)); err != nil {
		forget()
		n.sys.Undelivered(actor.DeadLetter{Recipient: a.ref, Message: msg, Reason: err})
		return nil, err
	}
	select {
	case v := <-pa.reply:
		if f, ok := v.(askFailure); ok {
			return nil, f.err
		}
		return v, nil
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	case <-a.p.gone:
		forget()
		// A reply that came first wins.
		select {
		case v := <-pa.reply:
			if f, ok := v.(askFailure); ok {
				return nil, f.err
			}
			return v, nil
		default:
		}
		return nil, a.p.goneErr
	}
}

// answer hands v to the Ask whose reply address is path; false if none
// waits (it timed out, or was answered).
func (n *Node) answer(path []byte, v any) bool {
	var id uint64
	digits := path[len(askPrefix):]
	if len(digits) == 0 || len(digits) > 20 {
		return false
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return false
		}
		id = id*10 + uint64(d-'0')
	}
	n.askMu.Lock()
	pa := n.asks[id]
	delete(n.asks, id)
	n.askMu.Unlock()
	if pa == nil {
		return false
	}
	select {
	case pa.reply <- v:
		return true
	default:
		return false
	}
}

// onDeadLetter tells a remote Ask whose message became a dead letter here
// why, so that it fails now rather than at its deadline.
func (n *Node) onDeadLetter(d actor.DeadLetter) {
	a, ok := d.Sender.Remote().(*remoteActor)
	if !ok || a.p.n != n || len(a.path) < len(askPrefix) || a.path[:len(askPrefix)] != askPrefix {
		return
	}
	reason, text := reasonOther, "undeliverable"
	if d.Reason != nil {
		text = d.Reason.Error()
		switch {
		case errors.Is(d.Reason, actor.ErrNotFound):
			reason = reasonNotFound
		case errors.Is(d.Reason, ErrUnknownType):
			reason = reasonUnknownType
		case errors.Is(d.Reason, actor.ErrStopped):
			reason = reasonStopped
		}
	}
	_ = a.p.fail(a.path, reason, text)
}

// failure is the error a fail frame from node carries.
func failure(node string, reason byte, text []byte) error {
	sentinel := actor.ErrStopped
	switch reason {
	case reasonNotFound:
		sentinel = actor.ErrNotFound
	case reasonUnknownType:
		sentinel = ErrUnknownType
	}
	return fmt.Errorf("%w (on %s: %s)", sentinel, node, text)
}
