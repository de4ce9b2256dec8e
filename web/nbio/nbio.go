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
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
		handler:       srv.Handler,
		headerTimeout: headerTimeout,
		bodyTimeout:   s.BodyTimeout,
		reading:       map[*nbio.Conn]time.Time{},
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
		ServerExecutor:    func(f func()) { go f() },
		SupportServerOnly: true,
	}
	return sv, nil
}

// server is one serve of an App on nbio.
type server struct {
	handler       http.Handler
	headerTimeout time.Duration
	bodyTimeout   time.Duration
	config        nbhttp.Config

	mu       sync.Mutex
	eng      *nbhttp.Engine
	ln       *pausingListener
	reading  map[*nbio.Conn]time.Time // connections part-way through a request, since when
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

// onData notes when a request's first bytes arrive, for the sweeper, and
// hands the data to nbio's parser.
func (s *server) onData(c *nbio.Conn, data []byte) {
	s.mu.Lock()
	if _, started := s.reading[c]; !started && s.headerTimeout > 0 {
		s.reading[c] = time.Now()
	}
	s.mu.Unlock()
	c.DataHandler()(c, data)
}

func (s *server) onClose(c net.Conn, _ error) {
	if nc, ok := c.(*nbio.Conn); ok {
		s.mu.Lock()
		delete(s.reading, nc)
		s.mu.Unlock()
	}
}

// sweep closes connections whose request has not fully arrived within the
// header timeout plus the body timeout of its first bytes (nbio reads the
// whole body before the handler runs, so the two bound one wait). nbio's
// own read deadline is the idle timeout, re-armed after every response: a
// client trickling its headers would otherwise hold on for minutes. The
// sweep runs every quarter of the header timeout, so a connection is cut
// off between the limit and a quarter past it.
func (s *server) sweep() {
	defer close(s.swept)
	limit := s.headerTimeout + s.bodyTimeout
	t := time.NewTicker(max(s.headerTimeout/4, time.Millisecond))
	defer t.Stop()
	var late []*nbio.Conn
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			late = late[:0]
			s.mu.Lock()
			for c, since := range s.reading {
				if now.Sub(since) >= limit {
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
	s.inFlight.Add(1)
	defer s.requestDone()
	if s.headerTimeout > 0 {
		if res, ok := w.(*nbhttp.Response); ok && res.Parser != nil {
			if nc, ok := res.Parser.Conn.(*nbio.Conn); ok {
				s.mu.Lock()
				delete(s.reading, nc)
				s.mu.Unlock()
			}
		}
	}
	if s.closing.Load() {
		r.Close = true
		w.Header().Set("Connection", "close")
	}
	s.handler.ServeHTTP(noHijack{w}, r)
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
	s.closing.Store(true)
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
