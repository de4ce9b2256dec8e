// Package nbio serves web Apps on github.com/lesismal/nbio's event-loop
// HTTP server: a few poller goroutines own every connection, and a
// connection costs a goroutine only while one of its requests runs. Idle
// keep-alive connections are then cheap, which is where it beats net/http;
// at ordinary connection counts the two cost about the same per request.
//
// Importing the package registers the engine "nbio", which LOOM_ENGINE=nbio
// selects for every App made after; web.WithEngine(nbio.Engine()) selects it
// for one App. Programs that do not import it do not link nbio.
//
// Requests go to the App, and so to their route's executor, exactly as
// under net/http, with the same timeouts and limits, and Hijack works (so
// web/websocket does). The engine checks each request line and field line
// as net/http does before the App sees the request, so both engines serve
// and refuse the same requests (web/nbio/conformance_test.go, FuzzParity).
// What differs is in docs/web.md ("choosing an engine"): nbio reads a whole
// request body before the handler runs (bounded by the largest
// WithBodyLimit of the App), and a request the engine refuses closes the
// connection once its answer is written.
package nbio

import (
	"context"
	"errors"
	"fmt"
	"math"
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

// Engine returns the nbio engine, for web.WithEngine.
func Engine() web.Engine { return engine{} }

type engine struct{}

func (engine) Name() string { return "nbio" }

// NewServer returns a server that serves srv.Handler with srv's limits. The
// engine runs nbio in its non-blocking mode (no goroutine per connection:
// that is the point of it), with one poller per four CPUs, and hands each
// complete request to a goroutine that runs only it meanwhile (execute),
// instead of nbio's pool: the route's executor is what bounds and queues
// handlers, and a second pool in front of it would queue them twice.
func (engine) NewServer(srv *http.Server, s web.EngineSettings) (web.EngineServer, error) {
	if srv.TLSConfig != nil {
		return nil, errors.New("TLS is not supported by the nbio engine: serve TLS on std (LOOM_ENGINE=std), or terminate it in front")
	}
	if srv.Protocols != nil && srv.Protocols.UnencryptedHTTP2() {
		return nil, errors.New("HTTP/2 in cleartext (h2c) is not supported by the nbio engine: serve it on std (LOOM_ENGINE=std), or speak HTTP/1.1 to it")
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
		onShutdown:     s.OnShutdown,
		optionsHandler: !srv.DisableGeneralOptionsHandler,
		handler:        srv.Handler,
		headerTimeout:  headerTimeout,
		idleTimeout:    idle,
		bodyTimeout:    s.BodyTimeout,
		writeTimeout:   writeTimeout,
		// net/http reads a request's line and headers through a reader
		// limited to MaxHeaderBytes plus 4 KiB of slack: so many bytes,
		// up to and including the empty line, and not one more.
		headerLimit: maxHeader + 4096,
		bodyCeiling: s.BodyLimit,
		epoch:       time.Now(),
		conns:       map[*nbio.Conn]*connState{},
		done:        make(chan struct{}),
		swept:       make(chan struct{}),
		idle:        make(chan struct{}, 1),
	}
	// The engine checks the line and headers itself, exactly; nbio's read
	// limit bounds what its parser holds, a declared body whole included,
	// so it must let through the largest request the App takes.
	readLimit := math.MaxInt32
	if s.BodyLimit > 0 && s.BodyLimit < math.MaxInt32/2 {
		readLimit = sv.headerLimit + int(s.BodyLimit) + nbio.DefaultReadBufferSize
	}
	sv.config = nbhttp.Config{
		Name:          "loom",
		Network:       "tcp",
		IOMod:         nbhttp.IOModNonBlocking,
		NPoller:       0, // nbio's default: a quarter of the CPUs, at least one
		KeepaliveTime: noKeepalive,
		// No WriteTimeout: nbio's is a deadline from the request's arrival,
		// cleared by a write that leaves nothing queued; the engine keeps
		// its own, re-armed as the bytes move (sweep).
		ReadLimit: readLimit,
		// nbio's sendfile does not report the bytes it sends at once,
		// which the write timeout counts: files are copied through Write.
		DisableSendfile:   true,
		MaxHTTPBodySize:   int(s.BodyLimit),
		Handler:           http.HandlerFunc(sv.serveHTTP),
		ServerExecutor:    sv.execute,
		SupportServerOnly: true,
	}
	return sv, nil
}

// server is one serve of an App on nbio.
type server struct {
	onShutdown func() // nil: none
	// optionsHandler: OPTIONS * is answered by the engine, as net/http
	// does unless DisableGeneralOptionsHandler.
	optionsHandler bool
	handler        http.Handler
	headerTimeout  time.Duration // 0: none
	idleTimeout    time.Duration // never 0
	bodyTimeout    time.Duration // 0: none
	writeTimeout   time.Duration // 0: none
	headerLimit    int           // bytes of a request's line and headers
	bodyCeiling    int64         // the App's largest body limit; 0: none
	epoch          time.Time     // the origin of connState deadlines
	config         nbhttp.Config

	mu       sync.Mutex
	eng      *nbhttp.Engine
	ln       *pausingListener
	conns    map[*nbio.Conn]*connState // open connections
	fences   []*fence                  // one a poller, once started
	closing  atomic.Bool
	inFlight atomic.Int64
	idle     chan struct{} // signalled when inFlight drops to 0 while closing
	done     chan struct{} // closed when the engine has stopped
	swept    chan struct{} // closed when the sweeper has ended
	stopOnce sync.Once

	wmu     sync.Mutex
	parked  []*worker // the parked workers, the last parked last
	wclosed bool      // the server has stopped: workers end
	reaping bool      // a reaper is running
}

// deadline is d from now on the server's clock, 0 when d is 0.
func (s *server) deadline(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(time.Since(s.epoch) + d)
}

// Serve serves on ln until Shutdown or Close, then returns
// http.ErrServerClosed.
func (s *server) Serve(ln net.Listener) error {
	pl := &pausingListener{Listener: ln, closed: make(chan struct{}), ready: make(chan struct{}),
		accepted: make(chan *nbio.Conn, maxAcceptBatch), acceptErr: make(chan error)}
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
	eng.OnRead(s.onRead)
	eng.OnWrittenSize(s.onWritten)
	eng.OnClose(s.onClose)
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		_ = ln.Close()
		return http.ErrServerClosed
	}
	s.eng, s.ln = eng, pl
	s.mu.Unlock()
	go s.sweep()
	if err := eng.Start(); err != nil {
		s.stop()
		return fmt.Errorf("nbio: start: %w", err)
	}
	fences, err := newFences(eng.Engine, eng.NPoller)
	if err != nil {
		s.stop()
		return err
	}
	s.mu.Lock()
	select {
	case <-s.done: // stopped meanwhile
		closeFences(fences)
	default:
		s.fences = fences
	}
	s.mu.Unlock()
	pl.fences = fences
	close(pl.ready)
	<-s.done
	return http.ErrServerClosed
}

// serveHTTP runs on the request's own goroutine: it hands the request to
// the App as net/http would have, and asks for the connection to be closed
// after the response while the server drains, as net/http does, and after
// a request with both Content-Length and Transfer-Encoding, as RFC 9112
// §6.1 requires.
func (s *server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if asNetHTTP(r) || s.closing.Load() {
		r.Close = true
		w.Header().Set("Connection", "close")
	}
	var st *connState
	if res, ok := w.(*nbhttp.Response); ok && res.Parser != nil {
		st, _ = res.Parser.Conn.(*connState)
	}
	// The App gets a request of its own: nbio recycles r once the handler
	// returns, and a handler may keep its request. net/http gives a
	// request without a body http.NoBody, which the App then need not
	// wrap.
	hr := new(http.Request)
	*hr = *r
	if hr.ContentLength == 0 && len(hr.TransferEncoding) == 0 {
		hr.Body = http.NoBody
	}
	ww := newWriter(w, st, r.ProtoAtLeast(1, 1), r.Method == http.MethodHead)
	h := s.handler
	if r.RequestURI == "*" && r.Method == "OPTIONS" && s.optionsHandler {
		h = globalOptions{}
	}
	h.ServeHTTP(ww, hr)
	if c := w.Header()["Connection"]; len(c) > 0 && !r.Close && hasToken(c[0], "close") {
		r.Close = true // a handler's Connection: close closes, as on net/http
	}
	own := ww.respond(r)
	if !own && ww.finish() {
		r.Close = true
	}
	ww.release()
	if st != nil {
		st.handled()
	}
	if own {
		st.responded(r.Close)
	}
}

// noKeepalive is nbio's idle timeout, its read deadline between requests:
// longer than any connection lives. The engine keeps the App's itself
// (connState.SetReadDeadline, sweep).
const noKeepalive = 100 * 365 * 24 * time.Hour

// globalOptions answers OPTIONS *, as net/http does unless
// http.Server.DisableGeneralOptionsHandler: 200, no body. It discards up to
// 4 KiB of a request body (read before the handler runs, here).
type globalOptions struct{}

func (globalOptions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Length", "0")
}

// execute runs f, nbio's work for a connection's complete requests —
// the App's ServeHTTP, then the writing of the response — on a goroutine of
// its own, counted in flight until the response is out, for Shutdown. The
// goroutine is a parked worker's when there is one (see worker), else a new
// one: there is one goroutine per request in flight, and none waits for
// another to be free.
func (s *server) execute(f func()) {
	s.inFlight.Add(1)
	s.wmu.Lock()
	if n := len(s.parked); n > 0 {
		w := s.parked[n-1]
		s.parked[n-1] = nil
		s.parked = s.parked[:n-1]
		s.wmu.Unlock()
		w.next <- f
		return
	}
	s.wmu.Unlock()
	go s.work(&worker{next: make(chan func(), 1)}, f)
}

// worker is a goroutine that runs requests one after another: parked after
// each, it takes the next request handed to the engine, or ends when it has
// been parked for workerIdle (reap) or the server stops. Under load a
// request then runs on a goroutine whose stack has already grown to what a
// handler needs, as it does on net/http's goroutine per connection, instead
// of growing a new one's, which cost a tenth of the engine's CPU; and the
// goroutines still follow the requests in flight, not the connections.
type worker struct {
	next     chan func() // the next request's work; nil: end
	parkedAt int64       // on the server's clock, under server.wmu
}

// workerIdle is how long a worker stays parked before it ends: long enough
// for the next request under load, short enough that a burst leaves no
// crowd of goroutines behind.
const workerIdle = 50 * time.Millisecond

func (s *server) work(w *worker, f func()) {
	for f != nil {
		s.run(f)
		f = s.park(w)
	}
}

func (s *server) run(f func()) {
	defer s.requestDone()
	f()
}

// park lists w as parked and waits for its next request; nil once the
// server has stopped or w has been parked too long. The first to park
// starts the reaper.
func (s *server) park(w *worker) func() {
	s.wmu.Lock()
	if s.wclosed {
		s.wmu.Unlock()
		return nil
	}
	w.parkedAt = int64(time.Since(s.epoch))
	s.parked = append(s.parked, w)
	if !s.reaping {
		s.reaping = true
		go s.reap()
	}
	s.wmu.Unlock()
	return <-w.next
}

// reap ends, every workerIdle, the workers parked for workerIdle, until
// none is parked or the server stops (stop ends the rest).
func (s *server) reap() {
	t := time.NewTicker(workerIdle)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if !s.retire(int64(time.Since(s.epoch)), false) {
			return
		}
	}
}

// retire ends the workers parked for workerIdle by clock; with stop, all of
// them, and no more park. It reports whether some are still parked; if
// not, the reaper is to end.
func (s *server) retire(clock int64, stop bool) (parked bool) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.wclosed = s.wclosed || stop
	n := 0 // the longest parked are at the bottom
	for n < len(s.parked) && (stop || time.Duration(clock-s.parked[n].parkedAt) >= workerIdle) {
		s.parked[n].next <- nil
		n++
	}
	if n > 0 {
		rest := copy(s.parked, s.parked[n:])
		clear(s.parked[rest:])
		s.parked = s.parked[:rest]
	}
	if len(s.parked) == 0 {
		s.reaping = false
	}
	return len(s.parked) > 0
}

func (s *server) requestDone() {
	if s.inFlight.Add(-1) == 0 && s.closing.Load() {
		select {
		case s.idle <- struct{}{}:
		default:
		}
	}
}

// Shutdown stops accepting, waits for the requests in flight (hijacked
// connections' handlers included) until ctx ends, then closes every
// connection. Connections that send a request meanwhile get it served with
// Connection: close.
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
		s.mu.Lock()
		fences := s.fences
		s.fences = nil
		s.mu.Unlock()
		closeFences(fences)
		s.retire(0, true)
		if eng != nil {
			<-s.swept // started by Serve, which set eng
		}
		// nbio tells a connection's close handler after the handler that
		// hijacked it returns, and not at all once stopped: end the
		// hijackers' reads here.
		s.mu.Lock()
		for _, st := range s.conns {
			st.gone.Store(true)
			if h := st.hijacked.Load(); h != nil {
				h.fail(net.ErrClosed)
			}
		}
		s.mu.Unlock()
	})
}

// pausingListener lets Shutdown stop accepting before nbio stops: pause
// closes the socket, and Accept then waits for Close instead of failing at
// once, because nbio's accept loop retries a failed Accept until the engine
// stops, without pause. It hands each connection over as nbio's own, past
// its poller's fence (see fence).
//
// A goroutine of its own accepts (acceptLoop) and makes each connection's
// descriptor, so that a burst of connections passes each fence once: one
// pass covers every descriptor made before it. Past the fences they wait
// in held for the next Accepts. (A pass waits for the poller's next batch,
// which a busy poller takes milliseconds to come to; a pass per connection
// kept the last of 256 connections opened at once waiting seconds.)
type pausingListener struct {
	net.Listener
	paused    atomic.Bool
	closed    chan struct{}
	closeOnce sync.Once
	ready     chan struct{} // closed once fences is set
	fences    []*fence

	accepted  chan *nbio.Conn // made by acceptLoop, not yet past a fence
	acceptErr chan error      // a failed accept, for nbio's loop to retry
	startOnce sync.Once
	held      []*nbio.Conn // past their fences; used by Accept's caller only
}

// maxAcceptBatch is the most connections one round of fence passes hands
// over, and what acceptLoop may hold made ahead of them.
const maxAcceptBatch = 256

func (l *pausingListener) Accept() (net.Conn, error) {
	select {
	case <-l.ready:
	case <-l.closed:
		l.discard()
		return nil, net.ErrClosed
	}
	if len(l.held) > 0 {
		nc := l.held[0]
		l.held[0] = nil
		l.held = l.held[1:]
		return nc, nil
	}
	l.startOnce.Do(func() { go l.acceptLoop() })
	var first *nbio.Conn
	select {
	case first = <-l.accepted:
	case err := <-l.acceptErr:
		return nil, err
	case <-l.closed:
		l.discard()
		return nil, net.ErrClosed
	}
	batch := l.batch(first)
	passed := make([]bool, len(l.fences))
	for _, nc := range batch {
		i := nc.Hash() % len(l.fences)
		if passed[i] {
			continue
		}
		if err := l.fences[i].pass(l.closed); err != nil {
			for _, nc := range batch {
				_ = nc.Close()
			}
			return nil, err
		}
		passed[i] = true
	}
	l.held = append(l.held, batch[1:]...)
	return first, nil
}

// batch returns first and the connections made since, up to
// maxAcceptBatch.
func (l *pausingListener) batch(first *nbio.Conn) []*nbio.Conn {
	batch := []*nbio.Conn{first}
	for len(batch) < maxAcceptBatch {
		select {
		case nc := <-l.accepted:
			batch = append(batch, nc)
		default:
			return batch
		}
	}
	return batch
}

// acceptLoop accepts connections and makes their descriptors until the
// listener is paused or closed; then it closes those not taken yet.
func (l *pausingListener) acceptLoop() {
	defer l.drain()
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if l.paused.Load() {
				return // Accept waits for Close
			}
			select {
			case l.acceptErr <- err:
				continue
			case <-l.closed:
				return
			}
		}
		// The descriptor nbio will know the connection by is made here.
		nc, err := nbio.NBConn(c)
		if err != nil {
			_ = c.Close() // out of descriptors: this client is turned away
			continue
		}
		if h := testHookMade.Load(); h != nil {
			(*h)()
		}
		select {
		case l.accepted <- nc:
		case <-l.closed:
			_ = nc.Close()
			return
		}
	}
}

// testHookMade, when set, is called by acceptLoop for each connection whose
// descriptor it has made.
var testHookMade atomic.Pointer[func()]

// discard closes the connections accepted and not handed over, once the
// listener is closed.
func (l *pausingListener) discard() {
	for _, nc := range l.held {
		_ = nc.Close()
	}
	l.held = nil
	l.drain()
}

// drain closes the connections made and not taken from accepted.
func (l *pausingListener) drain() {
	for {
		select {
		case nc := <-l.accepted:
			_ = nc.Close()
		default:
			return
		}
	}
}

func (l *pausingListener) pause() {
	l.paused.Store(true)
	_ = l.Listener.Close()
}

func (l *pausingListener) Close() error {
	l.paused.Store(true)
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.closed) })
	if errors.Is(err, net.ErrClosed) { // pause closed it first
		err = nil
	}
	return err
}
