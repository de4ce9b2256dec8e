package todoapp

import (
	"errors"
	"fmt"
)

// A State selects todos by their completed flag.
type State string

// The states List accepts. The zero State means StateAll.
const (
	StateAll       State = "all"
	StateActive    State = "active"
	StateCompleted State = "completed"
)

// ErrBadState is returned for a state other than all, active or completed.
var ErrBadState = errors.New("bad state")

// ParseState parses the ?state= query value. The empty string means
// StateAll; anything else but "all", "active" or "completed" is an error
// wrapping ErrBadState that quotes the value.
func ParseState(s string) (State, error) {
	switch State(s) {
	case "", StateAll:
		return StateAll, nil
	case StateActive, StateCompleted:
		return State(s), nil
	}
	return "", badState(s)
}

func badState(s string) error {
	return fmt.Errorf("%w %q: want all, active or completed", ErrBadState, s)
}
