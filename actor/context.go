package actor

import (
	"context"
	"fmt"
)

// Context is what Receive gets besides the message: the actor's own
// reference, the sender, and the means to send, reply, spawn and watch. It
// is valid only during the Receive call it was passed to, and only on that
// goroutine.
type Context struct {
	cell   *cell
	sender *cell
	msg    any
	mctx   context.Context // the message's context; nil for a signal
}

// Context returns the context the message being received was sent with:
// Send's or Ask's context (its deadline and values), the sending Receive's
// for a message sent from an actor, as the System's Tracer passed it on.
// For Ref.Tell and for lifecycle signals it is context.Background.
func (x *Context) Context() context.Context {
	if x.mctx == nil {
		return context.Background()
	}
	return x.mctx
}

// Self returns the actor's own reference.
func (x *Context) Self() Ref { return Ref{x.cell} }

// Sender returns the reference of the actor that sent the message being
// received, or the zero Ref if it was sent with Ref.Tell from outside an
// actor. A reply to an Ask's sender completes the Ask.
func (x *Context) Sender() Ref { return Ref{x.sender} }

// Parent returns the actor's parent; the zero Ref for a top-level actor.
func (x *Context) Parent() Ref {
	if x.cell.parent == x.cell.sys.guardian {
		return Ref{}
	}
	return Ref{x.cell.parent}
}

// System returns the actor's system.
func (x *Context) System() *System { return x.cell.sys }

// Tell sends msg to to, with this actor as the sender; like Ref.Tell it
// waits only for room in a bounded mailbox with the Wait policy.
func (x *Context) Tell(to Ref, msg any) {
	if to.c == nil {
		x.cell.sys.deadLetter(nil, msg, x.cell, ErrStopped)
		return
	}
	// An error means tell sent msg to dead letters: nothing is left to do.
	_ = to.c.tell(context.Background(), x.Context(), msg, x.cell, x.cell)
}

// Respond sends msg to the sender of the message being received; with no
// sender, msg goes to dead letters.
func (x *Context) Respond(msg any) { x.Tell(Ref{x.sender}, msg) }

// Forward sends the message being received to to, keeping its sender, so
// that to's reply goes where this actor's would have gone.
func (x *Context) Forward(to Ref) {
	if to.c == nil {
		x.cell.sys.deadLetter(nil, x.msg, x.sender, ErrStopped)
		return
	}
	_ = to.c.tell(context.Background(), x.Context(), x.msg, x.sender, x.cell)
}

// Spawn starts a child of this actor; see System.Spawn. A child's path is
// its parent's path, '/', and its name.
func (x *Context) Spawn(p Props) (Ref, error) { return x.cell.sys.spawn(x.cell, p) }

// Children returns the actor's children that have not stopped, in no
// particular order.
func (x *Context) Children() []Ref {
	c := x.cell
	c.mu.Lock()
	defer c.mu.Unlock()
	kids := make([]Ref, 0, len(c.children))
	for _, k := range c.children {
		kids = append(kids, Ref{k})
	}
	return kids
}

// Watch asks for a Terminated message when r stops; at once if it already
// has. Watching an actor twice gives one Terminated.
func (x *Context) Watch(r Ref) {
	if r.c == nil || r.c.future != nil {
		panic(fmt.Sprintf("loom: actor %s watches %v, which is not an actor", x.cell.path, r))
	}
	if r.c.remote != nil {
		r.c.remote.Signal(SignalWatch, Ref{x.cell})
		return
	}
	r.c.sendSystem(watchMsg{watcher: x.cell})
}

// Unwatch cancels Watch; a Terminated already queued is still delivered.
func (x *Context) Unwatch(r Ref) {
	if r.c == nil || r.c.future != nil {
		return
	}
	if r.c.remote != nil {
		r.c.remote.Signal(SignalUnwatch, Ref{x.cell})
		return
	}
	r.c.sendSystem(unwatchMsg{watcher: x.cell})
}
