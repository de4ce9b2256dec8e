package load

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Mode names how requests were issued.
type Mode string

const (
	// Closed is a closed loop: each connection sends its next request when the
	// previous response arrives.
	Closed Mode = "closed"
	// Open is an open loop: requests start on a fixed schedule.
	Open Mode = "open"
)

// Result holds every measurement of a run. It marshals to and from JSON
// (durations are integer nanoseconds, the histogram is a base64 HdrHistogram
// V2 compressed encoding of microseconds) and can be merged with results of
// other runs. A Result is not safe for concurrent use while being merged.
type Result struct {
	Mode Mode `json:"mode"`
	// Targets lists "METHOD URL" for each target.
	Targets []string `json:"targets"`
	// Connections is the closed-loop connection count, or the most
	// connections an open-loop run had open at once.
	Connections int `json:"connections"`
	// Pipeline is the closed loop's pipelining depth (Config.Pipeline);
	// 0 when each connection sent one request at a time.
	Pipeline int `json:"pipeline,omitempty"`
	// Rate is the open-loop schedule in requests per second; with Phases,
	// their mean over the planned length.
	Rate float64 `json:"rate"`
	// Phases is the open-loop schedule whose rate changes (Config.Phases);
	// nil for one rate.
	Phases []Phase `json:"phases,omitempty"`

	Start time.Time `json:"start"`
	// Elapsed is how long the run lasted. An open-loop run lasts at least
	// its planned length (Duration, or Requests/Rate), and longer while
	// responses still due arrive.
	Elapsed time.Duration `json:"elapsed_ns"`

	// Requests counts served requests: complete responses that met the
	// expectations (status and body).
	Requests int64 `json:"requests"`
	// Sent counts requests written to a connection.
	Sent int64 `json:"sent"`
	// Errors counts failed requests by cause.
	Errors Errors `json:"errors"`
	// Status counts complete responses by status code, expected or not.
	Status map[int]int64 `json:"status"`
	// Non2xx counts complete responses whose status was not 2xx, expected or
	// not.
	Non2xx int64 `json:"non_2xx"`
	// Bytes counts response bytes read, head and body.
	Bytes int64 `json:"bytes"`
	// RequestsPerSec is Requests divided by Elapsed.
	RequestsPerSec float64 `json:"requests_per_sec"`

	// Latency summarises the latency of served requests. In open loop it
	// counts from the scheduled start, not the actual one.
	Latency Latency `json:"latency"`
	// Histogram is the encoded latency histogram (see Percentile).
	Histogram string `json:"histogram"`

	// Timeline counts what finished in each second of the run.
	Timeline []Second `json:"timeline"`

	// Scheduled is the number of requests the open-loop schedule called for.
	Scheduled int64 `json:"scheduled"`
	// Late counts open-loop requests that started more than LateAfter after
	// their scheduled time, or never started.
	Late int64 `json:"late"`

	// Connects counts connections opened; Reconnects counts those opened
	// because the server closed a keep-alive connection.
	Connects   int64 `json:"connects"`
	Reconnects int64 `json:"reconnects"`

	// Limits notes what limited the run on the client's side, such as file
	// descriptors, local ports or a TLS handshake the client refused; empty
	// when nothing did.
	Limits []string `json:"limits,omitempty"`

	hist *hdrhistogram.Histogram
}

// Errors counts failed requests by cause.
//
// A request is never sent twice unless that is harmless: when a reused
// keep-alive connection turns out closed before any byte of the response
// arrived (the server closed it as idle, most likely), only a GET, HEAD,
// OPTIONS or TRACE request, or one with an Idempotency-Key or
// X-Idempotency-Key header, goes again, once, on a new connection, and then
// counts as a reconnect rather than an error. Any other request counts as
// Closed (or Reset, if the server reset the connection): the server may
// have processed it.
type Errors struct {
	Connect int64 `json:"connect"` // connection attempt failed (not refused), its timeout included
	Refused int64 `json:"refused"` // connection refused
	Timeout int64 `json:"timeout"` // a request sent on an open connection outlasted Config.Timeout (open loop: counted from when it was due)
	Read    int64 `json:"read"`    // reading or parsing the response failed
	Write   int64 `json:"write"`   // writing the request failed
	Reset   int64 `json:"reset"`   // the peer reset the connection
	Closed  int64 `json:"closed"`  // the server closed the connection before any byte of the response; not sent again
	Status  int64 `json:"status"`  // the status code was not expected
	Body    int64 `json:"body"`    // the body lacked Config.ExpectBody
	// TimeoutUnsent counts open-loop requests whose timeout, counted from
	// when they were due, passed while they waited in the generator for a
	// free connection (all MaxConns busy): they were never sent, as a real
	// client that gave up would not send them.
	TimeoutUnsent int64 `json:"timeout_unsent"`
}

// Total returns the sum of all causes.
func (e Errors) Total() int64 {
	return e.Connect + e.Refused + e.Timeout + e.Read + e.Write + e.Reset + e.Closed + e.Status + e.Body + e.TimeoutUnsent
}

// Latency summarises a latency histogram.
type Latency struct {
	Min   time.Duration `json:"min_ns"`
	Mean  time.Duration `json:"mean_ns"`
	Stdev time.Duration `json:"stdev_ns"`
	P50   time.Duration `json:"p50_ns"`
	P75   time.Duration `json:"p75_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p99_9_ns"`
	P9999 time.Duration `json:"p99_99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// Second is one second of the timeline.
type Second struct {
	Second   int   `json:"second"`   // seconds since the start
	Requests int64 `json:"requests"` // served in this second
	Errors   int64 `json:"errors"`   // failed in this second
	Bytes    int64 `json:"bytes"`    // read in this second
	// LatencyTotal sums the latencies of the requests served in this
	// second (their mean is LatencyTotal / Requests); LatencyMax is the
	// longest.
	LatencyTotal time.Duration `json:"latency_total_ns,omitempty"`
	LatencyMax   time.Duration `json:"latency_max_ns,omitempty"`
}

// MeanLatency returns the mean latency of the requests served in this
// second, or 0 if none was.
func (s Second) MeanLatency() time.Duration {
	if s.Requests == 0 {
		return 0
	}
	return s.LatencyTotal / time.Duration(s.Requests)
}

// Percentile returns the latency at percentile p (0 to 100) of served
// requests, or zero when none were served.
func (r *Result) Percentile(p float64) time.Duration {
	if r.hist == nil {
		return 0
	}
	return time.Duration(r.hist.ValueAtPercentile(p)) * time.Microsecond
}

// countNon2xx sets Non2xx from Status.
func (r *Result) countNon2xx() {
	r.Non2xx = 0
	for code, n := range r.Status {
		if code < 200 || code > 299 {
			r.Non2xx += n
		}
	}
}
