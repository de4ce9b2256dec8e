package loom

import (
	"fmt"
	"log/slog"
	"time"
)

// An Option configures an executor built by a constructor (Pool, Limit, …)
// or by Spec.New. Most callers set none. The zero Option changes nothing.
type Option struct {
	apply func(*config)
}

func option(f func(*config)) Option { return Option{apply: f} }

// FullPolicy says what Go and Run do when an executor has no room for a task.
type FullPolicy int

const (
	// FullReject makes Go and Run return ErrRejected at once when there is
	// no room.
	FullReject FullPolicy = iota + 1
	// FullWait makes Go and Run wait for room until their context ends, then
	// return the context's error. This is backpressure: a slow executor slows
	// its submitters instead of dropping their work.
	FullWait
)

// String returns "reject" or "wait", the names a spec's full= takes.
func (p FullPolicy) String() string {
	switch p {
	case FullReject:
		return "reject"
	case FullWait:
		return "wait"
	}
	return fmt.Sprintf("FullPolicy(%d)", int(p))
}

// config holds what the options set; the zero value means "the executor's
// default" for every field.
type config struct {
	name     string
	queue    int
	queueSet bool
	full     FullPolicy
	onPanic  func(name string, v any, stack []byte)
	logger   *slog.Logger

	// Adaptive's; 0 means the default.
	limitMin, limitMax, limitInitial int
	// ignoreThreads: admit tasks whatever the thread watch says.
	ignoreThreads bool
	// maxQueueWait is Limit's bound on a newcomer's expected wait; 0: none.
	maxQueueWait time.Duration
}

// limits returns Adaptive's least, most and initial limit, defaults applied;
// an initial limit outside the range is moved into it.
func (c config) limits() (least, most, initial int) {
	least, most, initial = c.limitMin, c.limitMax, c.limitInitial
	if least == 0 {
		least = adaptiveMin
	}
	if most == 0 {
		most = max(adaptiveMax, least)
	}
	if initial == 0 {
		initial = most
	}
	return least, most, min(max(initial, least), most)
}

// WithQueue sets how many admitted tasks may wait for a free worker or slot;
// 0 means none may wait, so a task is admitted only when it can start at once.
// The default is documented on each constructor. WithQueue applies to Pool,
// Threads and Limit; the other constructors panic when given it, because they
// never queue. It panics if n is negative.
func WithQueue(n int) Option {
	if n < 0 {
		panic(fmt.Sprintf("loom: WithQueue(%d): queue length must not be negative", n))
	}
	return option(func(c *config) {
		c.queue = n
		c.queueSet = true
	})
}

// WithName names the executor. The name appears in Stats, in the pprof label
// "executor" of the goroutines it starts, and in panic reports.
// The default is "" (FromEnv defaults it to the name it was given).
func WithName(s string) Option {
	return option(func(c *config) { c.name = s })
}

// WithFull sets what Go and Run do when there is no room for a task: FullReject
// or FullWait. The default is documented on each constructor. WithFull applies to
// Pool, Threads and Limit; the other constructors panic when given it,
// because they are never full. It panics if p is neither FullReject nor
// FullWait.
func WithFull(p FullPolicy) Option {
	if p != FullReject && p != FullWait {
		panic(fmt.Sprintf("loom: WithFull(%v): policy must be FullReject or FullWait", p))
	}
	return option(func(c *config) { c.full = p })
}

// WithPanicHandler replaces the report of a panicking task: f is called, on the
// task's goroutine, with the executor's name, the recovered value and the
// task's stack. The default report logs them at Error level, with the
// executor's kind, to the WithPanicLogger logger. f must be safe for concurrent use; a
// panic inside it is not recovered. It may call runtime.Goexit (as t.Fatal
// does in a test): the task is counted as completed before f runs, and the
// goroutine ends as it would for a task that called runtime.Goexit.
func WithPanicHandler(f func(name string, v any, stack []byte)) Option {
	return option(func(c *config) { c.onPanic = f })
}

// WithPanicLogger sets the logger the default panic report writes to; it has no
// effect with WithPanicHandler, which replaces that report. The default is
// slog.Default() at the time the executor is built.
func WithPanicLogger(l *slog.Logger) Option {
	return option(func(c *config) { c.logger = l })
}

// WithLimitRange bounds the limit of an Adaptive executor: it never falls below
// least nor rises above most. The default is 1 to 10,000. Only Adaptive
// takes it; the other constructors panic when given it. It panics if least
// is not positive or most is less than least.
func WithLimitRange(least, most int) Option {
	if least <= 0 || most < least {
		panic(fmt.Sprintf("loom: WithLimitRange(%d, %d): want 0 < least <= most", least, most))
	}
	return option(func(c *config) { c.limitMin, c.limitMax = least, most })
}

// WithInitialLimit sets the limit an Adaptive executor starts with; the default
// is the top of its WithLimitRange, and a limit outside the range is moved into
// it. Only Adaptive takes it; the
// other constructors panic when given it. It panics if n is not positive.
func WithInitialLimit(n int) Option {
	if n <= 0 {
		panic(fmt.Sprintf("loom: WithInitialLimit(%d): the limit must be positive", n))
	}
	return option(func(c *config) { c.limitInitial = n })
}

// WithMaxQueueWait bounds the queue of a Limit executor by time as well as by
// length: a task that finds every slot taken is refused with ErrRejected, as
// if the queue were full, when the wait it can expect exceeds d. That wait is
// its place in the queue (the tasks waiting ahead of it, plus one) divided by
// the limit, times the mean run time of the tasks that ran last (a moving
// average over about the last eight). So while tasks run long the queue holds
// fewer, and a queued task starts, on average, within d of its admission,
// whatever the length WithQueue allows; WithQueue stays the hard bound, and
// until a first task has returned it is the only one. Tasks admitted at the
// same instant may all pass the check: the bound is approximate by the few
// in motion. Every task is timed, three clock readings each (Stats
// percentiles then cover them all; docs/executors.md gives the cost), which
// fits tasks that hold a connection, not nanosecond ones. Only Limit with a queue and WithFull(FullReject) takes
// it; the constructors panic otherwise. It panics if d is not positive.
func WithMaxQueueWait(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("loom: WithMaxQueueWait(%v): the wait must be positive", d))
	}
	return option(func(c *config) { c.maxQueueWait = d })
}

// WithoutThreadWatch exempts the executor from the thread watch: its tasks
// take no part of the thread budget, and it admits them while a watch
// refuses. By default every executor refuses tasks with ErrRejected past the
// budget, so that a process short of OS threads sheds load instead of dying.
func WithoutThreadWatch() Option {
	return option(func(c *config) { c.ignoreThreads = true })
}

// newConfig applies opts for an executor of kind k. It panics, as the
// constructors document, when an option does not apply to k: WithQueue or WithFull
// to a kind that is never full, WithLimitRange or WithInitialLimit to any kind but
// adaptive.
func newConfig(k Kind, opts []Option) config {
	var c config
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&c)
		}
	}
	if info := lookupKind(k); !info.bounded && (c.queueSet || c.full != 0) {
		panic(fmt.Sprintf("loom: %s executors never queue or fill up: WithQueue and WithFull do not apply", k))
	}
	if k != KindAdaptive && (c.limitMin != 0 || c.limitInitial != 0) {
		panic(fmt.Sprintf("loom: %s executors have no adaptive limit: WithLimitRange and WithInitialLimit do not apply", k))
	}
	if c.maxQueueWait != 0 && k != KindLimit {
		panic(fmt.Sprintf("loom: %s executors have no queue bounded by time: WithMaxQueueWait applies to Limit only", k))
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}
