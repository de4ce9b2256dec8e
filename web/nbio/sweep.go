package nbio

import (
	"errors"
	"time"
)

var (
	errRequestTimeout = errors.New("nbio engine: request not received in time")
	errWriteTimeout   = errors.New("nbio engine: write made no progress within the write timeout")
)

// sweep closes connections that ran out of time, as net/http's deadlines
// would: a request whose line and headers did not arrive within the header
// timeout (from its first byte, or from the connection's opening for the
// first request), a body not within the body timeout of the end of its
// headers (nbio reads the whole body before the handler runs), and a
// response whose bytes made no progress for the write timeout — re-armed
// as they move, like net/http's with the App's WithWriteTimeout, so a slow
// client that keeps reading is never cut off; and a connection left idle
// for the idle timeout after a response, with no request with the App or
// arriving (connState.SetReadDeadline).
//
// It looks every quarter of the shortest timeout (at least once a second,
// to notice hijacked connections nbio closed on its own), so a connection
// is cut off between its deadline and a quarter of a timeout past it.
func (s *server) sweep() {
	defer close(s.swept)
	period := time.Second
	for _, d := range []time.Duration{s.headerTimeout, s.bodyTimeout, s.writeTimeout, s.idleTimeout} {
		if d > 0 {
			period = min(period, d/4)
		}
	}
	t := time.NewTicker(max(period, time.Millisecond))
	defer t.Stop()
	type late struct {
		st  *connState
		err error
	}
	var cut []late
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		now := time.Now()
		clock := int64(now.Sub(s.epoch))
		cut = cut[:0]
		s.mu.Lock()
		for c, st := range s.conns {
			if d := st.deadline.Load(); d != 0 && clock >= d {
				cut = append(cut, late{st, errRequestTimeout})
				delete(s.conns, c)
				continue
			}
			if s.writeTimeout > 0 && s.stalled(st, clock) {
				cut = append(cut, late{st, errWriteTimeout})
				delete(s.conns, c)
				continue
			}
			if st.hijacked.Load() != nil {
				if closed, _ := c.IsClosed(); closed {
					cut = append(cut, late{st, nil})
					delete(s.conns, c)
				}
			}
		}
		s.mu.Unlock()
		for _, l := range cut {
			l.st.close(l.err)
		}
	}
}

// stalled reports whether st has had bytes queued with none written for the
// write timeout, clock being now on the server's clock (never 0: the epoch
// is before the first sweep). Called under s.mu, which guards the
// sweeper's fields.
func (s *server) stalled(st *connState, clock int64) bool {
	written := st.written.Load() // before queued, which is added to first
	if st.queued.Load() <= written {
		st.stalledSince = 0
		return false
	}
	if written != st.seenWritten || st.stalledSince == 0 {
		st.seenWritten, st.stalledSince = written, clock
		return false
	}
	return time.Duration(clock-st.stalledSince) >= s.writeTimeout
}
