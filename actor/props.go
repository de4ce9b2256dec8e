package actor

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
