package nbio

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lesismal/nbio/nbhttp"
)

// respond writes the response itself, head and whole body, when nbio's
// writer would write the same fields (in another order): a status of 200
// or more with a body held whole (see writer), no Transfer-Encoding or
// Trailer of the handler's, and a Content-Length that is the body's or
// none. The response then goes to the connection's batch
// (connState.responded) instead of through nbio's writer, which allocates
// for every head it encodes and writes each response of a pipelined read
// with a write of its own. It reports whether it wrote the response; if
// not, finish and nbio write it.
func (w *writer) respond(r *http.Request) bool {
	st := w.st
	if st == nil || w.hijacked || w.head || (w.started && !w.holding) || r.ProtoMajor != 1 {
		return false
	}
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	text := http.StatusText(status)
	if status < 200 || status == http.StatusNoContent || status == http.StatusNotModified || text == "" {
		return false
	}
	res, ok := w.ResponseWriter.(*nbhttp.Response)
	if !ok {
		return false
	}
	body := w.held

	st.outMu.Lock()
	if st.out == nil {
		st.out = getBatch()
	}
	b := st.out.b
	mark := len(b)
	b = append(b, r.Proto...)
	b = append(b, ' ', '0'+byte(status/100), '0'+byte(status/10%10), '0'+byte(status%10), ' ')
	b = append(b, text...)
	b = append(b, '\r', '\n')
	// The handler's fields, noting those that decide the rest in the same
	// pass, then the fields nbio's writer adds where the handler has not.
	var typed, length, connection, dated, framed bool
	for k, vs := range w.Header() {
		switch k {
		case "Content-Type":
			typed = len(vs) > 0
		case "Content-Length":
			length = len(vs) > 0
			if length {
				n, err := strconv.ParseInt(vs[0], 10, 64)
				framed = framed || len(vs) > 1 || err != nil || n != int64(len(body))
			}
		case "Connection":
			connection = len(vs) > 0
		case "Date":
			dated = len(vs) > 0
		case "Transfer-Encoding", "Trailer":
			framed = framed || len(vs) > 0
		}
		for _, v := range vs {
			b = append(b, k...)
			b = append(b, ':', ' ')
			b = append(b, v...)
			b = append(b, '\r', '\n')
		}
	}
	if framed {
		// nbio chunks, or the length is not the body's: its writer and
		// finish decide.
		st.out.b = b[:mark]
		st.outMu.Unlock()
		return false
	}
	if len(body) > 0 && !typed {
		b = append(b, "Content-Type: text/plain; charset=utf-8\r\n"...)
	}
	if !length {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, '\r', '\n')
	}
	if r.Close && !connection {
		b = append(b, "Connection: close\r\n"...)
	}
	if !dated {
		b = appendDate(b)
	}
	b = append(b, '\r', '\n')
	b = append(b, body...)
	st.out.b = b
	st.outMu.Unlock()
	_, _, _ = res.Hijack() // nbio then writes no response of its own
	w.held, w.holding = nil, false
	return true
}

// maxBatch is how many bytes of responses a connection holds back for the
// responses behind them before it writes them anyway.
const maxBatch = 64 << 10

// responded is called on the handler's goroutine after respond, once the
// request is no longer counted pending. The batch goes out now unless a
// request that arrived with this one is already waiting to run, whose
// response will follow in the same write; fasthttp writes a pipelined
// batch the same way. A response after which the connection closes is
// written, then the connection closed; otherwise the idle timeout starts,
// as nbio starts it after the responses it writes.
func (st *connState) responded(last bool) {
	if last {
		_ = st.Close()
		return
	}
	st.idleMu.Lock()
	more := st.pending > 0
	st.idleMu.Unlock()
	st.outMu.Lock()
	size := 0
	if st.out != nil {
		size = len(st.out.b)
	}
	st.outMu.Unlock()
	if !more || size >= maxBatch {
		_ = st.flush()
	}
	_ = st.SetReadDeadline(respondedAt)
}

// respondedAt is any time but the zero one, for SetReadDeadline.
var respondedAt = time.Unix(1, 0)

// flush hands the responses held in st.out to nbio, and waits while more
// than maxQueued bytes wait to be written. Every write to the connection
// flushes first, which keeps the responses in order.
func (st *connState) flush() error {
	st.outMu.Lock()
	out := st.out
	st.out = nil
	if out == nil || len(out.b) == 0 {
		st.outMu.Unlock()
		if out != nil {
			putBatch(out)
		}
		return nil
	}
	st.queued.Add(int64(len(out.b)))
	_, err := st.Conn.Write(out.b) // nbio copies what the socket does not take
	putBatch(out)
	st.outMu.Unlock()
	if err != nil {
		return err
	}
	return st.drain(maxQueued)
}

// batch is the buffer of the responses a connection holds back; between
// batches it is in batchPool, so that an idle connection holds none.
type batch struct{ b []byte }

var batchPool = sync.Pool{New: func() any { return &batch{b: make([]byte, 0, 4096)} }}

func getBatch() *batch { return batchPool.Get().(*batch) }

func putBatch(out *batch) {
	if cap(out.b) > 2*maxBatch {
		return
	}
	out.b = out.b[:0]
	batchPool.Put(out)
}

// date is the Date field of the second it was formatted for; a response
// formats it only when the second has changed, as fasthttp does.
type date struct {
	unix int64
	line []byte // "Date: ...\r\n"
}

var dateNow atomic.Pointer[date]

func appendDate(b []byte) []byte {
	now := time.Now()
	d := dateNow.Load()
	if d == nil || d.unix != now.Unix() {
		line := now.UTC().AppendFormat([]byte("Date: "), http.TimeFormat)
		d = &date{unix: now.Unix(), line: append(line, '\r', '\n')}
		dateNow.Store(d)
	}
	return append(b, d.line...)
}
