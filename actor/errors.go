package actor

import "errors"

var (
	// ErrStopped is returned by Send and Ask when the actor has stopped, or
	// stops before it answers.
	ErrStopped = errors.New("actor: stopped")
	// ErrMailboxFull is returned by Send when a bounded mailbox with the Fail
	// policy has no room.
	ErrMailboxFull = errors.New("actor: mailbox full")
	// ErrDuplicateName is returned by Spawn when a sibling has the name.
	ErrDuplicateName = errors.New("actor: name taken")
	// ErrInvalidProps is returned by Spawn for props it cannot use: no
	// behaviour, a bad name, an unknown dispatcher.
	ErrInvalidProps = errors.New("actor: invalid props")
	// ErrShutdown is returned by Spawn once System.Shutdown has begun.
	ErrShutdown = errors.New("actor: system shut down")
	// ErrNotFound is returned by Lookup for a path with no live actor.
	ErrNotFound = errors.New("actor: no actor at path")
	// ErrUnexpectedReply is returned by Ask when the reply is not of the
	// type asked for.
	ErrUnexpectedReply = errors.New("actor: unexpected reply type")
)
