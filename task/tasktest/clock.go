// Package tasktest helps test code that uses package task: a Clock that
// moves only when the test moves it.
package tasktest

import (
	"sync"
	"time"

	"github.com/loomrt/loom/task"
)

// A Clock is a task.Clock for tests: Now stays put until Set or Advance
// moves it, and timers fire when it passes their deadlines. It is safe for
// concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

var _ task.Clock = (*Clock)(nil)

type timer struct {
	clock *Clock
	at    time.Time
	c     chan time.Time
}

// NewClock returns a Clock reading now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that fires once the clock has moved d forward.
func (c *Clock) NewTimer(d time.Duration) task.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{clock: c, at: c.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

func (t *timer) C() <-chan time.Time { return t.c }

func (t *timer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Set moves the clock to now. Forward, it fires the timers due, as if the
// time had passed (or the process had been suspended). Back, it is Step.
func (c *Clock) Set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	forward := now.Sub(c.now)
	if forward <= 0 {
		c.step(forward)
		return
	}
	c.now = now
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(now) {
			t.c <- now
			continue
		}
		kept = append(kept, t)
	}
	c.timers = kept
}

// Step steps the wall clock by d, forward or back, as a person or NTP
// setting the clock does: timers measure elapsed time, so their deadlines
// move with it and none fires.
func (c *Clock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step(d)
}

func (c *Clock) step(d time.Duration) {
	c.now = c.now.Add(d)
	for _, t := range c.timers {
		t.at = t.at.Add(d)
	}
}

// Advance moves the clock d forward (Set(Now()+d)).
func (c *Clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Pending returns the number of timers waiting to fire: a Scheduler has one
// per job whose loop is waiting for its next time.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
