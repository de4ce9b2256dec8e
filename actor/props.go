package actor

import (
	"math"
	"time"
)

// Props say how to spawn an actor. Only New is required.
type Props struct {
	// New returns a fresh behaviour: called once at spawn and once for every
	// restart. Spawn returns ErrInvalidProps if it is nil.
	New func() Actor
	// Name is the actor's name among its siblings: not empty once given, no
	// '/', not starting with '$'. "" gives a generated name ("$1", "$2", …).
	Name string
	// Dispatcher names the dispatcher that runs the actor's mailbox; ""
	// means DefaultDispatcher.
	Dispatcher string
	// Mailbox bounds the actor's queue of messages; the zero value is an
	// unbounded mailbox.
	Mailbox Mailbox
	// Supervisor decides what happens when Receive panics; the zero value
	// stops the actor (Akka typed's default).
	Supervisor Supervisor
}

// Mailbox configures an actor's queue of user messages. System messages
// (stop, watch, a child's end) have their own queue, are never bounded, and
// are handled before the user messages waiting.
type Mailbox struct {
	// Capacity is the most user messages queued at once; 0 means unbounded.
	Capacity int
	// Overflow says what a message to a full mailbox does; the zero value is
	// Wait.
	Overflow Overflow
}

// Overflow is what a message to a full bounded mailbox does.
type Overflow int

const (
	// Wait makes Tell wait for room, and Send wait until room or its
	// context's end.
	Wait Overflow = iota
	// DropNewest sends the new message to dead letters; Send returns nil.
	DropNewest
	// Fail makes Send return an error wrapping ErrMailboxFull and naming the
	// actor; a Tell's message goes to dead letters with that error.
	Fail
)

// Directive is a Supervisor's decision about a failed actor.
type Directive int

const (
	// Stop stops the actor; its queued messages go to dead letters.
	Stop Directive = iota + 1
	// Restart replaces the behaviour with a fresh one from Props.New, once
	// the actor's children have stopped; the mailbox and its messages are
	// kept. The message that failed is not retried.
	Restart
	// Resume keeps the behaviour and its state and goes on with the next
	// message; the one that failed is dropped.
	Resume
	// Escalate stops the actor and fails its parent with an
	// *EscalatedError, for the parent's Supervisor to decide about. A
	// top-level actor's escalation only stops it.
	Escalate
)

func (d Directive) String() string {
	switch d {
	case Stop:
		return "stop"
	case Restart:
		return "restart"
	case Resume:
		return "resume"
	case Escalate:
		return "escalate"
	}
	return "Directive(?)"
}

// Supervisor decides what happens to an actor whose Receive panics (Akka
// typed's supervision). The zero value stops the actor.
type Supervisor struct {
	// Decide maps what Receive panicked with to a directive; nil means Stop
	// for every failure. Always(Restart) restarts on every failure.
	Decide func(reason any) Directive
	// MaxRestarts, when positive, is the most restarts allowed within
	// Within: the failure that would be restart number MaxRestarts+1 stops
	// the actor instead. 0 means no limit.
	MaxRestarts int
	// Within is the window MaxRestarts counts in; 0 means the actor's whole
	// life.
	Within time.Duration
	// Backoff delays restarts; the zero value restarts at once.
	Backoff Backoff
}

// Always returns a Decide function that answers d for every failure.
func Always(d Directive) func(reason any) Directive {
	return func(any) Directive { return d }
}

// Backoff delays restart number n (counted from 0 within the Supervisor's
// window) by Min·2ⁿ, at most Max, then stretches it by a random factor in
// [1, 1+RandomFactor), so that actors failing together do not restart
// together. While it waits the actor handles system messages (it can be
// stopped) but no user message.
type Backoff struct {
	Min, Max     time.Duration // Min 0: no backoff; Max 0: no cap
	RandomFactor float64       // 0: no randomness
}

// delay returns the wait before restart number n, with random in [0, 1).
func (b Backoff) delay(n int, random float64) time.Duration {
	if b.Min <= 0 {
		return 0
	}
	d := b.Min
	for i := 0; i < n; i++ {
		if b.Max > 0 && d >= b.Max {
			break
		}
		if d > time.Duration(1<<62)/2 {
			break // doubling again would overflow
		}
		d *= 2
	}
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	if b.RandomFactor > 0 {
		f := float64(d) * (1 + random*b.RandomFactor)
		if f >= math.MaxInt64 {
			return math.MaxInt64
		}
		d = time.Duration(f)
	}
	return d
}
