package actor

import (
	"context"
	"fmt"
)

// Ref refers to an actor. It is a pointer in a struct: cheap to copy, safe
// to share between goroutines, and comparable (two Refs are equal when they
// refer to the same actor). The zero Ref refers to no actor: what is sent to
// it goes to dead letters.
type Ref struct{ c *cell }

// Tell sends msg, with no sender, and returns without waiting for the actor,
// except for room in a bounded mailbox whose Overflow is Wait. A message
// that cannot be delivered (the actor stopped, a full mailbox dropping or
// failing) goes to dead letters. Messages from one goroutine to one actor
// arrive in the order they were sent. A pointer message costs no allocation.
func (r Ref) Tell(msg any) {
	if r.c == nil {
		return
	}
	_ = r.c.tell(context.Background(), context.Background(), msg, nil, nil)
}

// Send is Tell that reports what Tell sends to dead letters: for a bounded
// mailbox, an error wrapping ErrMailboxFull (Fail), or ctx's error when it
// ends while Send waits for room (Wait). A message to the zero Ref is
// ErrStopped. A message queued to an actor that stops before taking it goes
// to dead letters, and Send has returned nil.
func (r Ref) Send(ctx context.Context, msg any) error {
	if r.c == nil {
		return fmt.Errorf("send: %w", ErrStopped)
	}
	err := r.c.tell(ctx, ctx, msg, nil, nil)
	if err == errDropped {
		return nil
	}
	return err
}

// Ask sends msg with a reply address as its sender and waits for the first
// reply (Context.Respond), ctx's end, or the actor's end. It returns an
// error wrapping ErrStopped, naming the actor, when the actor has stopped
// or stops with msg still queued; wrapping ctx.Err() when ctx ends first.
func (r Ref) Ask(ctx context.Context, msg any) (any, error) {
	if r.c == nil {
		return nil, fmt.Errorf("ask: %w", ErrStopped)
	}
	if r.c.remote != nil {
		v, err := r.c.remote.Ask(ctx, msg)
		if err != nil {
			return nil, fmt.Errorf("ask %s: %w", r.c.name, err)
		}
		return v, nil
	}
	if r.c.lifecycle.Load() == dead {
		return nil, fmt.Errorf("ask %s: %w", r.c.path, ErrStopped)
	}
	f := &cell{sys: r.c.sys, path: r.c.path + "/$ask", future: &future{reply: make(chan any, 1)}}
	if err := r.c.tell(ctx, ctx, msg, f, nil); err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	select {
	case v := <-f.future.reply:
		if failed, ok := v.(askFailure); ok {
			return nil, fmt.Errorf("ask %s: %w", r.c.path, failed.err)
		}
		return v, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("ask %s: %w", r.c.path, ctx.Err())
	}
}

// Ask is Ref.Ask with the reply's type checked: a reply of another type is
// an error wrapping ErrUnexpectedReply that names both types.
func Ask[T any](ctx context.Context, r Ref, msg any) (T, error) {
	var zero T
	v, err := r.Ask(ctx, msg)
	if err != nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("ask %s: %w: got %T, want %T", r.Path(), ErrUnexpectedReply, v, zero)
	}
	return t, nil
}

// Stop stops the actor once it has handled the messages queued before the
// stop (Akka's PoisonPill); those queued after go to dead letters. It does
// not wait: Done tells when the actor has stopped.
func (r Ref) Stop() {
	if r.c == nil || r.c.future != nil {
		return
	}
	if r.c.remote != nil {
		r.c.remote.Signal(SignalStop, Ref{})
		return
	}
	// Past the bound of a bounded mailbox: a stop is never refused.
	c := r.c
	if c.capacity > 0 {
		c.size.Add(1)
	}
	c.user.push(poisonPill, nil, nil, nil)
	c.wake()
}

// Kill stops the actor after the message it is handling, if any: queued
// messages go to dead letters. It does not wait.
func (r Ref) Kill() {
	if r.c == nil || r.c.future != nil {
		return
	}
	if r.c.remote != nil {
		r.c.remote.Signal(SignalKill, Ref{})
		return
	}
	r.c.sendSystem(killMsg{})
}

// Done returns a channel closed when the actor has stopped: its children
// have stopped, it has received Stopped, and watchers have been told. An
// actor whose dispatcher's executor drops its turn unrun or refuses it,
// closed, is killed on the goroutine that found it so (docs/actor.md), and
// Done closes all the same. For the zero Ref, and an Ask's reply address,
// it returns a closed channel. For a remote actor it is closed once this
// process knows the actor has stopped (see Remote.Done).
func (r Ref) Done() <-chan struct{} {
	if r.c != nil && r.c.remote != nil {
		return r.c.remote.Done()
	}
	if r.c == nil || r.c.done == nil {
		return closed
	}
	return r.c.done
}

var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Path returns the actor's path ("/parent/child") on its node, "" for the
// zero Ref.
func (r Ref) Path() string {
	if r.c == nil {
		return ""
	}
	return r.c.path
}

// String returns the path, followed by "@" and the node's name for a
// remote actor, or "<none>" for the zero Ref.
func (r Ref) String() string {
	if r.c == nil {
		return "<none>"
	}
	if r.c.remote != nil {
		return r.c.name
	}
	return r.c.path
}

// IsZero reports whether r refers to no actor.
func (r Ref) IsZero() bool { return r.c == nil }

// future is the reply address of one Ask.
type future struct {
	reply chan any // room for one
}

// askFailure carries the reason an Ask's message was not handled.
type askFailure struct{ err error }

// deliver gives msg to the Ask and reports whether it was the first reply.
func (f *future) deliver(msg any) bool {
	select {
	case f.reply <- msg:
		return true
	default:
		return false
	}
}

func (f *future) fail(err error) {
	select {
	case f.reply <- askFailure{err}:
	default:
	}
}
