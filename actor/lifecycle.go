package actor

import (
	"context"
	"fmt"
	"runtime/debug"
)

// receiveSignal hands a lifecycle signal to the behaviour. A panic there is
// a failure like any other (it reaches process's recover).
func (c *cell) receiveSignal(sig any) {
	c.ctx.sender, c.ctx.msg = nil, sig
	c.actor.Receive(&c.ctx, sig)
	c.ctx.msg = nil
}

// signalQuietly hands a signal to a behaviour that is going away: a panic is
// logged, not supervised.
func (c *cell) signalQuietly(sig any) {
	if c.actor == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			c.sys.logger.Error("actor: panic in lifecycle signal", "actor", c.path,
				"signal", fmt.Sprintf("%T", sig), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	c.receiveSignal(sig)
}

func (c *cell) childCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.children)
}

// stopChildren kills every child; each reports its end with childStoppedMsg.
func (c *cell) stopChildren() {
	c.mu.Lock()
	kids := make([]*cell, 0, len(c.children))
	for _, k := range c.children {
		kids = append(kids, k)
	}
	c.mu.Unlock()
	for _, k := range kids {
		k.sendSystem(killMsg{})
	}
}

func (c *cell) childrenGone() {
	switch {
	case c.state == stopping:
		c.finish()
	case c.restarting:
		c.tryRestart()
	}
}

// beginStop starts stopping: the behaviour hears Stopping, the children
// stop, and the actor finishes once they have.
func (c *cell) beginStop() {
	if c.state != alive {
		return
	}
	c.state = stopping
	c.lifecycle.Store(stopping)
	if c.timer != nil {
		c.timer()
		c.timer = nil
	}
	c.restarting = false
	c.signalQuietly(Stopping{})
	if c.childCount() == 0 {
		c.finish()
		return
	}
	c.stopChildren()
}

// finish ends the actor: Stopped, watchers and parent told, the name freed,
// and what is left in the mailbox sent to dead letters by the turn.
func (c *cell) finish() {
	c.signalQuietly(Stopped{})
	c.actor = nil
	c.state = dead
	c.lifecycle.Store(dead)
	if c.ownDisp {
		// Before unregister, so that a Shutdown waiting for the last actor
		// also waits for this.
		c.sys.retire(c.disp)
	}
	// What is queued goes to dead letters before Done is closed; what comes
	// later, in later turns.
	for c.deadLetterNext() {
	}
	if c.parent == c.sys.guardian {
		c.sys.guardian.mu.Lock()
		if c.sys.guardian.children[c.name] == c {
			delete(c.sys.guardian.children, c.name)
		}
		c.sys.guardian.mu.Unlock()
	}
	c.sys.unregister(c)
	// Watchers and the parent hear of the end only once the name is free:
	// a parent that finishes on this news, and whoever waits on it, must
	// find the child gone from Lookup.
	for w := range c.watchers {
		w.tell(context.Background(), context.Background(), Terminated{Actor: Ref{c}}, c, c)
	}
	c.watchers = nil
	if c.parent != c.sys.guardian {
		c.parent.sendSystem(childStoppedMsg{child: c})
	}
	close(c.done)
}
