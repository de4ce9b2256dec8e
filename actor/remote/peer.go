package remote

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
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
	gone    chan struct{} // closed by remove
	goneErr error         // why; set under n.mu with removed, before gone closes
	// heard is set once the node has been heard from. Until then the
	// flusher holds what is queued: nothing subscribes to a node that has
	// not joined, and a batch published there would vanish without a
	// dead letter.
	heard atomic.Bool

	// Under n.mu.
	instance  uint64 // 0 until heard from; set by heardFrom
	lastSeen  time.Time
	removed   bool
	proxies   map[string]*remoteActor
	watches   map[watchKey]*remoteActor // this node's actors watching the peer's
	inWatches map[inWatch]struct{}      // the peer's actors watching this node's

	inbound map[string]*remoteActor // the inbound goroutine's cache of proxies

	mu       sync.Mutex
	out      []outFrame // what to encode and publish next, in the order queued
	signaled bool       // the flusher has been woken for out
	closed   bool       // removed: nothing more is queued
	wakeup   chan struct{}

	// The flusher's.
	spare []outFrame
	buf   []byte
}

// outFrame is a frame queued for a peer: a Tell stores the message and
// returns, and the peer's flusher encodes it, off the sender's turn (whose
// goroutine may be young, with a small stack to grow) and out of the lock.
type outFrame struct {
	kind       byte
	signal     byte   // kindSignal
	reason     byte   // kindTerminated, kindFail
	to         string // the destination path
	senderNode string // kindTell
	senderPath string // kindTell; from of kindSignal
	text       string // the actor of kindTerminated, the text of kindFail
	msg        any
	typeName   string
	codec      Codec
	trace      carrier
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
		wakeup: make(chan struct{}, 1), inbound: make(map[string]*remoteActor),
	}
	p.heard.Store(instance != 0)
	n.peers[name] = p
	n.wg.Add(1)
	go p.flusher()
	return p
}

// heardFrom records p's incarnation, heard from for the first time, and
// wakes the flusher for what was held meanwhile; the caller holds n.mu.
func (p *peer) heardFrom(instance uint64) {
	p.instance = instance
	p.heard.Store(true)
	select {
	case p.wakeup <- struct{}{}:
	default:
	}
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
	a := &remoteActor{p: p, path: path}
	a.ref = n.sys.RemoteRef(path, a)
	switch {
	case p.removed:
		a.done = make(chan struct{})
		a.end()
	case !strings.HasPrefix(path, askPrefix):
		a.done = make(chan struct{})
		p.proxies[path] = a
	}
	return a
}

// proxyBytes is proxy for a path read from a frame, for the inbound
// goroutine only: it keeps the proxies it found in a cache of its own, so a
// known sender costs a map lookup, no lock and no allocation.
func (p *peer) proxyBytes(path []byte) *remoteActor {
	if a := p.inbound[string(path)]; a != nil && !a.ended.Load() {
		return a
	}
	a := p.proxy(string(path))
	if !strings.HasPrefix(a.path, askPrefix) {
		if len(p.inbound) >= maxLocal {
			clear(p.inbound)
		}
		p.inbound[a.path] = a
	}
	return a
}

// queue queues f for p and wakes the flusher. It returns ErrBackpressure
// past the node's bound, and the peer's end reason once it is removed.
func (p *peer) queue(f *outFrame) error {
	slot, err := p.reserve()
	if err != nil {
		return err
	}
	*slot = *f
	p.commit()
	return nil
}

// reserve locks p and returns the next frame to fill in, which commit
// queues; or an error, with p unlocked. The frame is filled in place: a
// sender's turn, often on a young goroutine, keeps no copy on its stack.
func (p *peer) reserve() (*outFrame, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, p.goneErr
	}
	if len(p.out) >= p.n.maxPending {
		p.mu.Unlock()
		return nil, p.backpressure()
	}
	p.out = append(p.out, outFrame{})
	return &p.out[len(p.out)-1], nil
}

// commit unlocks p and wakes the flusher if it is not awake already.
func (p *peer) commit() {
	wake := !p.signaled
	p.signaled = true
	p.mu.Unlock()
	if wake {
		select {
		case p.wakeup <- struct{}{}:
		default:
		}
	}
}

//go:noinline
func (p *peer) backpressure() error {
	return fmt.Errorf("%w %s: %d messages", ErrBackpressure, p.name, p.n.maxPending)
}

// tell queues a message from sender.
func (p *peer) tell(ctx context.Context, to string, msg any, sender actor.Ref) error {
	node, path := p.n.address(sender)
	return p.tellFrom(ctx, to, msg, node, path)
}

// tellFrom queues a message from the sender at path on node ("" for this
// one), with ctx's trace when the System has a Tracer.
func (p *peer) tellFrom(ctx context.Context, to string, msg any, senderNode, senderPath string) error {
	name, codec, ok := p.n.codecs.encoder(msg)
	if !ok {
		return unknownType(msg)
	}
	var trace carrier
	if p.n.sys.Tracer() != nil && ctx != nil {
		trace = injectTrace(p.n.sys, ctx)
	}
	f, err := p.reserve()
	if err != nil {
		return err
	}
	f.kind, f.to, f.msg, f.senderNode, f.senderPath, f.typeName, f.codec, f.trace =
		kindTell, to, msg, senderNode, senderPath, name, codec, trace
	p.commit()
	return nil
}

//go:noinline
func unknownType(msg any) error { return fmt.Errorf("%w: %T", ErrUnknownType, msg) }

// injectTrace returns ctx's trace as the System's Tracer writes it.
//
//go:noinline
func injectTrace(sys *actor.System, ctx context.Context) carrier {
	c := new(carrier)
	sys.InjectContext(ctx, c)
	return *c
}

func (p *peer) signal(to string, s actor.Signal, from string) error {
	return p.queue(&outFrame{kind: kindSignal, to: to, signal: byte(s), senderPath: from})
}

func (p *peer) terminated(watcher, path string, reason byte) error {
	return p.queue(&outFrame{kind: kindTerminated, to: watcher, text: path, reason: reason})
}

func (p *peer) fail(ask string, reason byte, text string) error {
	return p.queue(&outFrame{kind: kindFail, to: ask, reason: reason, text: text})
}

// encode appends f's frame to b. prev is the batch's last tell, nil if none:
// the fields f shares with it are left out.
func encode(b []byte, f, prev *outFrame) ([]byte, error) {
	b, start := beginFrame(b, f.kind)
	switch f.kind {
	case kindTell:
		var same byte
		if prev != nil {
			if f.to == prev.to {
				same |= sameTo
			}
			if f.senderNode == prev.senderNode && f.senderPath == prev.senderPath {
				same |= sameSender
			}
			if f.typeName == prev.typeName {
				same |= sameType
			}
		}
		b = append(b, same)
		if same&sameTo == 0 {
			b = appendStr(b, f.to)
		}
		if same&sameSender == 0 {
			b = appendStr(appendStr(b, f.senderNode), f.senderPath)
		}
		if same&sameType == 0 {
			b = appendStr(b, f.typeName)
		}
		b = appendTrace(b, f.trace)
		var err error
		if b, err = f.codec.Append(b, f.msg); err != nil {
			return b[:start], fmt.Errorf("encode %T: %w", f.msg, err)
		}
	case kindSignal:
		b = appendStr(append(appendStr(b, f.to), f.signal), f.senderPath)
	case kindTerminated:
		b = append(appendStr(appendStr(b, f.to), f.text), f.reason)
	case kindFail:
		b = appendStr(append(appendStr(b, f.to), f.reason), f.text)
	}
	return endFrame(b, start), nil
}

// flusher encodes and publishes p's frames: whatever was queued while it
// published the last batch goes out as the next, so a busy destination gets
// many frames per NATS message and an idle one each frame at once.
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
	if !p.heard.Load() {
		// Held until heardFrom wakes the flusher again, or remove makes
		// them dead letters.
		p.mu.Unlock()
		return
	}
	out := p.out
	p.out, p.spare = p.spare[:0], nil
	p.signaled = false
	p.mu.Unlock()
	if len(out) == 0 {
		p.spare = out
		return
	}
	if p.buf == nil {
		p.buf = make([]byte, 0, 64<<10)
	}
	b := append(p.buf[:0], n.header...)
	sent := 0          // out[:sent] are in b or published
	var prev *outFrame // the last tell in b
	for i := range out {
		f := &out[i]
		mark := len(b)
		var err error
		if b, err = encode(b, f, prev); err != nil {
			n.sys.Undelivered(actor.DeadLetter{Recipient: p.proxy(f.to).ref, Sender: n.resolveSlow(p, []byte(f.senderNode), []byte(f.senderPath)),
				Message: f.msg, Reason: err})
			continue
		}
		if len(b) > n.maxBatch && mark > len(n.header) {
			// Publish what came before this frame, then start the next
			// batch with it, whole: it may not lean on this batch's.
			n.publishOne(p, b[:mark], out[sent:i])
			b, _ = encode(append(b[:0], n.header...), f, nil)
			sent = i
		}
		if f.kind == kindTell {
			prev = f
		}
	}
	if len(b) > len(n.header) {
		n.publishOne(p, b, out[sent:])
	}
	p.buf = b
	clear(out) // the messages are no longer this node's to keep
	p.spare = out
}

func (n *Node) publishOne(p *peer, batch []byte, frames []outFrame) {
	if err := n.nc.Publish(p.subject, batch); err != nil {
		n.undeliverable(p, frames, fmt.Errorf("publish to %s: %w", p.name, err), nil)
		return
	}
	n.batchesOut.Add(1)
}

// undeliverable sends the messages among frames, which did not go out to
// p, to dead letters with reason, and fails the Asks among them. known are
// p's proxies when remove has taken them from p.
func (n *Node) undeliverable(p *peer, frames []outFrame, reason error, known map[string]*remoteActor) {
	for i := range frames {
		f := &frames[i]
		if f.kind != kindTell {
			continue
		}
		if f.senderNode == "" && strings.HasPrefix(f.senderPath, askPrefix) {
			n.answer([]byte(f.senderPath), askFailure{fmt.Errorf("%w: %w", actor.ErrStopped, reason)})
			continue
		}
		recipient := known[f.to]
		if recipient == nil {
			recipient = p.proxy(f.to)
		}
		n.sys.Undelivered(actor.DeadLetter{
			Recipient: recipient.ref,
			Sender:    n.resolveSlow(p, []byte(f.senderNode), []byte(f.senderPath)),
			Message:   f.msg,
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
