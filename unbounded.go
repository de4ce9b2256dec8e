package loom

import "context"

// unbounded is what Virtual and ThreadPerTask share: they are never full and
// never queue, so admission is the gate alone, every task inside counts as
// running, and Shutdown waits for the gate to empty.
type unbounded struct {
	core
}

func (u *unbounded) init(kind Kind, opts []Option) {
	u.core.init(kind, newConfig(kind, opts), 0, 0)
	u.counts = u.taskCounts
}

// admit lets a task in and returns its sampled admission time; the caller
// must call u.gate.exit once the task is done.
func (u *unbounded) admit() (admitted int64, err error) {
	if u.refuses() {
		return 0, ErrRejected
	}
	inside, ok := u.gate.enter()
	if !ok {
		return 0, ErrClosed
	}
	u.observe(inside)
	return u.stamp(u.submitted.Add(1)), nil
}

// Shutdown stops admitting tasks and waits for the running ones to return.
// If ctx ends first, it cancels their contexts and returns an error wrapping
// ErrAbandoned and ctx.Err(); a goroutine whose task ignores the
// cancellation ends when the task returns. Shutdown may be called more than
// once and concurrently.
func (u *unbounded) Shutdown(ctx context.Context) error {
	return u.shutdown(ctx, u.begin, u.gate.idle, nil)
}

func (u *unbounded) begin() {
	u.gate.close()
	close(u.closing)
}

// taskCounts counts every task inside the executor as running: nothing queues.
func (u *unbounded) taskCounts() (running, queued int64, completed uint64) {
	return u.gate.inside(), 0, u.completed.Load()
}

// Stats returns a snapshot of the executor's counters.
func (u *unbounded) Stats() Stats { return u.stats() }
