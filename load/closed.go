package load

import (
	"sync"
	"time"
)

// runClosed runs Config.Connections workers, each sending its next request
// when the previous response arrives, and returns when the run ended.
func (r *runner) runClosed() time.Time {
	if r.cfg.Duration > 0 {
		t := time.AfterFunc(r.cfg.Duration, r.stop)
		defer t.Stop()
	}
	var wg sync.WaitGroup
	for range r.cfg.Connections {
		w := r.addWorker()
		w.next = w.id % len(r.reqs)
		if r.cfg.Pipeline > 1 {
			wg.Go(w.pipelinedLoop)
		} else {
			wg.Go(w.closedLoop)
		}
	}
	wg.Wait()
	// Requests cut off by a stop are not counted, so the run ended then.
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	if !r.stopAt.IsZero() {
		return r.stopAt
	}
	return time.Now()
}

// take hands out the right to send one request, and reports false when the
// run is over.
func (r *runner) take() bool {
	if r.stopped.Load() {
		return false
	}
	return r.cfg.Requests == 0 || r.issued.Add(1) <= r.cfg.Requests
}

// Connection attempts that fail are retried after a pause that doubles from
// minBackoff up to maxBackoff, so a refusing server is not spun on.
const (
	minBackoff = time.Millisecond
	maxBackoff = 200 * time.Millisecond
)

// nextBackoff is the pause after a failed connection attempt, given the
// pause before it (zero after a success).
func nextBackoff(prev time.Duration) time.Duration {
	return min(max(2*prev, minBackoff), maxBackoff)
}

func (w *worker) closedLoop() {
	defer w.finish()
	r := w.r
	backoff := time.Duration(0)
	for r.take() {
		i := w.next
		w.next++
		if w.next == len(r.reqs) {
			w.next = 0
		}
		// Connecting is not part of a request's latency in closed loop,
		// as in wrk; failing to connect is one failed request.
		if f := w.connect(i); f != ok {
			if f == aborted {
				return
			}
			w.record(f, 0, time.Now(), 0)
			backoff = nextBackoff(backoff)
			if !w.pause(backoff) {
				return
			}
			continue
		}
		backoff = 0
		start := time.Now()
		f, status := w.exchange(i, start)
		if f == aborted || r.stopped.Load() { // finished after the end: not counted, as in wrk
			return
		}
		end := time.Now()
		w.record(f, status, end, end.Sub(start))
	}
}

// pause waits d or until the run stops, and reports whether to go on.
func (w *worker) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.r.ctx.Done():
		return false
	}
}
