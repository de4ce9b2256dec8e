package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// LateAfter is how far behind its schedule an open-loop request may start
// before it counts as late.
const LateAfter = 10 * time.Millisecond

// ErrBadConfig reports a Config that cannot run.
var ErrBadConfig = errors.New("bad load config")

const (
	defaultTimeout  = 30 * time.Second
	defaultMaxConns = 10000
	// dialConcurrency bounds connection attempts in flight, so that -c 10000
	// opens connections as fast as the server accepts them instead of
	// overflowing its listen backlog and waiting out SYN retransmissions.
	dialConcurrency = 128
)

// runner is the state of one Run.
type runner struct {
	cfg          Config
	reqs         []request
	addrs        []string
	addrTLS      []*tls.Config // per addrs entry: the TLS of its https targets; nil: cleartext
	timeout      time.Duration // <= 0: none
	expectStatus func(int) bool
	expectBody   []byte
	dialer       net.Dialer
	dialSlots    chan struct{}
	shards       []shard
	timeline     timeline
	limits       machineLimits
	sched        schedule // open loop only

	start   time.Time
	ctx     context.Context // done when in-flight requests must be cut off
	cancel  context.CancelFunc
	stopped atomic.Bool // set just before ctx ends
	stopMu  sync.Mutex
	stopAt  time.Time

	issued     atomic.Int64 // closed loop: requests handed out, for Config.Requests
	open       atomic.Int64 // connections open now
	idle       atomic.Int64 // open loop: workers waiting for a request
	dispatched atomic.Int64 // open loop: requests handed to workers
	starting   atomic.Int64 // open loop: workers still opening their first connection

	mu      sync.Mutex
	workers []*worker
}

// Run loads the targets as cfg says and returns the measurements. It blocks
// until the run ends: Requests reached, Duration over, or ctx done (then the
// result covers what finished; requests cut off in flight are not counted).
// It returns an error only for a bad Config (ErrBadConfig, ErrBadTarget);
// failed requests are counted in the Result. Run is safe for concurrent use;
// every goroutine it starts has ended when it returns.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	return r.run(ctx)
}

// run is Run once the Config is checked.
func (r *runner) run(ctx context.Context) (*Result, error) {
	r.ctx, r.cancel = context.WithCancel(context.Background())
	defer r.cancel()
	stopOnCancel := context.AfterFunc(ctx, r.stop)
	defer stopOnCancel()

	r.start = time.Now()
	sampler := r.startProgress()
	var end time.Time
	if r.openLoop() {
		end = r.runOpen()
	} else {
		end = r.runClosed()
	}
	r.stop()
	sampler()
	return r.result(end)
}

func newRunner(cfg Config) (*runner, error) {
	switch {
	case len(cfg.Targets) == 0:
		return nil, fmt.Errorf("%w: no targets", ErrBadConfig)
	case cfg.Connections < 0:
		return nil, fmt.Errorf("%w: connections %d < 0", ErrBadConfig, cfg.Connections)
	case cfg.Requests < 0:
		return nil, fmt.Errorf("%w: requests %d < 0", ErrBadConfig, cfg.Requests)
	case cfg.Duration < 0:
		return nil, fmt.Errorf("%w: duration %s < 0", ErrBadConfig, cfg.Duration)
	case cfg.Rate < 0:
		return nil, fmt.Errorf("%w: rate %g < 0", ErrBadConfig, cfg.Rate)
	case math.IsNaN(cfg.Rate) || math.IsInf(cfg.Rate, 0):
		// NaN would silently run closed loop, +Inf would schedule every
		// request at once.
		return nil, fmt.Errorf("%w: rate %g is not a finite number", ErrBadConfig, cfg.Rate)
	case cfg.MaxConns < 0:
		return nil, fmt.Errorf("%w: max conns %d < 0", ErrBadConfig, cfg.MaxConns)
	case cfg.Pipeline < 0:
		return nil, fmt.Errorf("%w: pipeline %d < 0", ErrBadConfig, cfg.Pipeline)
	case cfg.Pipeline > 1 && (cfg.Rate > 0 || len(cfg.Phases) > 0):
		return nil, fmt.Errorf("%w: pipeline %d: only a closed loop pipelines (no rate or phases)", ErrBadConfig, cfg.Pipeline)
	case len(cfg.Phases) > 0 && cfg.Rate != 0:
		return nil, fmt.Errorf("%w: rate %g and %d phases: set one (each phase has its rate)", ErrBadConfig, cfg.Rate, len(cfg.Phases))
	}
	if len(cfg.Phases) > 0 {
		if err := checkPhases(cfg.Phases); err != nil {
			return nil, err
		}
	}
	if cfg.Connections == 0 {
		cfg.Connections = 1
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = defaultMaxConns
	}
	r := &runner{
		cfg:          cfg,
		timeout:      cfg.Timeout,
		expectStatus: cfg.ExpectStatus,
		expectBody:   cfg.ExpectBody,
		dialSlots:    make(chan struct{}, dialConcurrency),
	}
	if r.timeout == 0 {
		r.timeout = defaultTimeout
	}
	if r.timeout > 0 {
		r.dialer.Timeout = r.timeout
	}
	if r.expectStatus == nil {
		r.expectStatus = is2xx
	}
	addrIndex := map[string]int{}
	for i, t := range cfg.Targets {
		req, err := buildRequest(t)
		if err != nil {
			return nil, fmt.Errorf("target %d: %w", i+1, err)
		}
		key := req.addr
		if req.https {
			key = "https://" + req.serverName + "@" + req.addr
		}
		idx, seen := addrIndex[key]
		if !seen {
			idx = len(r.addrs)
			addrIndex[key] = idx
			r.addrs = append(r.addrs, req.addr)
			r.addrTLS = append(r.addrTLS, clientTLS(cfg.TLS, req))
		}
		req.addrIndex = idx
		r.reqs = append(r.reqs, req)
	}
	if cfg.Pipeline > 1 && len(r.addrs) > 1 {
		return nil, fmt.Errorf("%w: pipeline %d: the targets go to %d addresses; a pipelined batch goes on one connection", ErrBadConfig, cfg.Pipeline, len(r.addrs))
	}
	r.shards = make([]shard, 2*runtime.GOMAXPROCS(0))
	for i := range r.shards {
		r.shards[i].h = newHistogram()
	}
	switch {
	case len(cfg.Phases) > 0:
		r.sched = newSchedule(cfg.Phases)
	case cfg.Rate > 0:
		r.sched = singleRate(cfg.Rate)
	}
	if !r.openLoop() {
		// An open loop's MaxConns is a cap, usually far from reached: its
		// limits are noted only when a connection attempt hits them.
		r.limits.plan(cfg.Connections)
	}
	return r, nil
}

// openLoop reports whether requests start on a schedule (Rate or Phases).
func (r *runner) openLoop() bool { return r.cfg.Rate > 0 || len(r.cfg.Phases) > 0 }

func is2xx(code int) bool { return code >= 200 && code <= 299 }

// stop ends the run: no new requests start and those in flight are cut off.
func (r *runner) stop() {
	r.stopMu.Lock()
	if r.stopAt.IsZero() {
		r.stopAt = time.Now()
	}
	r.stopMu.Unlock()
	r.stopped.Store(true) // before cancel, so that a worker sees it first
	r.cancel()
}

func (r *runner) addWorker() *worker {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := newWorker(r, len(r.workers))
	r.workers = append(r.workers, w)
	return w
}

// startProgress starts the goroutine that calls Config.Progress and returns
// the function that stops it and waits for it.
func (r *runner) startProgress() (stop func()) {
	if r.cfg.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				r.cfg.Progress(r.progress())
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

func (r *runner) progress() Progress {
	p := Progress{Elapsed: time.Since(r.start), Duration: r.cfg.Duration, Total: r.cfg.Requests, Conns: r.open.Load()}
	if r.openLoop() {
		if length := r.openLength(); length < math.MaxInt64 {
			p.Duration = length
			p.Total = r.dueBefore(length)
		}
	}
	r.mu.Lock()
	for _, w := range r.workers {
		served, failed := w.served.Load(), w.failed.Load()
		p.Done += served + failed
		p.Errors += failed
	}
	r.mu.Unlock()
	return p
}

// result gathers what the workers counted. It runs after they all ended.
func (r *runner) result(end time.Time) (*Result, error) {
	res := &Result{
		Start:   r.start,
		Status:  map[int]int64{},
		Elapsed: end.Sub(r.start),
	}
	for _, q := range r.reqs {
		res.Targets = append(res.Targets, q.name)
	}
	if r.openLoop() {
		res.Mode, res.Rate = Open, r.cfg.Rate
		res.Connections = len(r.workers)
		if len(r.cfg.Phases) > 0 {
			res.Phases = append([]Phase(nil), r.cfg.Phases...)
			if length := r.openLength(); length > 0 {
				res.Rate = float64(r.dueBefore(length)) / length.Seconds()
			}
		}
	} else {
		res.Mode, res.Connections = Closed, r.cfg.Connections
		if r.cfg.Pipeline > 1 {
			res.Pipeline = r.cfg.Pipeline
		}
	}
	for _, w := range r.workers {
		res.Requests += w.served.Load()
		res.Sent += w.sent
		res.Bytes += w.bytes
		res.Late += w.late
		res.Connects += w.connects
		res.Reconnects += w.reconnects
		res.Errors.merge(w.errs)
		for code, n := range w.status {
			res.Status[code] += n
		}
	}
	h := newHistogram()
	for i := range r.shards {
		h.Merge(r.shards[i].h)
	}
	if err := res.setHistogram(h); err != nil {
		return nil, err
	}
	res.Timeline = r.timeline.list()
	res.Limits = r.limits.list()
	if r.openLoop() {
		res.Scheduled = r.scheduled()
	}
	res.countNon2xx()
	res.computeRate()
	return res, nil
}

// setHistogram stores h in r, encoded, with its summary.
func (r *Result) setHistogram(h *hdrhistogram.Histogram) error {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("encode histogram: %w", err)
	}
	r.hist = h
	r.Histogram = string(enc)
	r.Latency = summarize(h)
	return nil
}

func (r *Result) computeRate() {
	r.RequestsPerSec = 0
	if r.Elapsed > 0 {
		r.RequestsPerSec = float64(r.Requests) / r.Elapsed.Seconds()
	}
}
