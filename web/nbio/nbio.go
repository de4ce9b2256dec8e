// Package nbio serves web Apps on github.com/lesismal/nbio's event-loop
// HTTP server: a few poller goroutines own every connection, and a
// connection costs a goroutine only while one of its requests runs. Idle
// keep-alive connections are then cheap, which is where it beats net/http;
// at ordinary connection counts net/http is as fast or faster.
//
// Importing the package registers the engine "nbio", which LOOM_ENGINE=nbio
// selects for every App made after; web.WithEngine(nbio.Engine()) selects it
// for one App. Programs that do not import it do not link nbio.
//
// Requests go to the App, and so to their route's executor, exactly as
// under net/http. What differs is in docs/web.md ("choosing an engine"):
// nbio reads a whole request body before the handler runs (bounded by the
// largest BodyLimit of the App), a request the parser refuses closes the
// connection without a response, and WebSockets (which need Hijack on a
// blocking connection) are refused.
package nbio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"

	"github.com/loomrt/loom/web"
)

func init() {
	web.RegisterEngine(Engine())
	// nbio logs every accepted and refused connection at Info; the App logs
	// what matters itself.
	logging.SetLevel(logging.LevelError)
}

// ErrHijack is the error a handler's Hijack gets under nbio: a connection
// owned by the event loop cannot be handed over as a blocking net.Conn, so
// the standard WebSocket upgrade cannot work.
var ErrHijack = errors.New("nbio engine: Hijack is not supported (WebSockets need LOOM_ENGINE=std)")

// Engine returns the nbio engine, for web.WithEngine.
func Engine() web.Engine { return engine{} }

type engine struct{}

func (engine) Name() string { return "nbio" }

// NewServer returns a server that serves srv.Handler with srv's limits. The
// engine runs nbio in its non-blocking mode (no goroutine per connection:
// that is the point of it), with one poller per two CPUs, and hands each
// complete request to a goroutine of its own that lives for that request
// only, instead of nbio's pool: the route's executor is what bounds and
// queues handlers, and a second pool in front of it would queue them twice.
func (engine) NewServer(srv *http.Server, s web.EngineSettings) (web.EngineServer, error) {
	if srv.TLSConfig != nil {
		return nil, errors.New("TLS is not supported by the nbio engine")
	}
	idle := srv.IdleTimeout
	if idle <= 0 {
		idle = srv.ReadTimeout
	}
	if idle <= 0 {
		idle = web.DefaultIdleTimeout
	}
	headerTimeout := srv.ReadHeaderTimeout
	if headerTimeout <= 0 {
		headerTimeout = srv.ReadTimeout
	}
	maxHeader := srv.MaxHeaderBytes
	if maxHeader <= 0 {
		maxHeader = http.DefaultMaxHeaderBytes
	}
	writeTimeout := srv.WriteTimeout
	if writeTimeout <= 0 {
		writeTimeout = s.WriteTimeout
	}
	sv := &server{
		onShutdown:    s.OnShutdown,
		handler:       srv.Handler,
		headerTimeout: headerTimeout,
		bodyTimeout:   s.BodyTimeout,
		reading:       map[*nbio.Conn]*arrival{},
		done:          make(chan struct{}),
		swept:         make(chan struct{}),
		idle:          make(chan struct{}, 1),
	}
	sv.config = nbhttp.Config{
		Name:          "loom",
		Network:       "tcp",
		IOMod:         nbhttp.IOModNonBlocking,
		NPoller:       0, // nbio's default: a quarter of the CPUs, at least one
		KeepaliveTime: idle,
		WriteTimeout:  writeTimeout,
		// The parser keeps at most this much unparsed: a request line and
		// headers larger than the limit (plus net/http's 4 KiB of slack)
		// close the connection.
		ReadLimit:         maxHeader + 4096,
		MaxHTTPBodySize:   int(s.BodyLimit),
		Handler:           http.HandlerFunc(sv.serveHTTP),
		ServerExecutor:    sv.execute,
		SupportServerOnly: true,
	}
	return sv, nil
}

// server is one serve of an App on nbio.
type server struct {
	onShutdown    func() // nil: none
	handler       http.Handler
	headerTimeout time.Duration
	bodyTimeout   time.Duration
	config        nbhttp.Config

	mu       sync.Mutex
	eng      *nbhttp.Engine
	ln       *pausingListener
	reading  map[*nbio.Conn]*arrival // connections part-way through a request
	closing  atomic.Bool
	inFlight atomic.Int64
	idle     chan struct{} // signalled when inFlight drops to 0 while closing
	done     chan struct{} // closed when the engine has stopped
	swept    chan struct{} // closed when the sweeper has ended
	stopOnce sync.Once
}

// Serve serves on ln until Shutdown or Close, then returns
// http.ErrServerClosed.
func (s *server) Serve(ln net.Listener) error {
	pl := &pausingListener{Listener: ln, closed: make(chan struct{})}
	conf := s.config
	conf.Addrs = []string{ln.Addr().String()}
	used := false
	conf.Listen = func(string, string) (net.Listener, error) {
		if used {
			return nil, errors.New("nbio engine: one listener only")
		}
		used = true
		return pl, nil
	}
	eng := nbhttp.NewEngine(conf)
	eng.OnOpen(s.onOpen)
	eng.OnData(s.onData)
	eng.OnClose(s.onClose)
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		_ = ln.Close()
		return http.ErrServerClosed
	}
	s.eng, s.ln = eng, pl
	s.mu.Unlock()
	if s.headerTimeout > 0 {
		go s.sweep()
	} else {
		close(s.swept)
	}
	if err := eng.Start(); err != nil {
		s.stop()
		return fmt.Errorf("nbio: start: %w", err)
	}
	<-s.done
	return http.ErrServerClosed
}

// onOpen runs on the accepting goroutine once nbio has set the connection
// up, before any of its data is read; taking the lock that onData takes
// orders the two for the race detector, which cannot see that epoll does.
func (s *server) onOpen(net.Conn) {
	s.mu.Lock()
	s.mu.Unlock() //nolint:staticcheck // an empty critical section on purpose
}

// arrival is how far a request has come in, for the sweeper.
type arrival struct {
	deadline time.Time // zero: none (the body has no timeout)
	inBody   bool      // the blank line that ends the headers has come
	tail     []byte    // the last bytes of the headers so far, up to 3
	size     int       // the bytes of the request line and headers so far
}

var endOfHeaders = []byte("\r\n\r\n")

// onData sets the deadline of a request as its bytes arrive — the header
// timeout from its first byte, then the body timeout from the end of its
// headers, as net/http counts them — and hands the data to nbio's parser.
func (s *server) onData(c *nbio.Conn, data []byte) {
	inBody := false
	s.mu.Lock()
	if s.headerTimeout > 0 {
		a := s.reading[c]
		if a == nil {
			a = &arrival{deadline: time.Now().Add(s.headerTimeout)}
			s.reading[c] = a
		}
		if !a.inBody && s.headersEnd(a, data) {
			a.inBody = a.size <= s.config.ReadLimit
			a.deadline = time.Time{}
			if s.bodyTimeout > 0 {
				a.deadline = time.Now().Add(s.bodyTimeout)
			}
		}
		inBody = a.inBody
	}
	s.mu.Unlock()
	pc, ok := c.Session().(nbhttp.ParserCloser)
	if !ok {
		c.DataHandler()(c, data)
		return
	}
	if err := s.parse(pc, data); err != nil {
		refuse(c, err, inBody)
		// At once: nbio's parser cannot go on after an error. A client
		// still sending may get a reset instead of the answer.
		_ = c.CloseWithError(err)
	}
}

// parse feeds data to nbio's parser; a panic in it is a parse error, as it
// is in nbio's own data handler.
func (s *server) parse(pc nbhttp.ParserCloser, data []byte) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("nbio parser panic: %v", v)
		}
	}()
	return pc.Parse(data)
}

// refuse answers a request nbio's parser refused as net/http and the App
// answer one they refuse — 431 for headers over the limit, 413 for a body
// over the App's largest BodyLimit, 501 for a transfer coding it does not
// know, 400 otherwise; the caller closes the connection (nbio would close
// it without a word).
func refuse(c *nbio.Conn, err error, inBody bool) {
	status := "400 Bad Request"
	switch {
	case errors.Is(err, nbhttp.ErrTooLong) && inBody:
		status = "413 Request Entity Too Large"
	case errors.Is(err, nbhttp.ErrTooLong):
		status = "431 Request Header Fields Too Large"
	case strings.Contains(err.Error(), "unsupported transfer encoding"):
		_, _ = io.WriteString(c, "HTTP/1.1 501 Not Implemented"+errorHeaders+"Unsupported transfer encoding")
		return
	}
	_, _ = io.WriteString(c, "HTTP/1.1 "+status+errorHeaders+status)
}

// errorHeaders are those of net/http's answer to a request it cannot parse.
const errorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// badRequest is the status line and body net/http sends for a request it
// refuses before routing, with why.
func badRequest(w http.ResponseWriter, r *http.Request, why string) {
	r.Close = true
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, "400 Bad Request: "+why)
}

// validHeaders reports what net/http would refuse in r's header that nbio's
// parser lets through: an HTTP/1.1 request without Host, or a header name
// that is not a token.
func validHeaders(r *http.Request) string {
	if r.ProtoAtLeast(1, 1) && r.Host == "" && len(r.Header["Host"]) == 0 {
		return "missing required Host header"
	}
	if cl := r.Header["Content-Length"]; len(cl) > 1 {
		for _, v := range cl[1:] {
			if strings.TrimSpace(v) != strings.TrimSpace(cl[0]) {
				return "multiple Content-Length headers"
			}
		}
	}
	for name := range r.Header {
		if name == "" {
			return "invalid header name"
		}
		for i := 0; i < len(name); i++ {
			if !isTokenChar(name[i]) {
				return "invalid header name"
			}
		}
	}
	return ""
}

// isTokenChar reports whether b may appear in an RFC 9110 token.
func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return b < 0x80 && strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// headersEnd reports whether data ends the headers, the blank line split
// across reads or not, counting their bytes in a.size; otherwise it keeps
// data's last bytes in a.tail.
func (s *server) headersEnd(a *arrival, data []byte) bool {
	if len(a.tail) > 0 {
		joined := append(append([]byte(nil), a.tail...), data[:min(len(data), 3)]...)
		if i := bytes.Index(joined, endOfHeaders); i >= 0 {
			a.size += i + len(endOfHeaders) - len(a.tail)
			return true
		}
	}
	if i := bytes.Index(data, endOfHeaders); i >= 0 {
		a.size += i + len(endOfHeaders)
		return true
	}
	a.size += len(data)
	keep := data[max(0, len(data)-3):]
	a.tail = append(append(a.tail[:0:0], a.tail...), keep...)
	a.tail = a.tail[max(0, len(a.tail)-3):]
	return false
}

func (s *server) onClose(c net.Conn, _ error) {
	if nc, ok := c.(*nbio.Conn); ok {
		s.mu.Lock()
		delete(s.reading, nc)
		s.mu.Unlock()
	}
}

// sweep closes connections whose request has not arrived in time: its
// headers within the header timeout of its first byte, its body within the
// body timeout of the end of its headers (nbio reads the whole body before
// the handler runs). nbio's own read deadline is the idle timeout, re-armed
// after every response: a client trickling its headers would otherwise
// hold on for minutes. The sweep runs every quarter of the shorter timeout,
// so a connection is cut off between its deadline and a quarter past it.
func (s *server) sweep() {
	defer close(s.swept)
	period := s.headerTimeout
	if s.bodyTimeout > 0 {
		period = min(period, s.bodyTimeout)
	}
	t := time.NewTicker(max(period/4, time.Millisecond))
	defer t.Stop()
	var late []*nbio.Conn
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			late = late[:0]
			s.mu.Lock()
			for c, a := range s.reading {
				if !a.deadline.IsZero() && !now.Before(a.deadline) {
					late = append(late, c)
					delete(s.reading, c)
				}
			}
			s.mu.Unlock()
			for _, c := range late {
				_ = c.Close()
			}
		}
	}
}

// serveHTTP runs on the request's own goroutine: it hands the request to
// the App and, while the server drains, asks for the connection to be
// closed after the response, as net/http does.
func (s *server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if s.headerTimeout > 0 {
		if res, ok := w.(*nbhttp.Response); ok && res.Parser != nil {
			if nc, ok := res.Parser.Conn.(*nbio.Conn); ok {
				s.mu.Lock()
				delete(s.reading, nc)
				s.mu.Unlock()
			}
		}
	}
	if why := validHeaders(r); why != "" {
		badRequest(w, r, why)
		return
	}
	if s.closing.Load() {
		r.Close = true
		w.Header().Set("Connection", "close")
	}
	s.handler.ServeHTTP(noHijack{w}, r)
}

// execute runs f, nbio's work for a connection's complete requests —
// the App's ServeHTTP, then the writing of the response — on a goroutine of
// its own, counted in flight until the response is out, for Shutdown.
func (s *server) execute(f func()) {
	s.inFlight.Add(1)
	go func() {
		defer s.requestDone()
		f()
	}()
}

func (s *server) requestDone() {
	if s.inFlight.Add(-1) == 0 && s.closing.Load() {
		select {
		case s.idle <- struct{}{}:
		default:
		}
	}
}

// Shutdown stops accepting, waits for the requests in flight until ctx
// ends, then closes every connection. Connections that send a request
// meanwhile get it served with Connection: close.
func (s *server) Shutdown(ctx context.Context) error {
	if !s.closing.Swap(true) && s.onShutdown != nil {
		s.onShutdown()
	}
	s.mu.Lock()
	eng, ln := s.eng, s.ln
	s.mu.Unlock()
	if eng == nil {
		s.stop()
		return nil
	}
	ln.pause()
	for s.inFlight.Load() > 0 {
		select {
		case <-s.idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.stop()
	return nil
}

// Close closes the listener and every connection at once.
func (s *server) Close() error {
	s.closing.Store(true)
	s.stop()
	return nil
}

func (s *server) stop() {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		eng := s.eng
		s.mu.Unlock()
		if eng != nil {
			eng.Stop()
		}
		close(s.done)
		if eng != nil {
			<-s.swept // started by Serve, which set eng
		}
	})
}

// pausingListener lets Shutdown stop accepting before nbio stops: pause
// closes the socket, and Accept then waits for Close instead of failing at
// once, because nbio's accept loop retries a failed Accept until the engine
// stops, without pause.
type pausingListener struct {
	net.Listener
	paused    atomic.Bool
	closed    chan struct{}
	closeOnce sync.Once
}

func (l *pausingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil && l.paused.Load() {
		<-l.closed
	}
	return c, err
}

func (l *pausingListener) pause() {
	l.paused.Store(true)
	_ = l.Listener.Close()
}

func (l *pausingListener) Close() error {
	l.paused.Store(true)
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.closed) })
	if l.paused.Load() && errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// noHijack hides nbio's Hijack, which hands over a connection the event
// loop still reads, behind one that says why it cannot work.
type noHijack struct{ http.ResponseWriter }

func (w noHijack) Hijack() (net.Conn, *bufio.ReadWriter, error) { return nil, nil, ErrHijack }

// Flush sends what is buffered.
func (w noHijack) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach nbio's writer.
func (w noHijack) Unwrap() http.ResponseWriter { return w.ResponseWriter }
