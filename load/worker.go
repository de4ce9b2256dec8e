package load

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// readBufferSize is each connection's read buffer: 40 MB at -c 10000. Longer
// header lines are skipped unread, unless they are ones the parser needs.
const readBufferSize = 4 << 10

// aLongTimeAgo is a deadline in the past: setting it wakes a blocked read or
// write at once.
var aLongTimeAgo = time.Unix(1, 0)

// clientConn is one keep-alive HTTP/1.1 connection.
type clientConn struct {
	nc           net.Conn
	br           *bufio.Reader
	used         bool        // a response has been read on nc
	serverClosed bool        // the last nc ended because the server closed it
	stopAbort    func() bool // unregisters the abort-on-stop hook
}

// worker issues requests one at a time, over one connection per server
// address. Only its own goroutine touches it, except the atomic counters the
// progress sampler reads.
type worker struct {
	r     *runner
	id    int
	conns []clientConn // indexed like runner.addrs
	next  int          // closed loop: next target, round-robin
	body  []byte       // the last body, when Config.ExpectBody is set

	lat  [latencyBatch]int64
	nlat int

	served atomic.Int64
	failed atomic.Int64

	sent, bytes, late, connects, reconnects int64
	errs                                    Errors
	status                                  map[int]int64

	sec                            int
	secServed, secErrors, secBytes int64 // secBytes: w.bytes when sec began
	secLatency, secLatencyMax      time.Duration
}

func newWorker(r *runner, id int) *worker {
	return &worker{r: r, id: id, conns: make([]clientConn, len(r.addrs)), status: make(map[int]int64, 4)}
}

// connect makes sure the connection for target i is open.
func (w *worker) connect(i int) failure {
	c := &w.conns[w.r.reqs[i].addrIndex]
	if c.nc != nil {
		return ok
	}
	r := w.r
	select {
	case r.dialSlots <- struct{}{}:
	case <-r.ctx.Done():
		return aborted
	}
	idx := r.reqs[i].addrIndex
	nc, err := dial(r.ctx, &r.dialer, r.cfg.Dial, r.addrs[idx], r.addrTLS[idx])
	<-r.dialSlots
	if err != nil {
		if r.stopped.Load() {
			return aborted
		}
		r.limits.dialFailed(err)
		return classifyDial(err)
	}
	w.connects++
	if c.serverClosed {
		w.reconnects++
		c.serverClosed = false
	}
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, readBufferSize)
	} else {
		c.br.Reset(nc)
	}
	c.nc, c.used = nc, false
	c.stopAbort = context.AfterFunc(r.ctx, func() { _ = nc.SetDeadline(aLongTimeAgo) })
	r.open.Add(1)
	return ok
}

func (w *worker) closeConn(c *clientConn) {
	if c.nc == nil {
		return
	}
	c.stopAbort()
	_ = c.nc.Close()
	c.nc = nil
	w.r.open.Add(-1)
}

func (w *worker) closeAll() {
	for i := range w.conns {
		w.closeConn(&w.conns[i])
	}
}

// exchange sends target i and reads its response, which must arrive within
// Config.Timeout of from. If a reused keep-alive
// connection turns out closed before any byte of the response arrived, the
// request goes again once on a new connection, as net/http does, provided
// sending it twice is harmless: none of it was written, or it is replayable
// (see replayable). Otherwise its failure is counted (failClosed for a clean
// close), so that a benchmark of POSTs never counts one request where the
// server processed two.
func (w *worker) exchange(i int, from time.Time) (failure, int) {
	req := &w.r.reqs[i]
	c := &w.conns[req.addrIndex]
	for attempt := 0; ; attempt++ {
		if f := w.connect(i); f != ok {
			return f, 0
		}
		reused := c.used
		f, status, retry, written := w.try(c, req, from)
		if retry && reused && attempt == 0 {
			continue
		}
		if written {
			w.sent++
		}
		return f, status
	}
}

// try makes one attempt on an open connection. retry reports that the
// connection was found closed by the server before any byte of a response
// arrived and that sending req again cannot repeat its effect on the server;
// written that the request was written. The exchange must end within
// Config.Timeout of from.
func (w *worker) try(c *clientConn, req *request, from time.Time) (f failure, status int, retry, written bool) {
	r := w.r
	if r.timeout > 0 {
		_ = c.nc.SetDeadline(from.Add(r.timeout))
	}
	if r.stopped.Load() { // checked after SetDeadline, so a stop cannot be overwritten
		return aborted, 0, false, false
	}
	if n, err := c.nc.Write(req.raw); err != nil {
		// Nothing written, nothing the server could have acted on. A
		// partial write of a request that is not replayable does not go
		// again: the server may act on a head before the body is complete.
		retry = closedByPeer(err) && (n == 0 || req.replayable)
		return w.fail(c, err, failWrite), 0, retry, false
	}
	f, status, retry = w.receive(c, req)
	return f, status, retry, true
}

// receive reads the response to req on c, which carries it, and checks it.
// retry reports that not a byte of it arrived because the server had closed
// the connection, and that req is replayable. On an I/O error c is closed.
func (w *worker) receive(c *clientConn, req *request) (f failure, status int, retry bool) {
	r := w.r
	var h responseHead
	n, err := readHead(c.br, &h)
	w.bytes += n
	if err != nil {
		def := failRead
		if n == 0 {
			// Not a byte of a response. If the server closed the
			// connection, the request had reached it: it may have been
			// processed.
			retry = closedByPeer(err) && req.replayable
			if err == io.EOF {
				def = failClosed
			}
		}
		return w.fail(c, err, def), 0, retry
	}
	var keep *[]byte
	if r.expectBody != nil {
		w.body = w.body[:0]
		keep = &w.body
	}
	m, err := readBody(c.br, &h, req.head, keep)
	w.bytes += m
	if err != nil {
		return w.fail(c, err, failRead), h.status, false
	}
	c.used = true
	if h.close {
		w.closeConn(c)
		c.serverClosed = true
	}
	switch {
	case !r.expectStatus(h.status):
		return failStatus, h.status, false
	case keep != nil && !bytes.Contains(w.body, r.expectBody):
		return failBody, h.status, false
	}
	return ok, h.status, false
}

// fail closes c after an I/O error and names the cause.
func (w *worker) fail(c *clientConn, err error, def failure) failure {
	serverClosed := c.used && closedByPeer(err)
	w.closeConn(c)
	c.serverClosed = serverClosed
	if w.r.stopped.Load() {
		return aborted
	}
	return classify(err, def)
}

// record counts the outcome of one request that finished at end.
func (w *worker) record(f failure, status int, end time.Time, latency time.Duration) {
	if status != 0 {
		w.status[status]++
	}
	if sec := int(end.Sub(w.r.start) / time.Second); sec != w.sec {
		w.flushSecond()
		w.sec = sec
	}
	if f != ok {
		w.failed.Add(1)
		w.secErrors++
		w.errs.add(f)
		return
	}
	w.served.Add(1)
	w.secServed++
	w.secLatency += latency
	w.secLatencyMax = max(w.secLatencyMax, latency)
	w.lat[w.nlat] = int64(latency / time.Microsecond)
	w.nlat++
	if w.nlat == len(w.lat) {
		w.flushLatencies()
	}
}

func (w *worker) flushLatencies() {
	if w.nlat == 0 {
		return
	}
	w.r.shards[w.id%len(w.r.shards)].record(w.lat[:w.nlat])
	w.nlat = 0
}

func (w *worker) flushSecond() {
	w.r.timeline.add(Second{Second: w.sec, Requests: w.secServed, Errors: w.secErrors, Bytes: w.bytes - w.secBytes,
		LatencyTotal: w.secLatency, LatencyMax: w.secLatencyMax})
	w.secServed, w.secErrors, w.secBytes = 0, 0, w.bytes
	w.secLatency, w.secLatencyMax = 0, 0
}

// finish closes the worker's connections and hands over what it counted.
func (w *worker) finish() {
	w.closeAll()
	w.flushLatencies()
	w.flushSecond()
}
