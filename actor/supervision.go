package actor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
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
		c.system.push(restartMsg{}, nil, nil, nil)
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
