package actor

import (
	"context"
	"fmt"
)

// Remote is an actor in another process, as a transport represents it
// (package actor/remote carries messages over NATS). System.RemoteRef wraps
// one in a Ref, on which Tell, Send, Ask, Stop, Kill, Done and
// Context.Watch work as they do on a local actor. Implementations are safe
// for concurrent use and never block on the network.
type Remote interface {
	// Node names the process the actor lives in.
	Node() string
	// Send sends msg with sender (the zero Ref: none). ctx is the
	// sender's context, whose trace the transport carries
	// (System.InjectContext): the receiving process traces the message.
	// An error means msg did not leave; the caller sends it to dead
	// letters with that reason.
	Send(ctx context.Context, msg any, sender Ref) error
	// Ask sends msg and waits for the reply, ctx's end, or news that the
	// actor or its node is gone.
	Ask(ctx context.Context, msg any) (any, error)
	// Signal delivers a stop, kill, watch or unwatch from from.
	Signal(s Signal, from Ref)
	// Done is closed once this process knows the actor has stopped.
	Done() <-chan struct{}
}

// Signal is what Ref.Signal delivers besides messages.
type Signal int

const (
	// SignalStop is Ref.Stop.
	SignalStop Signal = iota + 1
	// SignalKill is Ref.Kill.
	SignalKill
	// SignalWatch is Context.Watch by the signal's sender.
	SignalWatch
	// SignalUnwatch is Context.Unwatch by the signal's sender.
	SignalUnwatch
)

// RemoteRef returns a Ref to the actor r represents, at path on r.Node().
// Transports call it once per remote actor and keep the Ref: two Refs are
// equal only when RemoteRef made them in one call.
func (s *System) RemoteRef(path string, r Remote) Ref {
	return Ref{&cell{sys: s, path: path, name: path + "@" + r.Node(), remote: r}}
}

// Remote returns the Remote r refers to, nil for a local actor or the zero
// Ref.
func (r Ref) Remote() Remote {
	if r.c == nil {
		return nil
	}
	return r.c.remote
}

// TellFrom is Tell with sender as the message's sender and ctx as the
// context it was sent with (Context.Context, through the Tracer), for
// transports that deliver what a remote actor sent: a reply goes back
// through sender, and ctx is what System.ExtractContext returned.
func (r Ref) TellFrom(ctx context.Context, msg any, sender Ref) {
	if r.c == nil {
		return
	}
	_ = r.c.tell(context.Background(), ctx, msg, sender.c, nil)
}

// Signal delivers s from from: SignalStop and SignalKill are Stop and Kill;
// SignalWatch and SignalUnwatch are Context.Watch and Context.Unwatch by
// from, which must not be the zero Ref. Transports use it for what remote
// actors signal.
func (r Ref) Signal(s Signal, from Ref) {
	if r.c == nil || r.c.future != nil {
		return
	}
	if r.c.remote != nil {
		r.c.remote.Signal(s, from)
		return
	}
	switch s {
	case SignalStop:
		r.Stop()
	case SignalKill:
		r.Kill()
	case SignalWatch, SignalUnwatch:
		if from.c == nil {
			panic(fmt.Sprintf("loom: watch of %s by the zero Ref", r.c.path))
		}
		if s == SignalWatch {
			r.c.sendSystem(watchMsg{watcher: from.c})
		} else {
			r.c.sendSystem(unwatchMsg{watcher: from.c})
		}
	}
}

// Undelivered counts d as a dead letter and hands it to the subscribers
// (SubscribeDeadLetters), for transports that find a message undeliverable
// after it left its sender. A nil Reason is ErrStopped.
func (s *System) Undelivered(d DeadLetter) {
	s.deadLetter(d.Recipient.c, d.Message, d.Sender.c, d.Reason)
}
