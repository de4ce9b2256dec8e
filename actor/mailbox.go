package actor

import (
	"context"
	"errors"
	"fmt"
)

// tell queues msg from sender, with the sender's context carry, and wakes
// the mailbox. turn, if not nil, is the actor whose turn is sending: its
// node list serves, and the wake waits until its Receive returns (see
// woken). It returns an error only for a bounded mailbox: a full one's Fail,
// or ctx's end while waiting for room.
func (c *cell) tell(ctx, carry context.Context, msg any, sender, turn *cell) error {
	if c.remote != nil {
		// The receiving process traces it: carry travels with it.
		if err := c.remote.Send(carry, msg, Ref{sender}); err != nil {
			c.sys.deadLetter(c, msg, sender, err)
			return err
		}
		return nil
	}
	if c.future != nil {
		if !c.future.deliver(msg) {
			c.sys.deadLetter(c, msg, sender, errAnswered)
		}
		return nil
	}
	if c.capacity > 0 {
		if err := c.reserve(ctx, msg, sender); err != nil {
			return err
		}
	}
	if t := c.sys.tracer; t != nil {
		carry = t.Send(carry, c.envelope(msg, sender))
	}
	if turn == nil {
		c.user.push(msg, sender, carry, nil)
		c.wake()
		return nil
	}
	c.user.push(msg, sender, carry, turn.free)
	if c.status.Load() == idle && c.status.CompareAndSwap(idle, scheduled) {
		turn.woken = append(turn.woken, c)
	}
	return nil
}

// scheduleWoken hands the mailboxes woken during a Receive to their
// dispatchers. Waking them when the Receive returns rather than at each Tell
// keeps the executor's Go off the deep stack of the behaviour's code (a new
// goroutine's stack would grow and be copied on every turn of the virtual
// dispatcher), and lets a batch sent in one Receive be handled in one turn.
// During a turn (inTurn), the first of them that the dispatcher lets the
// turn hold (dispatcher.hold) becomes the turn's handoff instead: its
// goroutine runs it next, unless a worker that comes free takes it first.
func (c *cell) scheduleWoken(inTurn bool) {
	for i, w := range c.woken {
		c.woken[i] = nil
		if inTurn && c.handoff == nil && w.disp == c.disp {
			if slot, ok := c.disp.hold(c.slot, w); ok {
				c.handoff, c.slot = w, slot
				continue
			}
		}
		w.disp.schedule(w)
	}
	c.woken = c.woken[:0]
}

// errAnswered marks a second reply to an Ask.
var errAnswered = errors.New("actor: ask already answered")

// errDropped marks a message DropNewest sent to dead letters.
var errDropped = fmt.Errorf("%w: dropped", ErrMailboxFull)

// reserve takes room for one message in a bounded mailbox.
func (c *cell) reserve(ctx context.Context, msg any, sender *cell) error {
	for {
		if c.size.Add(1) <= c.capacity {
			return nil
		}
		c.size.Add(-1)
		switch c.overflow {
		case DropNewest:
			c.sys.deadLetter(c, msg, sender, errDropped)
			return errDropped
		case Fail:
			err := fmt.Errorf("send to %s: %w (capacity %d)", c.path, ErrMailboxFull, c.capacity)
			c.sys.deadLetter(c, msg, sender, err)
			return err
		}
		// Wait: count ourselves as waiting, then look again, so that a
		// message taken meanwhile sees us and leaves a hint.
		c.waiters.Add(1)
		if c.size.Add(1) <= c.capacity {
			c.waiters.Add(-1)
			return nil
		}
		c.size.Add(-1)
		select {
		case <-c.room:
			c.waiters.Add(-1)
		case <-ctx.Done():
			c.waiters.Add(-1)
			return fmt.Errorf("send to %s: %w", c.path, ctx.Err())
		}
	}
}

// taken frees the room of a message taken from a bounded mailbox.
func (c *cell) taken() {
	c.size.Add(-1)
	if c.waiters.Load() > 0 {
		select {
		case c.room <- struct{}{}:
		default:
		}
	}
}

// sendSystem queues a system message and wakes the mailbox.
func (c *cell) sendSystem(msg any) {
	c.system.push(msg, nil, nil, nil)
	c.wake()
}

// wake schedules a turn if the mailbox is idle.
func (c *cell) wake() {
	if c.status.Load() == idle && c.status.CompareAndSwap(idle, scheduled) {
		c.disp.schedule(c)
	}
}
