package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/loomrt/loom"
)

// Probe paths, named as Kubernetes probes its own components.
const (
	LivezPath  = "/livez"
	ReadyzPath = "/readyz"
)

// ReadyCheckTimeout is when the context of each check given to
// WithReadyCheck ends, so that a hung dependency answers the probe with 503
// instead of a probe timeout, for a check that returns when its context
// ends.
const ReadyCheckTimeout = 2 * time.Second

// ErrNotReady is matched by the error App.Ready returns when the App should
// not be sent traffic.
var ErrNotReady = errors.New("not ready")

// WithProbes serves GET /livez and /readyz for an orchestrator or a load
// balancer. /livez answers 200 while the process serves. /readyz answers
// 200, or 503 while App.Ready finds a reason not to take traffic: Serve has
// been told to stop, the thread watch is tripped, an executor marked
// WithCritical refuses, or a WithReadyCheck fails. Both answer before the
// App's decorators and on no executor, so that neither authentication, a
// rate limit nor a full executor fails them; ?verbose lists each check. It
// applies to New.
func WithProbes() AppOption {
	return appOption(func(a *appSettings) { a.probes = true })
}

// WithReadyCheck adds a check that /readyz and App.Ready run, named name:
// a ping of a database pool, say. An error makes the App not ready; name
// and the error are in /readyz's body. check's ctx ends after
// ReadyCheckTimeout, and check must return when it does: a check that
// ignores ctx holds the probe until it returns. Checks run one after
// another, on the probe's goroutine.
// It implies WithProbes. It applies to New.
func WithReadyCheck(name string, check func(ctx context.Context) error) AppOption {
	if name == "" || check == nil {
		panic("web: WithReadyCheck needs a name and a check")
	}
	return appOption(func(a *appSettings) {
		a.probes = true
		a.readyChecks = append(a.readyChecks, readyCheck{name, check})
	})
}

// WithCritical makes readiness follow the executor of the routes it is
// given to (all of them, given to New): while that executor refuses — it is
// full, or it has rejected a request since the previous readiness probe —
// /readyz answers 503, so that a load balancer moves traffic to instances
// with room. It applies to New, groups and routes.
func WithCritical() Option {
	return routeOption(func(s *routeSettings) { s.critical = true })
}

// WithShutdownDelay keeps Serve serving for d after it is told to stop,
// with /readyz answering 503, before it stops accepting: time for load
// balancers and Kubernetes' endpoints to notice and send no more, so that
// no request finds the listener closed. Zero (the default) stops at once;
// a negative d makes New return an error. It applies to New.
func WithShutdownDelay(d time.Duration) AppOption {
	return appOption(func(a *appSettings) { a.shutdownDelay = d })
}

type readyCheck struct {
	name  string
	check func(ctx context.Context) error
}

// criticalExecutor is an executor readiness follows, with its rejection
// count at the previous probe.
type criticalExecutor struct {
	executor loom.Executor
	rejected uint64
}

// probeState is what readiness reads besides the executors.
type probeState struct {
	mu       sync.Mutex
	critical []*criticalExecutor
}

// markCritical adds e to the executors readiness follows.
func (a *App) markCritical(e loom.Executor) {
	if _, failed := e.(failedExecutor); failed {
		return
	}
	a.probe.mu.Lock()
	defer a.probe.mu.Unlock()
	for _, c := range a.probe.critical {
		if c.executor == e {
			return
		}
	}
	a.probe.critical = append(a.probe.critical, &criticalExecutor{executor: e, rejected: e.Stats().Rejected})
}

// A checkResult is one line of /readyz's answer.
type checkResult struct {
	name string
	err  error
}

// Ready reports whether the App should be sent traffic: nil, or an error
// matching ErrNotReady that says why. It is what /readyz answers (WithProbes),
// for a program that serves probes of its own. It is not ready once Serve
// has been told to stop or App.Shutdown has begun, while the process's
// thread watch is tripped, while an executor marked WithCritical refuses,
// and while a WithReadyCheck fails. Each call counts as a probe for the
// executors' rejections. It is safe for concurrent use.
func (a *App) Ready(ctx context.Context) error {
	var errs []error
	for _, c := range a.readiness(ctx) {
		if c.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, c.err))
		}
	}
	if errs == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrNotReady, errors.Join(errs...))
}

// readiness runs every check and returns each one's result, in order.
func (a *App) readiness(ctx context.Context) []checkResult {
	results := []checkResult{{name: "shutdown"}}
	if a.stopping.Load() {
		results[0].err = errors.New("shutting down")
	}
	threads := checkResult{name: "threads"}
	if s := loom.WatchedThreads(); s.Tripped {
		threads.err = fmt.Errorf("thread watch tripped: %d threads in use, high-water mark %d", s.InUse, s.High)
	}
	results = append(results, threads)

	a.probe.mu.Lock()
	for _, c := range a.probe.critical {
		s := c.executor.Stats()
		r := checkResult{name: "executor " + executorName(s)}
		switch {
		case s.Rejected != c.rejected:
			r.err = fmt.Errorf("rejected %d since the previous probe", s.Rejected-c.rejected)
		case full(s):
			r.err = fmt.Errorf("full: %d running, %d queued", s.Running, s.Queued)
		}
		c.rejected = s.Rejected
		results = append(results, r)
	}
	a.probe.mu.Unlock()

	for _, c := range a.settings.readyChecks {
		cctx, cancel := context.WithTimeout(ctx, ReadyCheckTimeout)
		err := c.check(cctx)
		cancel()
		results = append(results, checkResult{name: c.name, err: err})
	}
	return results
}

// full reports whether an executor with stats s would refuse its next
// task: every slot taken and its queue full. Executors with no bound are
// never full.
func full(s loom.Stats) bool {
	limit := s.Workers
	if s.Limit > 0 {
		limit = s.Limit
	}
	return limit > 0 && s.Running >= limit && s.Queued >= s.QueueCapacity
}

func executorName(s loom.Stats) string {
	if s.Name != "" {
		return s.Name
	}
	return string(s.Kind)
}

// serveProbe answers /livez and /readyz; it reports false for any other
// request.
func (a *App) serveProbe(w http.ResponseWriter, r *http.Request) bool {
	var ready bool
	switch r.URL.Path {
	case LivezPath:
	case ReadyzPath:
		ready = true
	default:
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false // the mux answers 405 or routes it
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, verbose := r.URL.Query()["verbose"]
	if !ready {
		if verbose {
			_, _ = w.Write([]byte("[+]ping ok\nlivez check passed\n"))
			return true
		}
		_, _ = w.Write([]byte("ok\n"))
		return true
	}
	results := a.readiness(r.Context())
	failed := false
	var b strings.Builder
	for _, c := range results {
		if c.err != nil {
			failed = true
			fmt.Fprintf(&b, "[-]%s failed: %v\n", c.name, c.err)
		} else {
			fmt.Fprintf(&b, "[+]%s ok\n", c.name)
		}
	}
	switch {
	case failed:
		w.WriteHeader(http.StatusServiceUnavailable)
		b.WriteString("readyz check failed\n")
		_, _ = w.Write([]byte(b.String()))
	case verbose:
		b.WriteString("readyz check passed\n")
		_, _ = w.Write([]byte(b.String()))
	default:
		_, _ = w.Write([]byte("ok\n"))
	}
	return true
}
