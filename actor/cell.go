package actor

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomrt/loom"
)

// A mailbox's status: idle, or handed to its dispatcher for a turn. Only
// the goroutine that moves it from idle to scheduled may run the turn.
const (
	idle int32 = iota
	scheduled
)

// An actor's lifecycle, as others see it.
const (
	alive int32 = iota
	stopping
	dead
)

// cell is one actor: its mailbox and, during turns, its behaviour.
type cell struct {
	sys    *System
	parent *cell
	name   string
	path   string
	future *future // an Ask's reply address; nil for actors
	remote Remote  // an actor in another process (RemoteRef); nil for local ones

	newActor   func() Actor
	supervisor Supervisor
	disp       *dispatcher
	ownDisp    bool // the dispatcher is the actor's own (PerActor)
	turnTask   loom.Task
	turnCtx    context.Context // what turns are submitted with: carries dropped, made once
	turnFunc   func()          // turn, made once
	nextReady  *cell           // the dispatcher's ready list, under its lock
	done       chan struct{}
	lifecycle  atomic.Int32

	// The user queue's bound; capacity 0 means unbounded.
	capacity int64
	overflow Overflow
	size     atomic.Int64
	waiters  atomic.Int32
	room     chan struct{}

	mu       sync.Mutex
	children map[string]*cell // under mu
	anon     int              // under mu: the last generated name

	_      [64]byte
	status atomic.Int32
	_      [64]byte
	user   queue
	system queue

	// What follows belongs to the turns, which never overlap.
	actor      Actor
	ctx        Context
	free       *freeList // a local actor's; nil for a remote actor or an Ask's reply address
	budget     int
	state      int32 // alive, stopping or dead, as lifecycle; see suspended
	suspended  bool  // a restart waits: no user message runs
	restarting bool  // a restart waits for children and backoff
	timer      func() bool
	restarts   []time.Time
	watchers   map[*cell]struct{}
	woken      []*cell // mailboxes this turn woke, to schedule when Receive returns
	handoff    *cell   // a mailbox this turn woke and holds, to run next (see dispatcher.hold)
	slot       int     // the held slot this turn tries first; where handoff is held
}

// System messages.
type (
	startMsg        struct{}
	killMsg         struct{}
	watchMsg        struct{ watcher *cell }
	unwatchMsg      struct{ watcher *cell }
	childStoppedMsg struct{ child *cell }
	childFailedMsg  struct {
		child  *cell
		reason any
	}
	restartMsg struct{}
	poison     struct{}
)

// poisonPill is the user message Stop queues.
var poisonPill = &poison{}

// turn handles messages until the budget is spent or nothing is left, then
// goes idle, unless a message came meanwhile. It returns the mailbox the
// turn held (see dispatcher.hold) and got back, whose turn the caller must
// run or schedule; nil if none.
func (c *cell) turn() (next *cell) {
	c.budget = c.disp.throughput
	for c.process() {
		// A message failed; the supervisor has decided. Go on.
	}
	// Taken before release: once the mailbox is idle, another turn of it
	// may start on another goroutine.
	if c.handoff != nil {
		next = c.disp.unhold(c.slot, c.handoff)
		c.handoff = nil
	}
	c.release()
	return next
}

// release sets the mailbox idle and schedules it again if a message is
// waiting that the turn may handle.
func (c *cell) release() {
	c.releaseFrom(c.userHeld(), c.user.head, c.system.head)
}

// userHeld reports whether user messages wait (the actor stops, or a restart
// waits). Only the mailbox's holder may call it.
func (c *cell) userHeld() bool {
	return c.state == stopping || (c.state == alive && c.suspended)
}

// releaseFrom is release for a turn that saw the queues' heads user and
// system, and userHeld. Once the status is idle another turn may start at
// once, so what it reads afterwards it took before: the stub nodes, which it
// compares with the queues' tails (it never reads a node, which that turn may
// take and reuse). A message pushed after the turn looked is the turn's to
// schedule: it takes the mailbox back and schedules it once the message is
// linked (see linked); if a turn that ran meanwhile took every message,
// nothing is left to wait for, and it lets the mailbox go again.
func (c *cell) releaseFrom(userHeld bool, user, system *node) {
	for {
		c.status.Store(idle)
		if !c.system.pushedAfter(system) && (userHeld || !c.user.pushedAfter(user)) {
			return // a message pushed from now on is the sender's to schedule
		}
		if !c.status.CompareAndSwap(idle, scheduled) {
			return // its sender scheduled it
		}
		// Held again; a turn may have run meanwhile and changed what it
		// may handle.
		userHeld = c.userHeld()
		if c.linked(userHeld) {
			c.disp.schedule(c)
			return
		}
		user, system = c.user.head, c.system.head
	}
}

// linked waits, for the mailbox's holder, until a message it may handle is
// linked (true), or until nothing is on its way in (false): a message
// pushed but not yet linked is waited for, as its producer links it right
// after pushing it. Scheduling a turn before the link would have it find
// nothing, go idle, see the push again and schedule another, for as long as
// the producer is descheduled.
func (c *cell) linked(userHeld bool) bool {
	for {
		if !c.system.empty() || (!userHeld && !c.user.empty()) {
			return true
		}
		if !c.system.pushedAfter(c.system.head) && (userHeld || !c.user.pushedAfter(c.user.head)) {
			return false
		}
		runtime.Gosched()
	}
}

// process runs the turn's messages and returns true after a failure, which
// it has handed to the supervisor.
func (c *cell) process() (failed bool) {
	defer func() {
		if v := recover(); v != nil {
			if c.ctx.mctx != nil && c.sys.tracer != nil {
				c.sys.tracer.Done(c.ctx.mctx, c.envelope(c.ctx.msg, c.ctx.sender), v)
			}
			c.ctx.sender, c.ctx.msg, c.ctx.mctx = nil, nil, nil
			c.fail(v, debug.Stack())
			failed = true
		}
		// Whatever happened, a mailbox this turn woke must run.
		c.scheduleWoken(true)
	}()
	for c.budget > 0 {
		if m, _, _, ok := c.system.pop(c.free); ok {
			c.handleSystem(m)
			if len(c.woken) != 0 {
				c.scheduleWoken(true)
			}
			continue
		}
		if c.userHeld() {
			return false
		}
		msg, sender, mctx, ok := c.user.pop(c.free)
		if !ok {
			return false
		}
		if c.capacity > 0 {
			c.taken()
		}
		if c.state == dead {
			c.undelivered(msg, sender, mctx)
			continue
		}
		c.budget--
		if msg == poisonPill {
			c.beginStop()
			continue
		}
		t := c.sys.tracer
		if t != nil {
			mctx = t.Receive(mctx, c.envelope(msg, sender))
		}
		c.ctx.sender, c.ctx.msg, c.ctx.mctx = sender, msg, mctx
		c.actor.Receive(&c.ctx, msg)
		c.ctx.sender, c.ctx.msg, c.ctx.mctx = nil, nil, nil
		if t != nil {
			t.Done(mctx, c.envelope(msg, sender), nil)
		}
		if len(c.woken) != 0 {
			c.scheduleWoken(true)
		}
	}
	return false
}

// abandon ends an actor whose dispatcher will never run it again: its
// executor dropped the turn unrun (Shutdown gave up while it was queued) or
// refused it, closed. The actor is killed, as by Kill, on the goroutine that
// found the turn dropped, which holds the turn: the behaviour hears Stopping,
// the children are killed, and once they have stopped it hears Stopped, its
// watchers and parent are told and its name is freed (see finish). User
// messages go to dead letters, and so does whatever comes later, each on the
// goroutine that finds the executor closed.
func (c *cell) abandon() {
	for again := true; again; {
		c.drainAbandoned()
		user, system := c.user.head, c.system.head
		c.status.Store(idle)
		again = (c.system.pushedAfter(system) || c.user.pushedAfter(user)) && c.status.CompareAndSwap(idle, scheduled)
		if again {
			c.linked(false) // nothing linked: the next round finds nothing and looks again
		}
	}
}

func (c *cell) drainAbandoned() {
	// A behaviour that never started hears nothing (signalQuietly).
	c.beginStop()
	for {
		for {
			m, _, _, ok := c.system.pop(c.free)
			if !ok {
				break
			}
			// Its state is stopping or dead: no Receive but the
			// signals, whose panics are logged, and no supervision.
			c.handleSystem(m)
		}
		c.scheduleWoken(false)
		if !c.deadLetterNext() {
			break
		}
	}
}

// deadLetterNext sends the next user message in the mailbox, if there is
// one, to dead letters as ErrStopped, freeing its place in a bounded
// mailbox; it reports whether there was one.
func (c *cell) deadLetterNext() bool {
	msg, sender, mctx, ok := c.user.pop(c.free)
	if !ok {
		return false
	}
	if c.capacity > 0 {
		c.taken()
	}
	c.undelivered(msg, sender, mctx)
	return true
}

// undelivered sends a message taken from the mailbox of a stopped actor to
// dead letters, and tells the Tracer it is done.
func (c *cell) undelivered(msg any, sender *cell, mctx context.Context) {
	c.sys.deadLetter(c, msg, sender, ErrStopped)
	if t := c.sys.tracer; t != nil && msg != poisonPill {
		t.Done(mctx, c.envelope(msg, sender), ErrStopped)
	}
}

func (c *cell) handleSystem(m any) {
	switch m := m.(type) {
	case startMsg:
		if c.state == alive {
			c.actor = c.behaviour()
			c.receiveSignal(Started{})
		}
	case killMsg:
		c.beginStop()
	case watchMsg:
		if c.state == dead {
			m.watcher.tell(context.Background(), context.Background(), Terminated{Actor: Ref{c}}, c, nil)
			return
		}
		if c.watchers == nil {
			c.watchers = make(map[*cell]struct{})
		}
		c.watchers[m.watcher] = struct{}{}
	case unwatchMsg:
		delete(c.watchers, m.watcher)
	case childStoppedMsg:
		c.mu.Lock()
		if c.children[m.child.name] == m.child {
			delete(c.children, m.child.name)
		}
		left := len(c.children)
		c.mu.Unlock()
		if left == 0 {
			c.childrenGone()
		}
	case childFailedMsg:
		if c.state == alive && !c.restarting {
			c.fail(&EscalatedError{Child: m.child.path, Reason: m.reason}, nil)
		}
	case restartMsg:
		c.timer = nil
		c.tryRestart()
	}
}
