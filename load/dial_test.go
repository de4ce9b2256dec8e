package load

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// scriptedDial is a Config.Dial that opens real TCP connections and makes
// the run's failWrite-th write (counting from 1, over every connection)
// fail: it writes the first partial bytes of it, then returns err. Every
// other write and read goes to the socket.
type scriptedDial struct {
	failWrite int
	partial   int
	err       error

	mu     sync.Mutex
	writes int
	dials  int
}

func (s *scriptedDial) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.dials++
	s.mu.Unlock()
	return &scriptedConn{Conn: nc, s: s}, nil
}

type scriptedConn struct {
	net.Conn
	s *scriptedDial
}

func (c *scriptedConn) Write(p []byte) (int, error) {
	c.s.mu.Lock()
	c.s.writes++
	fail := c.s.writes == c.s.failWrite
	c.s.mu.Unlock()
	if !fail {
		return c.Conn.Write(p)
	}
	n, err := c.Conn.Write(p[:c.s.partial])
	if err != nil {
		return n, err
	}
	return n, c.s.err
}

func connReset() error {
	return &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ECONNRESET)}
}

// TestWriteFailureResendRule makes one write of a run fail, deterministically,
// through Config.Dial, against a real server that answers every request. A
// request whose write fails goes again on a new connection only when the
// connection was reused, the error says the server closed it, and either
// nothing was written or the request is replayable (worker.go try's and
// pipeline.go's resend rule, each term of it).
func TestWriteFailureResendRule(t *testing.T) {
	const partial = 5 // bytes of the failed write that reach the server
	for _, tc := range []struct {
		name      string
		method    string
		failWrite int // 1: the first write, on a new connection; 2: on a reused one
		partial   int
		err       error
		resend    bool
		want      func(Errors) int64 // the count the failure lands in
	}{
		{"POST, nothing written, reset", "POST", 2, 0, connReset(), true, nil},
		{"POST, part written, reset", "POST", 2, partial, connReset(), false, func(e Errors) int64 { return e.Reset }},
		{"GET, part written, reset", "GET", 2, partial, connReset(), true, nil},
		{"GET, nothing written, other error", "GET", 2, 0, errors.New("injected"), false, func(e Errors) int64 { return e.Write }},
		{"GET, nothing written, reset, new connection", "GET", 1, 0, connReset(), false, func(e Errors) int64 { return e.Reset }},
	} {
		for _, pipeline := range []int{0, 2} {
			name := tc.name
			if pipeline > 0 {
				name += ", pipelined"
			}
			t.Run(name, func(t *testing.T) {
				url, seen := dropServer(t, 1<<20)
				target := Target{Method: tc.method, URL: url}
				if tc.method == "POST" {
					target.Body = []byte(`{"n":1}`)
				}
				batch := int64(max(pipeline, 1))
				sd := &scriptedDial{failWrite: tc.failWrite, partial: tc.partial, err: tc.err}
				res := mustRun(t, Config{Targets: []Target{target}, Connections: 1, Requests: 2 * batch,
					Pipeline: pipeline, Timeout: 10 * time.Second, Dial: sd.dial})

				wantServed, wantFailed, wantDials := 2*batch, int64(0), 2
				if !tc.resend {
					wantServed, wantFailed = batch, batch
					if tc.failWrite == 2 { // the failed batch was the last
						wantDials = 1
					}
				}
				if res.Requests != wantServed || res.Errors.Total() != wantFailed {
					t.Errorf("served %d, errors %+v; want %d served, %d failed", res.Requests, res.Errors, wantServed, wantFailed)
				}
				if tc.want != nil && tc.want(res.Errors) != wantFailed {
					t.Errorf("errors %+v; want all %d failures of the injected write's kind", res.Errors, wantFailed)
				}
				// The server read every request written whole, once.
				if got := seen.Load(); got != wantServed {
					t.Errorf("server read %d requests; want %d", got, wantServed)
				}
				sd.mu.Lock()
				dials := sd.dials
				sd.mu.Unlock()
				if dials != wantDials || res.Connects != int64(wantDials) {
					t.Errorf("Config.Dial called %d times, connects %d; want %d", dials, res.Connects, wantDials)
				}
			})
		}
	}
}

// TestDialReturningNothing: a Config.Dial that returns neither a
// connection nor an error fails each attempt as a connect error naming it,
// rather than crashing the run.
func TestDialReturningNothing(t *testing.T) {
	url, _ := dropServer(t, 1<<20)
	dial := func(context.Context, string, string) (net.Conn, error) { return nil, nil }
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Requests: 1, Dial: dial})
	if res.Requests != 0 || res.Errors.Connect != 1 || res.Errors.Total() != 1 {
		t.Errorf("served %d, errors %+v; want one connect error", res.Requests, res.Errors)
	}
}

// TestDialGetsTheTimeout: Config.Dial's context ends at Config.Timeout, and
// a dial that waits for it is a connect error.
func TestDialGetsTheTimeout(t *testing.T) {
	url, _ := dropServer(t, 1<<20)
	var addr string
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		addr = network + " " + a
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("no deadline")
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Requests: 1, Timeout: 50 * time.Millisecond, Dial: dial})
	if res.Errors.Connect != 1 || res.Errors.Total() != 1 {
		t.Errorf("errors %+v; want one connect error", res.Errors)
	}
	if want := "tcp " + strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"); addr != want {
		t.Errorf("Dial got %q; want %q", addr, want)
	}
}

// TestDialErrorIsClassified: an error from Config.Dial is classified as a
// net.Dialer's is: a refusal counts as refused.
func TestDialErrorIsClassified(t *testing.T) {
	url, _ := dropServer(t, 1<<20)
	dial := func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Requests: 1, Dial: dial})
	if res.Errors.Refused != 1 || res.Errors.Total() != 1 {
		t.Errorf("errors %+v; want one refused", res.Errors)
	}
}

// stallingDial is a Config.Dial whose connections hold the first response
// back until the run stops, and then deliver it: they ignore the deadline
// in the past that a stop sets to cut reads off, and take it as the cue to
// let the response through. A request so answered completed after the
// end of the run.
type stallingDial struct {
	written chan struct{} // closed after the first write
	stopped chan struct{} // closed when a stop's deadline is set
	once    sync.Once
	stop    sync.Once
}

func newStallingDial() *stallingDial {
	return &stallingDial{written: make(chan struct{}), stopped: make(chan struct{})}
}

func (s *stallingDial) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &stallingConn{Conn: nc, s: s}, nil
}

type stallingConn struct {
	net.Conn
	s *stallingDial
}

func (c *stallingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.s.once.Do(func() { close(c.s.written) })
	return n, err
}

func (c *stallingConn) Read(p []byte) (int, error) {
	<-c.s.stopped
	return c.Conn.Read(p)
}

func (c *stallingConn) SetDeadline(t time.Time) error {
	if !t.IsZero() && t.Before(time.Now().Add(-time.Hour)) {
		c.s.stop.Do(func() { close(c.s.stopped) })
		return nil
	}
	return c.Conn.SetDeadline(t)
}

// TestResponseAfterTheStopIsNotCounted: a response that arrives whole after
// the run stopped is not counted, served or failed, as in wrk; the run
// ends with it (closed.go and pipeline.go, the r.stopped.Load() after a
// response).
func TestResponseAfterTheStopIsNotCounted(t *testing.T) {
	for _, pipeline := range []int{0, 2} {
		t.Run("pipeline "+strconv.Itoa(pipeline), func(t *testing.T) {
			url, seen := dropServer(t, 1<<20)
			sd := newStallingDial()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-sd.written
				cancel()
			}()
			res, err := Run(ctx, Config{Targets: []Target{{URL: url}}, Connections: 1, Pipeline: pipeline, Timeout: 10 * time.Second, Dial: sd.dial})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 0 || res.Errors.Total() != 0 {
				t.Errorf("served %d, errors %+v; want nothing counted after the stop", res.Requests, res.Errors)
			}
			if seen.Load() == 0 {
				t.Error("the server read no request: the response was not held back, it never existed")
			}
		})
	}
}
