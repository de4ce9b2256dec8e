package task

import "time"

// A Clock tells the time and makes timers. The Scheduler reads time only
// through its Clock, so that tests can drive it with a fake one; the default
// is the system clock.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer whose channel receives once d has passed.
	NewTimer(d time.Duration) Timer
}

// A Timer is what Clock.NewTimer returns, as time.Timer is.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; see time.Timer.Stop.
	Stop() bool
}

// SystemClock is the Clock of the operating system (time.Now, time.NewTimer).
var SystemClock Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }
