package load

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// Target is one request of the mix. A run takes its targets round-robin.
type Target struct {
	// Method is the request method; empty means GET.
	Method string
	// URL is an absolute http:// or https:// URL. An https target is
	// served over TLS (Config.TLS), speaking HTTP/1.1.
	URL string
	// Header is sent with the request; nil means no extra headers. Host,
	// Content-Length and User-Agent are set by the generator unless given here.
	Header http.Header
	// Body is the request body; nil means none.
	Body []byte
}

// Config describes a run. The zero value of each field means what its comment
// says; Targets is the only required field.
type Config struct {
	// Targets are the requests, taken round-robin (a mix such as GET and POST).
	Targets []Target

	// Connections is the number of connections of a closed-loop run; zero
	// means 1. Ignored in open loop (Rate > 0 or Phases).
	Connections int

	// Requests stops the run after exactly this many requests (served or
	// failed); zero means no count limit.
	Requests int64

	// Duration stops the run after this long; zero means no time limit. With
	// neither Requests nor Duration the run lasts until ctx ends.
	Duration time.Duration

	// Rate, when positive, makes the run open loop: requests start on a fixed
	// schedule of Rate per second whatever the responses, and latency counts
	// from the scheduled start. Such a run lasts its planned length,
	// Duration or Requests/Rate (whichever ends first), even when its last
	// request went out long before, and longer while responses still due
	// arrive (up to Timeout).
	Rate float64

	// Phases, when not empty, make the run open loop with a rate that
	// changes: Phases[0].Rate per second for Phases[0].Duration, then the
	// next phase, and so on, as Rate does for one. The run's planned length
	// is the phases' total, or less when Duration or Requests ends it first.
	// Rate must then be zero; each phase's Duration must be positive and its
	// Rate finite and not negative (zero is a pause). Nil means one rate, Rate.
	Phases []Phase

	// Pipeline, when above 1, makes each connection of a closed-loop run
	// send this many requests at once, back to back on one write (HTTP/1.1
	// pipelining, as wrk's pipeline script does), then read their responses
	// in order before sending the next batch. Each response's latency counts
	// from the batch's write. Every target must then go to the same host and
	// port, and the run must be closed loop. Zero or one sends one request at
	// a time.
	Pipeline int

	// MaxConns caps the connections of an open-loop run; zero means 10,000.
	// When every connection is busy, due requests wait and count as late.
	MaxConns int

	// Timeout bounds each request, and each connection attempt; zero means
	// 30 s, negative means no timeout. In open loop a request's timeout
	// runs from when it was due: one still waiting for a free connection
	// when it passes is not sent (Errors.TimeoutUnsent).
	Timeout time.Duration

	// TLS configures the connections to https:// targets; nil verifies the
	// server's certificate against the system's roots. Its ServerName,
	// when empty, is each target's host, and its NextProtos are replaced by
	// HTTP/1.1 alone. Each connection makes a full handshake when it opens
	// (no session resumption); keep-alive connections then reuse it.
	TLS *tls.Config

	// Dial, when non-nil, opens each connection of the run in place of a
	// net.Dialer, with network "tcp" and the target's host:port as addr
	// (a SOCKS proxy, a connection with chosen socket options, a conn
	// that counts its bytes). ctx ends at Timeout, or when the run stops;
	// Dial must return by then. An https target's TLS handshake is made on
	// the connection it returns. Nil means a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// ExpectStatus reports whether a status code counts as served; nil means
	// 2xx. See ParseStatus.
	ExpectStatus func(code int) bool

	// ExpectBody, when non-nil, must occur in the response body for the
	// request to count as served.
	ExpectBody []byte

	// Progress, when non-nil, is called about ten times a second from a single
	// goroutine while the run lasts. It must return quickly.
	Progress func(Progress)
}

// Progress is a snapshot of a run in flight, given to Config.Progress.
type Progress struct {
	Elapsed  time.Duration // since the run started
	Duration time.Duration // planned length; zero when unknown
	Done     int64         // requests finished, served or failed
	Total    int64         // planned requests; zero when unknown
	Errors   int64         // failed requests so far
	Conns    int64         // connections open now
}
