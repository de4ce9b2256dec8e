package actor

import (
	"context"
	"sync"
	"sync/atomic"
)

// A node carries one message through a queue.
type node struct {
	next   atomic.Pointer[node]
	msg    any
	sender *cell
	ctx    context.Context // the sender's, as the Tracer returned it; nil for none
}

// nodes recycles queue nodes: a node leaves the queue when its message is
// taken and comes back for the next message, so that a mailbox in its steady
// state allocates nothing per message (a pointer message in an interface is
// itself no allocation).
var nodes = sync.Pool{New: func() any { return new(node) }}

// queue is an unbounded multi-producer single-consumer FIFO queue (Dmitry
// Vyukov's intrusive MPSC design): a producer swaps itself in as the tail and
// then links the previous tail to it, an atomic exchange and an atomic
// store per message; the consumer follows the links from a stub node with
// atomic loads and no atomic write (each is a full fence on amd64, and one
// fewer per message was 20-30% of the echo benchmark's cost).
//
// Messages pushed by one goroutine are taken in the order it pushed them.
// Between a producer's exchange and its link the queue looks empty from that
// node on; the producer schedules the mailbox after linking, so nothing waits
// unseen.
type queue struct {
	head *node // consumer only: the stub; head.next is the oldest message
	_    [56]byte
	tail atomic.Pointer[node]
	_    [56]byte
}

func (q *queue) init() {
	stub := new(node)
	q.head = stub
	q.tail.Store(stub)
}

// push adds msg with its sender's context at the tail, taking a node from
// free if it holds one, else from the shared pool. Safe for concurrent use.
func (q *queue) push(msg any, sender *cell, ctx context.Context, free *freeList) {
	var n *node
	if free != nil {
		n = free.get()
	}
	if n == nil {
		n = nodes.Get().(*node)
	}
	n.msg, n.sender, n.ctx = msg, sender, ctx
	prev := q.tail.Swap(n)
	prev.next.Store(n)
}

// pop takes the oldest message, giving its node to free if there is room
// there, else back to the shared pool. Only the consumer may call it.
func (q *queue) pop(free *freeList) (msg any, sender *cell, ctx context.Context, ok bool) {
	old := q.head
	next := old.next.Load()
	if next == nil {
		return nil, nil, nil, false
	}
	// next becomes the stub: its message leaves with the caller.
	msg, sender, ctx = next.msg, next.sender, next.ctx
	next.msg, next.sender, next.ctx = nil, nil, nil
	q.head = next
	// No producer refers to old any more: the one that linked it to next
	// did so as its last use, before the Load above. So a plain write
	// clears the link, which costs an atomic store's fence less per message.
	old.next = atomic.Pointer[node]{}
	if free == nil || !free.put(old) {
		nodes.Put(old)
	}
	return msg, sender, ctx, true
}

// empty reports whether the queue has no linked message. Only the consumer
// may call it; a push in progress may not be linked yet (see pushedAfter).
func (q *queue) empty() bool {
	return q.head.next.Load() == nil
}

// pushedAfter reports whether a message has been pushed, or is being
// pushed, since stub was the consumer's head with nothing after it (or the
// queue still holds a message after stub). Anyone may call it: it reads the
// tail, never a node. A message pushed but not yet linked counts (see
// cell.linked).
func (q *queue) pushedAfter(stub *node) bool {
	return q.tail.Load() != stub
}

// freeSize is how many nodes an actor keeps for the messages it sends from
// its own turns.
const freeSize = 64

// freeList holds nodes an actor took messages from, for the messages it
// sends during its turns: an actor that answers what it receives (an echo)
// then moves nodes between two mailboxes without the shared pool. Only the
// actor's turn uses it, and turns never overlap.
type freeList struct {
	n     int
	nodes [freeSize]*node
}

func (f *freeList) get() *node {
	if f.n == 0 {
		return nil
	}
	f.n--
	n := f.nodes[f.n]
	f.nodes[f.n] = nil
	return n
}

func (f *freeList) put(n *node) bool {
	if f.n == freeSize {
		return false
	}
	f.nodes[f.n] = n
	f.n++
	return true
}
