package load

import (
	"sync"
	"time"
)

// initialOpenWorkers are started before the schedule begins; more start when
// due requests outnumber the idle and connecting workers.
const initialOpenWorkers = 4

// at returns when request i of the open-loop schedule is due, from the
// start; MaxInt64 (never) for a request past the schedule's end.
func (r *runner) at(i int64) time.Duration { return r.sched.at(i) }

// openLength is the planned length of an open-loop run: the schedule's end
// (Phases), Duration, or the Requests slots, whichever ends first; MaxInt64
// without any.
func (r *runner) openLength() time.Duration {
	length := r.sched.length()
	if r.cfg.Requests > 0 {
		length = min(length, r.at(r.cfg.Requests))
	}
	if r.cfg.Duration > 0 {
		length = min(length, r.cfg.Duration)
	}
	return length
}

// dueBefore counts the requests of the schedule due before d, as runSchedule
// sends them: those with at(i) < d.
func (r *runner) dueBefore(d time.Duration) int64 { return r.sched.dueBefore(d) }

// runOpen hands requests to workers on a fixed schedule, starting workers
// (and so connections) as needed up to MaxConns, and returns when both the
// planned length has passed and the last response arrived. A request that
// finds no free worker waits for the first one free, new or old; if it
// starts late, its latency and its timeout still count from when it was
// due, and if its timeout passes first it is not sent (TimeoutUnsent).
func (r *runner) runOpen() time.Time {
	due := make(chan int64, r.cfg.MaxConns)
	var wg sync.WaitGroup
	workers := 0
	spawn := func() {
		w := r.addWorker()
		workers++
		r.starting.Add(1)
		wg.Go(func() { w.openLoop(due) })
	}
	for range min(r.cfg.MaxConns, initialOpenWorkers) {
		spawn()
	}
	r.runSchedule(due, spawn, &workers)
	close(due)
	var cutOff *time.Timer
	if !r.stopped.Load() && r.timeout > 0 {
		// Requests still in flight may finish, for as long as one may take.
		cutOff = time.AfterFunc(r.timeout, r.stop)
	}
	wg.Wait()
	if cutOff != nil {
		cutOff.Stop()
	}
	// The last request is due one slot before the end: the run lasts its
	// whole planned length, so that a rate reported against Elapsed is the
	// rate asked for (3/s for 2 s is 6 requests in 2 s, not in 1.67 s).
	if wait := r.openLength() - time.Since(r.start); wait > 0 && !r.stopped.Load() {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.ctx.Done():
		}
	}
	return time.Now()
}

func (r *runner) runSchedule(due chan<- int64, spawn func(), workers *int) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i := int64(0); ; i++ {
		if r.cfg.Requests > 0 && i >= r.cfg.Requests || i >= r.sched.total() {
			return
		}
		at := r.at(i)
		if r.cfg.Duration > 0 && at >= r.cfg.Duration {
			return
		}
		if wait := at - time.Since(r.start); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-r.ctx.Done():
				return
			}
		}
		if r.stopped.Load() {
			return
		}
		// A new connection only for demand that neither an idle worker nor
		// one still connecting will meet: a brief stall of the machine must
		// not open hundreds of connections that then slow it further.
		if int64(len(due))+1 > r.idle.Load()+r.starting.Load() && *workers < r.cfg.MaxConns {
			spawn()
		}
		select {
		case due <- i:
			r.dispatched.Add(1)
		case <-r.ctx.Done():
			return
		}
	}
}

// scheduled returns how many requests the schedule called for while the run
// lasted.
func (r *runner) scheduled() int64 {
	return r.dispatched.Load()
}

func (w *worker) openLoop(due <-chan int64) {
	defer w.finish()
	r := w.r
	// Connect before taking a request, so that a request due meanwhile goes
	// to whichever worker is free first rather than waiting for this dial.
	// A failure here is not counted: the request that finds the connection
	// missing tries again and counts its own failure.
	w.connect(w.id % len(r.reqs))
	r.starting.Add(-1)
	for {
		r.idle.Add(1)
		i, more := <-due
		r.idle.Add(-1)
		if !more {
			return
		}
		intended := r.start.Add(r.at(i))
		now := time.Now()
		// A client's timeout runs from when it meant to send: a request
		// that waited it out for a free connection is given up unsent, and
		// one sent late has only what is left of it.
		if r.timeout > 0 && now.Sub(intended) >= r.timeout {
			w.late++
			w.record(failTimeoutUnsent, 0, now, 0)
			continue
		}
		if r.stopped.Load() { // due but never sent
			w.late++
			continue
		}
		if now.Sub(intended) > LateAfter {
			w.late++
		}
		f, status := w.exchange(int(i%int64(len(r.reqs))), intended)
		if f == aborted {
			continue
		}
		// Latency counts from when the request was due, not when it went
		// out: a server that stalls delays every request scheduled during
		// the stall, not only the few that were on the wire.
		end := time.Now()
		w.record(f, status, end, end.Sub(intended))
	}
}
