package actor

import "fmt"

// An Actor is a behaviour: it receives the messages sent to its actor, one
// at a time, and the lifecycle signals (Started, Stopping, Stopped,
// Restarting). Receive is never called concurrently for one actor, so the
// actor's own fields need no lock; a panic in Receive is a failure that the
// actor's Supervisor decides about.
type Actor interface {
	Receive(c *Context, msg any)
}

// ReceiveFunc adapts a function to Actor.
type ReceiveFunc func(c *Context, msg any)

// Receive calls f(c, msg).
func (f ReceiveFunc) Receive(c *Context, msg any) { f(c, msg) }

var _ Actor = ReceiveFunc(nil)

// Started is the first message an actor receives, before any message sent to
// it, and the first a restarted actor's fresh behaviour receives.
type Started struct{}

// Stopping is received when the actor begins to stop, before its children
// are stopped.
type Stopping struct{}

// Stopped is the last message an actor receives, once its children have
// stopped.
type Stopped struct{}

// Restarting is received by the failed behaviour before a fresh one replaces
// it. Reason is what the failed Receive panicked with.
type Restarting struct{ Reason any }

// Terminated is received by an actor that watches another (Context.Watch)
// when that one has stopped, after every message it sent before stopping.
// Reason is nil when the actor stopped; for a remote actor whose node left
// or became unreachable, it says so (package actor/remote's errors).
type Terminated struct {
	Actor  Ref
	Reason error
}

// EscalatedError is the failure a parent receives when a child's Supervisor
// says Escalate: the parent's own Supervisor then decides about the parent.
type EscalatedError struct {
	Child  string // the child's path
	Reason any    // what the child panicked with
}

func (e *EscalatedError) Error() string {
	return fmt.Sprintf("actor: %s failed: %v", e.Child, e.Reason)
}

// Unwrap returns the child's reason if it is an error.
func (e *EscalatedError) Unwrap() error {
	err, _ := e.Reason.(error)
	return err
}
