package loom

import (
	"fmt"
	"log/slog"
)

// An Option configures an executor. Most callers set none.
type Option func(*config)

// FullPolicy says what Go and Run do when an executor has no room for a task.
type FullPolicy int

const (
	// Reject makes Go and Run return ErrRejected at once when there is no room.
	Reject FullPolicy = iota + 1
	// Wait makes Go and Run wait for room until their context ends, then
	// return the context's error. This is backpressure: a slow executor slows
	// its submitters instead of dropping their work.
	Wait
)

// String returns "reject" or "wait", the names Parse accepts.
func (p FullPolicy) String() string {
	switch p {
	case Reject:
		return "reject"
	case Wait:
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
	// ignoreThreads: admit tasks while a ThreadWatch is tripped.
	ignoreThreads bool
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
		initial = adaptiveInitial
	}
	return least, most, min(max(initial, least), most)
}

// Queue sets how many admitted tasks may wait for a free worker or slot;
// 0 means none may wait, so a task is admitted only when it can start at once.
// The default is documented on each constructor. Queue applies to Pool,
// Threads and Limit; the other constructors panic when given it, because they
// never queue. It panics if n is negative.
func Queue(n int) Option {
	if n < 0 {
		panic(fmt.Sprintf("loom: Queue(%d): queue length must not be negative", n))
	}
	return func(c *config) {
		c.queue = n
		c.queueSet = true
	}
}

// Name names the executor. The name appears in Stats, in the pprof label
// "executor" of the goroutines it starts, and in panic reports.
// The default is "" (FromEnv defaults it to the name it was given).
func Name(s string) Option {
	return func(c *config) { c.name = s }
}

// Full sets what Go and Run do when there is no room for a task: Reject or
// Wait. The default is documented on each constructor. Full applies to Pool,
// Threads and Limit; the other constructors panic when given it, because they
// are never full. It panics if p is neither Reject nor Wait.
func Full(p FullPolicy) Option {
	if p != Reject && p != Wait {
		panic(fmt.Sprintf("loom: Full(%v): policy must be Reject or Wait", p))
	}
	return func(c *config) { c.full = p }
}

// PanicHandler sets the function called, on the task's goroutine, with the
// executor's name, the recovered value and the stack of the panicking task.
// The default logs both at Error level with the executor's logger.
// The handler must be safe for concurrent use; a panic inside it is not
// recovered. It may call runtime.Goexit (as t.Fatal does in a test): the
// task is counted as completed before the handler runs, and the goroutine
// ends as it would for a task that called runtime.Goexit.
func PanicHandler(f func(name string, v any, stack []byte)) Option {
	return func(c *config) { c.onPanic = f }
}

// Logger sets the logger the default panic handler writes to.
// The default is slog.Default() at the time the executor is built.
func Logger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// LimitRange bounds the limit of an Adaptive executor: it never falls below
// least nor rises above most. The default is 1 to 10,000. Only Adaptive
// takes it; the other constructors panic when given it. It panics if least
// is not positive or most is less than least.
func LimitRange(least, most int) Option {
	if least <= 0 || most < least {
		panic(fmt.Sprintf("loom: LimitRange(%d, %d): want 0 < least <= most", least, most))
	}
	return func(c *config) { c.limitMin, c.limitMax = least, most }
}

// InitialLimit sets the limit an Adaptive executor starts with; the default
// is 20, moved into LimitRange if outside it. Only Adaptive takes it; the
// other constructors panic when given it. It panics if n is not positive.
func InitialLimit(n int) Option {
	if n <= 0 {
		panic(fmt.Sprintf("loom: InitialLimit(%d): the limit must be positive", n))
	}
	return func(c *config) { c.limitInitial = n }
}

// IgnoreThreadWatch makes the executor admit tasks while a ThreadWatch is
// tripped. By default every executor refuses new tasks with ErrRejected
// then, so that a process short of OS threads sheds load instead of dying.
func IgnoreThreadWatch() Option {
	return func(c *config) { c.ignoreThreads = true }
}

// newConfig applies opts; kind names the executor in panic messages, and
// bounded says whether Queue and Full apply to it.
func newConfig(kind string, bounded bool, opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if !bounded && (c.queueSet || c.full != 0) {
		panic(fmt.Sprintf("loom: %s executors never queue or fill up: Queue and Full do not apply", kind))
	}
	if kind != "adaptive" && (c.limitMin != 0 || c.limitInitial != 0) {
		panic(fmt.Sprintf("loom: %s executors have no adaptive limit: LimitRange and InitialLimit do not apply", kind))
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}
