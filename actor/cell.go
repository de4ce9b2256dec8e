package actor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

	newActor   func() Actor
	supervisor Supervisor
	disp       *dispatcher
	ownDisp    bool // the dispatcher is the actor's own (PerActor)
	turnTask   loom.Task
	turnFunc   func() // turn, made once
	nextReady  *cell  // the dispatcher's ready list, under its lock
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
	free       freeList
	budget     int
	state      int32 // alive, stopping or dead, as lifecycle; see suspended
	suspended  bool  // a restart waits: no user message runs
	restarting bool  // a restart waits for children and backoff
	timer      func() bool
	restarts   []time.Time
	watchers   map[*cell]struct{}
	woken      []*cell // mailboxes this turn woke, to schedule when Receive returns
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

// tell queues msg from sender and wakes the mailbox. turn, if not nil, is
// the actor whose turn is sending: its node list serves, and the wake waits
// until its Receive returns (see woken). It returns an error only for a
// bounded mailbox: a full one's Fail, or ctx's end while waiting.
func (c *cell) tell(ctx context.Context, msg any, sender, turn *cell) error {
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
	if turn == nil {
		c.user.push(msg, sender, nil)
		c.wake()
		return nil
	}
	c.user.push(msg, sender, &turn.free)
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
func (c *cell) scheduleWoken() {
	for i, w := range c.woken {
		c.woken[i] = nil
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
	c.system.push(msg, nil, nil)
	c.wake()
}

// wake schedules a turn if the mailbox is idle.
func (c *cell) wake() {
	if c.status.Load() == idle && c.status.CompareAndSwap(idle, scheduled) {
		c.disp.schedule(c)
	}
}

// turn handles messages until the budget is spent or nothing is left, then
// goes idle, unless a message came meanwhile.
func (c *cell) turn() {
	c.budget = c.disp.throughput
	for c.process() {
		// A message failed; the supervisor has decided. Go on.
	}
	c.release()
}

// release sets the mailbox idle and schedules it again if a message is
// waiting that the turn may handle. Once the status is idle another turn may
// start at once, so what release reads afterwards it took before: the
// queues' stub nodes (a node's link is atomic; if the node has been taken and
// reused meanwhile, the worst is a turn that finds nothing to do) and
// whether user messages may run.
func (c *cell) release() {
	userHeld := c.state == stopping || (c.state == alive && c.suspended)
	user, system := c.user.head, c.system.head
	c.status.Store(idle)
	if system.next.Load() == nil && (userHeld || user.next.Load() == nil) {
		return // a message linked from now on is the sender's to schedule
	}
	if c.status.CompareAndSwap(idle, scheduled) {
		c.disp.schedule(c)
	}
}

// process runs the turn's messages and returns true after a failure, which
// it has handed to the supervisor.
func (c *cell) process() (failed bool) {
	defer func() {
		if v := recover(); v != nil {
			c.ctx.sender, c.ctx.msg = nil, nil
			c.fail(v, debug.Stack())
			failed = true
		}
		// Whatever happened, a mailbox this turn woke must run.
		c.scheduleWoken()
	}()
	for c.budget > 0 {
		if m, _, ok := c.system.pop(&c.free); ok {
			c.handleSystem(m)
			if len(c.woken) != 0 {
				c.scheduleWoken()
			}
			continue
		}
		if c.state == stopping || (c.state == alive && c.suspended) {
			return false
		}
		msg, sender, ok := c.user.pop(&c.free)
		if !ok {
			return false
		}
		if c.capacity > 0 {
			c.taken()
		}
		if c.state == dead {
			c.sys.deadLetter(c, msg, sender, nil)
			continue
		}
		c.budget--
		if msg == poisonPill {
			c.beginStop()
			continue
		}
		c.ctx.sender, c.ctx.msg = sender, msg
		c.actor.Receive(&c.ctx, msg)
		c.ctx.sender, c.ctx.msg = nil, nil
		if len(c.woken) != 0 {
			c.scheduleWoken()
		}
	}
	return false
}

// abandon empties the mailbox of a dispatcher that has shut down: user
// messages go to dead letters, and a watcher still learns of the end.
func (c *cell) abandon() {
	for again := true; again; {
		c.drainAbandoned()
		user, system := c.user.head, c.system.head
		c.status.Store(idle)
		again = (system.next.Load() != nil || user.next.Load() != nil) && c.status.CompareAndSwap(idle, scheduled)
	}
}

func (c *cell) drainAbandoned() {
	for {
		for {
			m, _, ok := c.system.pop(&c.free)
			if !ok {
				break
			}
			if w, ok := m.(watchMsg); ok {
				w.watcher.tell(context.Background(), Terminated{Actor: Ref{c}}, c, nil)
			}
		}
		msg, sender, ok := c.user.pop(&c.free)
		if !ok {
			break
		}
		if c.capacity > 0 {
			c.taken()
		}
		c.sys.deadLetter(c, msg, sender, ErrStopped)
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
			m.watcher.tell(context.Background(), Terminated{Actor: Ref{c}}, c, nil)
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

// fail applies the supervisor's decision to a failure with reason.
func (c *cell) fail(reason any, stack []byte) {
	if c.state != alive {
		c.sys.logger.Error("actor: panic while stopping", "actor", c.path, "panic", fmt.Sprint(reason))
		return
	}
	d := Stop
	if c.supervisor.Decide != nil {
		d = c.decide(reason)
	}
	if d == Restart && !c.mayRestart() {
		d = Stop
	}
	c.sys.logger.Error("actor: failed", "actor", c.path, "panic", fmt.Sprint(reason),
		"directive", d.String(), "stack", string(stack))
	switch d {
	case Resume:
	case Restart:
		c.restart(reason)
	case Escalate:
		c.beginStop()
		if c.parent != nil && c.parent != c.sys.guardian {
			c.parent.sendSystem(childFailedMsg{child: c, reason: reason})
		}
	default:
		c.beginStop()
	}
}

// decide calls the supervisor's Decide; a panic there stops the actor.
func (c *cell) decide(reason any) (d Directive) {
	defer func() {
		if v := recover(); v != nil {
			c.sys.logger.Error("actor: supervisor panicked", "actor", c.path, "panic", fmt.Sprint(v))
			d = Stop
		}
	}()
	d = c.supervisor.Decide(reason)
	switch d {
	case Stop, Restart, Resume, Escalate:
		return d
	}
	return Stop
}

// mayRestart records a restart if the supervisor's limit allows one.
func (c *cell) mayRestart() bool {
	s := c.supervisor
	now := c.sys.clock.Now()
	if s.Within > 0 {
		keep := c.restarts[:0]
		for _, t := range c.restarts {
			if now.Sub(t) < s.Within {
				keep = append(keep, t)
			}
		}
		c.restarts = keep
	}
	if s.MaxRestarts > 0 && len(c.restarts) >= s.MaxRestarts {
		return false
	}
	c.restarts = append(c.restarts, now)
	return true
}

// restart begins a restart: the failed behaviour hears Restarting, the
// children stop, and the backoff, if any, starts. tryRestart finishes it.
func (c *cell) restart(reason any) {
	c.signalQuietly(Restarting{Reason: reason})
	c.actor = nil
	c.suspended, c.restarting = true, true
	if d := c.supervisor.Backoff.delay(len(c.restarts)-1, rand.Float64()); d > 0 {
		c.timer = c.sys.clock.AfterFunc(d, func() { c.sendSystem(restartMsg{}) })
	} else {
		// Not at once: fail runs in process's deferred recover, where a
		// panic of the fresh behaviour would escape.
		c.system.push(restartMsg{}, nil, nil)
	}
	c.stopChildren()
}

// tryRestart finishes a restart once no backoff and no child is left.
func (c *cell) tryRestart() {
	if !c.restarting || c.timer != nil || c.state != alive || c.childCount() > 0 {
		return
	}
	c.restarting, c.suspended = false, false
	c.actor = c.behaviour()
	c.receiveSignal(Started{})
}

// behaviour returns a fresh behaviour from Props.New; a nil one is a
// failure like a panic in Started.
func (c *cell) behaviour() Actor {
	a := c.newActor()
	if a == nil {
		panic(fmt.Sprintf("loom: actor %s: Props.New returned nil", c.path))
	}
	return a
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
	for w := range c.watchers {
		w.tell(context.Background(), Terminated{Actor: Ref{c}}, c, c)
	}
	c.watchers = nil
	if c.parent == c.sys.guardian {
		c.sys.guardian.mu.Lock()
		if c.sys.guardian.children[c.name] == c {
			delete(c.sys.guardian.children, c.name)
		}
		c.sys.guardian.mu.Unlock()
	} else {
		c.parent.sendSystem(childStoppedMsg{child: c})
	}
	if c.ownDisp {
		// Before unregister, so that a Shutdown waiting for the last actor
		// also waits for this.
		c.sys.retire(c.disp)
	}
	// What is queued goes to dead letters before Done is closed; what comes
	// later, in later turns.
	for {
		msg, sender, ok := c.user.pop(&c.free)
		if !ok {
			break
		}
		if c.capacity > 0 {
			c.taken()
		}
		c.sys.deadLetter(c, msg, sender, ErrStopped)
	}
	c.sys.unregister(c)
	close(c.done)
}
