package remote

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/loomrt/loom/actor"
)

// maxLocal bounds the inbound goroutine's cache of local paths.
const maxLocal = 4096

// onBatch delivers a batch from another node, on the subscription's one
// goroutine: frames are handled in the order they were queued, which keeps
// each sender's messages to each actor in order.
func (n *Node) onBatch(m *nats.Msg) {
	n.batchesIn.Add(1)
	r := reader{b: m.Data}
	name, instance, err := r.header()
	if err != nil {
		n.malformed.Add(1)
		return
	}
	if !n.knows(name, instance) {
		// A node is first heard of from a batch that parses whole: bytes
		// no node wrote make no member.
		check := r
		var f frame
		for check.next(&f) {
		}
		if check.bad {
			n.malformed.Add(1)
			return
		}
	}
	p, _ := n.peerFrom(string(name), instance)
	if p == nil {
		n.stale.Add(1)
		return
	}
	var f frame
	var last lastTell
	frames := uint64(0)
	for r.next(&f) {
		frames++
		n.handle(p, &f, &last)
	}
	n.framesIn.Add(frames)
	if r.bad {
		n.malformed.Add(1)
	}
}

// lastTell is what the batch's last tell resolved, which the next reuses
// for the fields it shares (frame.same).
type lastTell struct {
	sender actor.Ref
	// senderKnown: sender is the frame's, resolved.
	senderKnown bool
	dec         decoder
	decErr      error
	to          actor.Ref
	toFound     bool
	toKnown     bool // to and toFound are the frame's
}

func (n *Node) handle(p *peer, f *frame, last *lastTell) {
	switch f.kind {
	case kindTell:
		if f.same&sameSender == 0 {
			last.senderKnown = false
		}
		// The sender is resolved when it is needed: a reply to an Ask
		// never needs it unless it is a dead letter, and resolving makes
		// a proxy for each replying actor.
		sender := func() actor.Ref {
			if !last.senderKnown {
				last.sender = actor.Ref{}
				if len(f.senderPath) > 0 {
					last.sender = n.resolve(p, f.senderNode, f.senderPath)
				}
				last.senderKnown = true
			}
			return last.sender
		}
		if f.same&sameType == 0 {
			last.dec, last.decErr = n.codecs.decoder(f.typeName)
		}
		if f.same&sameTo == 0 {
			last.toKnown = false
		}
		msg, err := last.dec.decode(f.typeName, f.payload, last.decErr)
		if err != nil {
			n.malformed.Add(1)
			n.sys.Undelivered(actor.DeadLetter{Sender: sender(), Message: f.typeName, Reason: fmt.Errorf("from %s: %w", p.name, err)})
			return
		}
		if f.to[0] == '$' {
			if len(f.to) < len(askPrefix) || string(f.to[:len(askPrefix)]) != askPrefix || !n.answer(f.to, msg) {
				n.sys.Undelivered(actor.DeadLetter{Sender: sender(), Message: msg,
					Reason: fmt.Errorf("%w: reply to %s: the Ask has ended", actor.ErrStopped, f.to)})
			}
			return
		}
		if !last.toKnown {
			last.to, last.toFound = n.localRef(f.to)
			last.toKnown = true
		}
		to := last.to
		if !last.toFound {
			n.sys.Undelivered(actor.DeadLetter{Sender: sender(), Message: msg,
				Reason: fmt.Errorf("%w: %s on %s", actor.ErrNotFound, f.to, n.name)})
			return
		}
		ctx := context.Background()
		if len(f.trace) > 0 && n.sys.Tracer() != nil {
			if c := readTrace(f.trace); c != nil {
				ctx = n.sys.ExtractContext(ctx, &c)
			}
		}
		to.TellFrom(ctx, msg, sender())
	case kindSignal:
		to, ok := n.localRef(f.to)
		switch s := actor.Signal(f.signal); s {
		case actor.SignalStop, actor.SignalKill:
			if ok {
				to.Signal(s, actor.Ref{})
			}
		case actor.SignalWatch, actor.SignalUnwatch:
			if len(f.senderPath) == 0 {
				n.malformed.Add(1)
				return
			}
			w := p.proxyBytes(f.senderPath)
			if !ok {
				if s == actor.SignalWatch {
					_ = p.terminated(w.path, string(f.to), reasonNotFound)
				}
				return
			}
			n.mu.Lock()
			if p.inWatches != nil {
				if s == actor.SignalWatch {
					p.inWatches[inWatch{target: to, watcher: w.ref}] = struct{}{}
				} else {
					delete(p.inWatches, inWatch{target: to, watcher: w.ref})
				}
			}
			n.mu.Unlock()
			to.Signal(s, w.ref)
		default:
			n.malformed.Add(1)
		}
	case kindTerminated:
		watcher, ok := n.localRef(f.to)
		if !ok {
			return
		}
		n.mu.Lock()
		key := watchKey{path: string(f.actor), watcher: watcher}
		a := p.watches[key]
		delete(p.watches, key)
		if a != nil {
			if p.proxies[a.path] == a {
				delete(p.proxies, a.path)
			}
			a.end()
		}
		n.mu.Unlock()
		if a == nil {
			return // unwatched meanwhile
		}
		var reason error
		if f.reason == reasonNotFound {
			reason = fmt.Errorf("%w: %s on %s", actor.ErrNotFound, a.path, p.name)
		}
		watcher.TellFrom(context.Background(), actor.Terminated{Actor: a.ref, Reason: reason}, a.ref)
	case kindFail:
		n.answer(f.to, askFailure{failure(p.name, f.reason, f.text)})
	}
}

// knows reports whether incarnation instance of node name is the one this
// node knows.
func (n *Node) knows(name []byte, instance uint64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.peers[string(name)]
	return p != nil && p.instance == instance
}

// resolve returns the sender a frame from p names, on the inbound goroutine.
func (n *Node) resolve(p *peer, node, path []byte) actor.Ref {
	switch {
	case len(node) == 0:
		return p.proxyBytes(path).ref
	case string(node) == n.name:
		r, _ := n.localRef(path)
		return r
	}
	if q := n.peerNamed(string(node)); q != nil {
		return q.proxyBytes(path).ref
	}
	return actor.Ref{}
}

// localRef returns the live local actor at path. Only the inbound
// goroutine calls it: the cache is its own.
func (n *Node) localRef(path []byte) (actor.Ref, bool) {
	if r, ok := n.local[string(path)]; ok {
		select {
		case <-r.Done():
			delete(n.local, string(path))
		default:
			return r, true
		}
	}
	r, err := n.sys.Lookup(string(path))
	if err != nil {
		return actor.Ref{}, false
	}
	if len(n.local) >= maxLocal {
		clear(n.local)
	}
	n.local[string(path)] = r
	return r, true
}
