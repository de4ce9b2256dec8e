package remote

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/loomrt/loom/actor"
)

// peer is one incarnation of another node: the batch of frames waiting to
// be published to it, its flusher, and the Refs this node handed out to its
// actors.
type peer struct {
	n       *Node
	name    string
	subject string
	gone    chan struct{} // closed by remove, after goneErr is set
	goneErr error

	// Under n.mu.
	instance  uint64 // 0 until heard from
	lastSeen  time.Time
	removed   bool
	proxies   map[string]*remoteActor
	watches   map[watchKey]*remoteActor // this node's actors watching the peer's
	inWatches map[inWatch]struct{}      // the peer's actors watching this node's

	mu       sync.Mutex
	buf      []byte // the header and the frames to publish next
	signaled bool   // the flusher has been woken for buf
	closed   bool   // removed: nothing more is queued
	wakeup   chan struct{}

	spare []byte // the flusher's
}

// watchKey is a watch by a local actor of the remote actor at path.
type watchKey struct {
	path    string
	watcher actor.Ref
}

// inWatch is a watch by a remote actor of a local one.
type inWatch struct {
	target, watcher actor.Ref
}

// newPeer adds incarnation instance (0: not yet known) of node name and
// starts its flusher; the caller holds n.mu.
func (n *Node) newPeer(name string, instance uint64) *peer {
	p := &peer{
		n: n, name: name, subject: n.prefix + "n." + name, gone: make(chan struct{}),
		instance: instance, lastSeen: time.Now(),
		proxies: make(map[string]*remoteActor), watches: make(map[watchKey]*remoteActor), inWatches: make(map[inWatch]struct{}),
		buf: append(make([]byte, 0, 64<<10), n.header...), wakeup: make(chan struct{}, 1),
	}
	n.peers[name] = p
	n.wg.Add(1)
	go p.flusher()
	return p
}

// proxy returns the remoteActor at path on p: the same one for the same
// path until the actor is known to have stopped, except for an Ask's reply
// address, which is used once.
func (p *peer) proxy(path string) *remoteActor {
	n := p.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := p.proxies[path]; a != nil {
		return a
	}
	a := &remoteActor{p: p, path: path, done: make(chan struct{})}
	a.ref = n.sys.RemoteRef(path, a)
	if p.removed {
		a.end()
	} else if !strings.HasPrefix(path, askPrefix) {
		p.proxies[path] = a
	}
	return a
}

// proxyBytes is proxy for a path read from a frame: no allocation when the
// proxy exists.
func (p *peer) proxyBytes(path []byte) *remoteActor {
	p.n.mu.Lock()
	a := p.proxies[string(path)]
	p.n.mu.Unlock()
	if a != nil {
		return a
	}
	return p.proxy(string(path))
}

// queue appends one frame that put writes, after the frame's kind and
// destination, to the batch for p, and wakes the flusher. It returns
// ErrBackpressure past the node's bound, the peer's end reason once it is
// removed, and put's error.
func (p *peer) queue(kind byte, to string, put func(b []byte) ([]byte, error)) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return p.goneErr
	}
	if len(p.buf) > p.n.maxPending {
		p.mu.Unlock()
		return fmt.Errorf("%w %s: %d bytes", ErrBackpressure, p.name, p.n.maxPending)
	}
	b, start := beginFrame(p.buf, kind, to)
	b, err := put(b)
	if err != nil {
		p.buf = b[:start]
		p.mu.Unlock()
		return err
	}
	p.buf = endFrame(b, start)
	wake := !p.signaled
	p.signaled = true
	p.mu.Unlock()
	if wake {
		select {
		case p.wakeup <- struct{}{}:
		default:
		}
	}
	return nil
}

// tell queues a message frame, with ctx's trace when the System has a
// Tracer.
func (p *peer) tell(ctx context.Context, to string, msg any, senderNode, senderPath string) error {
	name, codec, ok := p.n.codecs.encoder(msg)
	if !ok {
		return fmt.Errorf("%w: %T", ErrUnknownType, msg)
	}
	var trace carrier
	if p.n.sys.Tracer() != nil && ctx != nil {
		c := new(carrier) // only when tracing: the Tracer keeps what it likes
		p.n.sys.InjectContext(ctx, c)
		trace = *c
	}
	return p.queue(kindTell, to, func(b []byte) ([]byte, error) {
		b = appendStr(b, senderNode)
		b = appendStr(b, senderPath)
		b = appendStr(b, name)
		b = appendTrace(b, trace)
		b, err := codec.Append(b, msg)
		if err != nil {
			return b, fmt.Errorf("encode %T: %w", msg, err)
		}
		return b, nil
	})
}

func (p *peer) signal(to string, s actor.Signal, from string) error {
	return p.queue(kindSignal, to, func(b []byte) ([]byte, error) {
		return appendStr(append(b, byte(s)), from), nil
	})
}

func (p *peer) terminated(watcher, path string, reason byte) error {
	return p.queue(kindTerminated, watcher, func(b []byte) ([]byte, error) {
		return append(appendStr(b, path), reason), nil
	})
}

func (p *peer) fail(ask string, reason byte, text string) error {
	return p.queue(kindFail, ask, func(b []byte) ([]byte, error) {
		return appendStr(append(b, reason), text), nil
	})
}

// flusher publishes p's batches: whatever was queued while it published
// the last one goes out as the next, so a busy destination gets many
// frames per NATS message and an idle one is sent each frame at once.
func (p *peer) flusher() {
	defer p.n.wg.Done()
	for {
		select {
		case <-p.wakeup:
			p.flush()
		case <-p.gone:
			return
		case <-p.n.stop:
			p.flush()
			return
		}
	}
}

func (p *peer) flush() {
	n := p.n
	p.mu.Lock()
	buf := p.buf
	if p.closed || len(buf) == len(n.header) {
		p.signaled = false
		p.mu.Unlock()
		return
	}
	if p.spare == nil {
		p.spare = make([]byte, 0, cap(buf))
	}
	p.buf = append(p.spare[:0], n.header...)
	p.signaled = false
	p.mu.Unlock()
	n.publish(p, buf)
	p.spare = buf
}

// publish sends batch to p, cut at frame boundaries into NATS messages of
// at most maxBatch bytes; what fails to go out goes to dead letters.
func (n *Node) publish(p *peer, batch []byte) {
	if len(batch) <= n.maxBatch {
		n.publishOne(p, batch)
		return
	}
	chunk := append([]byte(nil), n.header...)
	r := reader{b: batch[len(n.header):]}
	for len(r.b) > 0 {
		start := r.b
		var f frame
		if !r.next(&f) {
			break // cannot happen: this node wrote it
		}
		raw := start[:len(start)-len(r.b)]
		if len(chunk) > len(n.header) && len(chunk)+len(raw) > n.maxBatch {
			n.publishOne(p, chunk)
			chunk = append(chunk[:0], n.header...)
		}
		chunk = append(chunk, raw...)
	}
	if len(chunk) > len(n.header) {
		n.publishOne(p, chunk)
	}
}

func (n *Node) publishOne(p *peer, batch []byte) {
	if err := n.nc.Publish(p.subject, batch); err != nil {
		n.undeliverable(p, batch, fmt.Errorf("publish to %s: %w", p.name, err))
		return
	}
	n.batchesOut.Add(1)
}

// undeliverable sends the messages of a batch for p that did not go out to
// dead letters with reason, and fails the Asks among them.
func (n *Node) undeliverable(p *peer, batch []byte, reason error) {
	r := reader{b: batch[len(n.header):]}
	var f frame
	for r.next(&f) {
		if f.kind != kindTell {
			continue
		}
		msg, err := n.codecs.decode(f.typeName, f.payload)
		if err != nil {
			msg = err
		}
		if strings.HasPrefix(string(f.senderPath), askPrefix) && len(f.senderNode) == 0 {
			n.answer(f.senderPath, askFailure{fmt.Errorf("%w: %w", actor.ErrStopped, reason)})
			continue
		}
		n.sys.Undelivered(actor.DeadLetter{
			Recipient: p.proxy(string(f.to)).ref,
			Sender:    n.resolveSlow(p, f.senderNode, f.senderPath),
			Message:   msg,
			Reason:    reason,
		})
	}
}

// resolveSlow returns the sender a frame names, off the inbound goroutine.
func (n *Node) resolveSlow(p *peer, node, path []byte) actor.Ref {
	switch {
	case len(path) == 0:
		return actor.Ref{}
	case len(node) == 0 || string(node) == n.name:
		r, _ := n.sys.Lookup(string(path))
		return r
	}
	if q := n.peerNamed(string(node)); q != nil {
		return q.proxy(string(path)).ref
	}
	return actor.Ref{}
}
