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
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}
