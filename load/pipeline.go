package load

import "time"

// pipelinedLoop is closedLoop for Config.Pipeline above 1: each round trip
// writes a batch of up to Pipeline requests at once and reads their
// responses in order.
func (w *worker) pipelinedLoop() {
	defer w.finish()
	r := w.r
	batch := make([]int, 0, r.cfg.Pipeline)
	var buf []byte
	backoff := time.Duration(0)
	for {
		batch = batch[:0]
		for len(batch) < cap(batch) && r.take() {
			batch = append(batch, w.next)
			w.next++
			if w.next == len(r.reqs) {
				w.next = 0
			}
		}
		if len(batch) == 0 {
			return
		}
		if f := w.connect(batch[0]); f != ok {
			if f == aborted {
				return
			}
			now := time.Now()
			for range batch {
				w.record(f, 0, now, 0)
			}
			backoff = min(max(2*backoff, minBackoff), maxBackoff)
			if !w.pause(backoff) {
				return
			}
			continue
		}
		backoff = 0
		var more bool
		buf, more = w.pipeline(batch, buf)
		if !more {
			return
		}
	}
}

// pipeline sends the batch on the connection of its (single) address and
// records each response, and reports whether the run goes on. buf is
// scratch space for the batch's bytes, returned for reuse. If a reused
// connection turns out closed before any byte of the first response
// arrived, the batch goes again once on a new connection when every request
// in it is replayable, as exchange does for one request.
func (w *worker) pipeline(batch []int, buf []byte) ([]byte, bool) {
	r := w.r
	c := &w.conns[r.reqs[batch[0]].addrIndex]
	replayable := true
	buf = buf[:0]
	for _, i := range batch {
		buf = append(buf, r.reqs[i].raw...)
		replayable = replayable && r.reqs[i].replayable
	}
	for attempt := 0; ; attempt++ {
		if f := w.connect(batch[0]); f != ok {
			if f == aborted {
				return buf, false
			}
			now := time.Now()
			for range batch {
				w.record(f, 0, now, 0)
			}
			return buf, true
		}
		reused := c.used
		start := time.Now()
		if r.timeout > 0 {
			_ = c.nc.SetDeadline(start.Add(r.timeout))
		}
		if r.stopped.Load() { // checked after SetDeadline, so a stop cannot be overwritten
			return buf, false
		}
		if n, err := c.nc.Write(buf); err != nil {
			retry := closedByPeer(err) && (n == 0 || replayable)
			f := w.fail(c, err, failWrite)
			if retry && reused && attempt == 0 {
				continue
			}
			return buf, w.failRest(batch, f)
		}
		w.sent += int64(len(batch))
		for k, i := range batch {
			f, status, retry := w.receive(c, &r.reqs[i])
			if k == 0 && retry && replayable && reused && attempt == 0 {
				w.sent -= int64(len(batch))
				break // again, on a new connection
			}
			if f == aborted || r.stopped.Load() { // finished after the end: not counted
				return buf, false
			}
			end := time.Now()
			w.record(f, status, end, end.Sub(start))
			if c.nc == nil && k < len(batch)-1 {
				// The connection ended with this response: the server
				// closed it after answering (Connection: close), or an
				// I/O error did. The rest were sent and cannot be
				// answered.
				rest := failClosed
				if f != ok && f != failStatus && f != failBody {
					rest = f
				}
				return buf, w.failRest(batch[k+1:], rest)
			}
			if k == len(batch)-1 {
				return buf, true
			}
		}
	}
}

// failRest records each request of batch as failed with f, unless the run
// was stopped, and reports whether the run goes on.
func (w *worker) failRest(batch []int, f failure) bool {
	if h := testHookFailRest; h != nil {
		h(w.r)
	}
	if f == aborted || w.r.stopped.Load() {
		return false
	}
	now := time.Now()
	for range batch {
		w.record(f, 0, now, 0)
	}
	return true
}

// testHookFailRest, when set, is called as failRest begins, after the
// caller's own look at the stop: a test stops the run there. Set only
// while no run is in progress.
var testHookFailRest func(r *runner)
