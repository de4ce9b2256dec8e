package nbio

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lesismal/nbio/nbhttp"
)

// respond writes the response itself, head and whole body, when nbio's
// writer would write the same fields (in another order): a status of 200
// or more with a body held whole (see writer), no Transfer-Encoding or
// Trailer of the handler's, and a Content-Length that is the body's or
// none. It writes every 204 and 304, to HEAD as well, as net/http does:
// without Content-Length and Transfer-Encoding (a 304 without
// Content-Type either), which nbio's writer would give them (RFC 9110
// §8.6: a 204 must not have one). The response then goes to the connection's batch
// (connState.responded) instead of through nbio's writer, which allocates
// for every head it encodes and writes each response of a pipelined read
// with a write of its own. It reports whether it wrote the response; if
// not, finish and nbio write it.
func (w *writer) respond(r *http.Request) bool {
	st := w.st
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	bodiless := status == http.StatusNoContent || status == http.StatusNotModified
	if st == nil || w.hijacked || w.head && !bodiless || (w.started && !w.holding) || r.ProtoMajor != 1 {
		return false
	}
	if status < 200 {
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
	b = appendReason(b, status)
	b = append(b, '\r', '\n')
	// The handler's fields, noting those that decide the rest in the same
	// pass, then the fields nbio's writer adds where the handler has not.
	var typed, length, connection, dated, framed bool
	for k, vs := range w.Header() {
		switch k {
		case "Content-Type":
			if status == http.StatusNotModified {
				continue
			}
			typed = len(vs) > 0
		case "Content-Length":
			if bodiless {
				continue
			}
			length = len(vs) > 0
			if length {
				n, err := strconv.ParseInt(vs[0], 10, 64)
				framed = framed || len(vs) > 1 || err != nil || n != int64(len(body))
			}
		case "Connection":
			connection = len(vs) > 0
		case "Date":
			dated = len(vs) > 0
		case "Transfer-Encoding":
			if bodiless {
				continue
			}
			if len(vs) > 0 {
				framed = true
			}
		case "Trailer":
			if len(vs) > 0 && !bodiless {
				framed = true
			}
		}
		b = appendField(b, k, vs)
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
	if !length && !bodiless {
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

// inform sends an informational response (1xx but 101) at once, after the
// responses before it, as net/http sends one: its status line and the
// fields set so far, but Content-Length and Transfer-Encoding; the fields
// stay for the final response. None goes after the final status or the
// body's first bytes (net/http ignores it there too), off the
// engine's connection or to an HTTP/1.0 client, which RFC 9110 §15.2
// forbids (net/http sends it one).
func (w *writer) inform(status int) {
	st := w.st
	if st == nil || w.status != 0 || w.started || w.hijacked || !w.http11 {
		return
	}
	st.outMu.Lock()
	if st.out == nil {
		st.out = getBatch()
	}
	b := append(st.out.b, "HTTP/1.1 "...)
	b = append(b, '0'+byte(status/100), '0'+byte(status/10%10), '0'+byte(status%10), ' ')
	b = appendReason(b, status)
	b = append(b, '\r', '\n')
	for k, vs := range w.Header() {
		if k != "Content-Length" && k != "Transfer-Encoding" {
			b = appendField(b, k, vs)
		}
	}
	st.out.b = append(b, '\r', '\n')
	st.outMu.Unlock()
	_ = st.flush()
}

// appendReason appends the reason phrase of status, net/http's: its text,
// or "status code N" for a status without one. (nbio's writer sends such a
// status as 200: docs/web.md lists it.)
func appendReason(b []byte, status int) []byte {
	if text := http.StatusText(status); text != "" {
		return append(b, text...)
	}
	return strconv.AppendInt(append(b, "status code "...), int64(status), 10)
}

// appendField appends the field lines of k, as net/http writes a response's
// fields: none if k is not a token, and CR and LF in a value as spaces, so
// that a value a handler took from a request cannot end the head and start
// a response of its own (response splitting).
func appendField(b []byte, k string, vs []string) []byte {
	if !validFieldName(k) {
		return b
	}
	for _, v := range vs {
		b = append(b, k...)
		b = append(b, ':', ' ')
		if strings.ContainsAny(v, "\r\n") {
			v = fieldNewlines.Replace(v)
		}
		b = append(b, v...)
		b = append(b, '\r', '\n')
	}
	return b
}

var fieldNewlines = strings.NewReplacer("\r", " ", "\n", " ")

// validFieldName reports whether k is a token (RFC 9110 §5.1).
func validFieldName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !tokenBytes[k[i]] {
			return false
		}
	}
	return true
}

// cleanFields makes h what appendField would write, for nbio's writer,
// which writes names and values as they are: a field whose name is not a
// token goes, CR and LF in a value become spaces.
func cleanFields(h http.Header) {
	for k, vs := range h {
		if !validFieldName(k) {
			delete(h, k)
			continue
		}
		for i, v := range vs {
			if strings.ContainsAny(v, "\r\n") {
				vs[i] = fieldNewlines.Replace(v)
			}
		}
	}
}

// fixFields cleans the header once, before nbio's writer first takes it.
func (w *writer) fixFields() {
	if !w.fixed {
		w.fixed = true
		cleanFields(w.Header())
	}
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
	if h := testHookFlushed.Load(); h != nil {
		(*h)(len(out.b))
	}
	_, err := st.Conn.Write(out.b) // nbio copies what the socket does not take
	putBatch(out)
	st.outMu.Unlock()
	if err != nil {
		return err
	}
	return st.drain(maxQueued)
}

// testHookFlushed, when set, is told the size of each batch flush hands
// to nbio.
var testHookFlushed atomic.Pointer[func(n int)]

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
