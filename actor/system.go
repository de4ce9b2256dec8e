package actor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomrt/loom"
)

// A System holds actors and the dispatchers that run them. It is safe for
// concurrent use. Every goroutine it starts is gone when Shutdown returns
// nil.
type System struct {
	logger   *slog.Logger
	clock    Clock
	guardian *cell

	dispatchers map[string]Dispatcher
	shared      map[string]*dispatcher // built on first use, under mu

	mu       sync.Mutex
	registry map[string]*cell // live actors by path, under mu
	live     int              // under mu
	closing  bool             // under mu
	gone     chan struct{}    // closed when closing and live reaches 0

	retiring int           // under mu: per-actor executors shutting down
	retired  chan struct{} // closed when retiring reaches 0, if not nil

	tracer Tracer // nil: none

	deadLetters atomic.Uint64
	subscribers atomic.Pointer[[]*subscriber]
	subMu       sync.Mutex
}

// An Option configures a System.
type Option func(*System)

// WithDispatcher adds d to the System's dispatchers, replacing the one of
// the same name. NewSystem returns an error for an empty name or a negative
// throughput.
func WithDispatcher(d Dispatcher) Option {
	return func(s *System) { s.dispatchers[d.Name] = d }
}

// WithLogger sets where failures are logged; the default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(s *System) { s.logger = l }
}

// WithClock sets the clock of restart limits and backoff; the default is
// the real one. Tests use it to move time by hand.
func WithClock(c Clock) Option {
	return func(s *System) { s.clock = c }
}

// Clock is the time source of supervision.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f on its own goroutine after d, unless stop, which it
	// returns, is called first.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// NewSystem returns a System with the dispatchers of Dispatchers() and those
// opts add. Dispatchers' executors start when the first actor needs them,
// but their specs are checked here: a bad one, from its variable or from
// Dispatcher.Spec, is an error naming the dispatcher, the variable and the
// bad part.
func NewSystem(opts ...Option) (*System, error) {
	s := &System{
		logger:      slog.Default(),
		clock:       realClock{},
		dispatchers: make(map[string]Dispatcher),
		shared:      make(map[string]*dispatcher),
		registry:    make(map[string]*cell),
	}
	for _, d := range Dispatchers() {
		s.dispatchers[d.Name] = d
	}
	for _, o := range opts {
		o(s)
	}
	for name, d := range s.dispatchers {
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("new system: %w: a dispatcher has no name", ErrInvalidProps)
		}
		if d.Throughput < 0 {
			return nil, fmt.Errorf("new system: %w: dispatcher %s: throughput %d is negative", ErrInvalidProps, name, d.Throughput)
		}
		// A bad spec stops the start, before any actor needs it.
		if _, err := loom.SpecFromEnv(name, d.Spec); err != nil {
			return nil, fmt.Errorf("new system: dispatcher %s: %w", name, err)
		}
	}
	s.guardian = &cell{sys: s, children: make(map[string]*cell)}
	return s, nil
}

// dispatcher returns the dispatcher called name for a new actor: the shared
// one, built on first use, or a new one of a PerActor dispatcher.
func (s *System) dispatcher(name string) (disp *dispatcher, own bool, err error) {
	if name == "" {
		name = DefaultDispatcher
	}
	d, ok := s.dispatchers[name]
	if !ok {
		return nil, false, fmt.Errorf("%w: unknown dispatcher %q", ErrInvalidProps, name)
	}
	if d.PerActor {
		exec, err := executorFor(name, d.Spec)
		if err != nil {
			return nil, false, fmt.Errorf("dispatcher %s: %w", name, err)
		}
		return newDispatcher(d, exec), true, nil
	}
	// Under mu, which Shutdown takes before shutting these down.
	if disp := s.shared[name]; disp != nil {
		return disp, false, nil
	}
	exec, err := executorFor(name, d.Spec)
	if err != nil {
		return nil, false, fmt.Errorf("dispatcher %s: %w", name, err)
	}
	disp = newDispatcher(d, exec)
	s.shared[name] = disp
	return disp, false, nil
}

// Spawn starts a top-level actor from p and returns its reference. The
// actor's first message is Started. Errors: ErrInvalidProps (no New, a bad
// name, an unknown dispatcher or a bad dispatcher spec),
// ErrDuplicateName, ErrShutdown; each names the actor.
func (s *System) Spawn(p Props) (Ref, error) { return s.spawn(s.guardian, p) }

func (s *System) spawn(parent *cell, p Props) (Ref, error) {
	path := parent.path + "/" + p.Name
	if p.New == nil {
		return Ref{}, fmt.Errorf("spawn %s: %w: Props.New is nil", path, ErrInvalidProps)
	}
	if p.Name != "" && (strings.Contains(p.Name, "/") || strings.HasPrefix(p.Name, "$")) {
		return Ref{}, fmt.Errorf("spawn %s: %w: a name may not contain '/' or start with '$'", path, ErrInvalidProps)
	}
	if p.Mailbox.Capacity < 0 {
		return Ref{}, fmt.Errorf("spawn %s: %w: mailbox capacity %d is negative", path, ErrInvalidProps, p.Mailbox.Capacity)
	}
	if p.Supervisor.MaxRestarts < 0 || p.Supervisor.Within < 0 || p.Supervisor.Backoff.Min < 0 ||
		p.Supervisor.Backoff.Max < 0 || p.Supervisor.Backoff.RandomFactor < 0 {
		return Ref{}, fmt.Errorf("spawn %s: %w: negative supervisor setting", path, ErrInvalidProps)
	}

	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return Ref{}, fmt.Errorf("spawn %s: %w", path, ErrShutdown)
	}
	disp, own, err := s.dispatcher(p.Dispatcher)
	if err != nil {
		s.mu.Unlock()
		return Ref{}, fmt.Errorf("spawn %s: %w", path, err)
	}
	c := &cell{
		sys:        s,
		parent:     parent,
		newActor:   p.New,
		supervisor: p.Supervisor,
		disp:       disp,
		ownDisp:    own,
		done:       make(chan struct{}),
		free:       new(freeList),
		capacity:   int64(p.Mailbox.Capacity),
		overflow:   p.Mailbox.Overflow,
	}
	if c.capacity > 0 {
		c.room = make(chan struct{}, 1)
	}
	c.user.init()
	c.system.init()
	c.ctx.cell = c
	if disp.limit == 0 && !disp.blocking {
		// A virtual turn never waits in a queue, so the executor never
		// drops one unrun (a closed one refuses it: see submit), and the
		// turn runs as few frames from its new goroutine's start as it
		// can, lest the stack outgrow its first and be copied.
		c.turnTask = func(context.Context) { c.turn() }
		c.turnCtx = context.Background()
	} else {
		c.turnTask = func(context.Context) { disp.run(c) }
		c.turnCtx = loom.OnDrop(context.Background(), func(error) { disp.dropped(c) })
	}
	c.turnFunc = func() { c.turn() } // a blocking dispatcher's: it hands nothing off

	parent.mu.Lock()
	if parent != s.guardian && parent.lifecycle.Load() != alive {
		parent.mu.Unlock()
		s.mu.Unlock()
		s.retireNow(disp, own)
		return Ref{}, fmt.Errorf("spawn %s: %w: the parent is stopping", path, ErrStopped)
	}
	name := p.Name
	if name == "" {
		parent.anon++
		name = fmt.Sprintf("$%d", parent.anon)
	}
	if _, taken := parent.children[name]; taken {
		parent.mu.Unlock()
		s.mu.Unlock()
		s.retireNow(disp, own)
		return Ref{}, fmt.Errorf("spawn %s: %w", path, ErrDuplicateName)
	}
	if parent.children == nil {
		parent.children = make(map[string]*cell)
	}
	parent.children[name] = c
	parent.mu.Unlock()
	c.name, c.path = name, parent.path+"/"+name
	s.registry[c.path] = c
	s.live++
	s.mu.Unlock()

	c.sendSystem(startMsg{})
	return Ref{c}, nil
}

// retireNow shuts down an unused per-actor dispatcher.
func (s *System) retireNow(d *dispatcher, own bool) {
	if own {
		_ = d.shutdown(context.Background())
	}
}

// retire shuts down a stopped actor's own dispatcher on a goroutine that
// Shutdown waits for: the actor's last turn is running on it.
func (s *System) retire(d *dispatcher) {
	s.mu.Lock()
	s.retiring++
	s.mu.Unlock()
	go func() {
		if err := d.shutdown(context.Background()); err != nil {
			s.logger.Error("actor: dispatcher shutdown", "err", err)
		}
		s.mu.Lock()
		s.retiring--
		if s.retiring == 0 && s.retired != nil {
			close(s.retired)
			s.retired = nil
		}
		s.mu.Unlock()
	}()
}

// unregister forgets a stopped actor.
func (s *System) unregister(c *cell) {
	s.mu.Lock()
	if s.registry[c.path] == c {
		delete(s.registry, c.path)
	}
	s.live--
	if s.live == 0 && s.gone != nil {
		close(s.gone)
		s.gone = nil
	}
	s.mu.Unlock()
}

// DispatcherStats returns the Stats of the executor of the shared
// dispatcher called name, and false if no actor has used it yet (or it is a
// PerActor dispatcher, whose executors are the actors' own).
func (s *System) DispatcherStats(name string) (loom.Stats, bool) {
	s.mu.Lock()
	d := s.shared[name]
	s.mu.Unlock()
	if d == nil {
		return loom.Stats{}, false
	}
	return d.exec.Stats(), true
}

// Lookup returns the live actor at path ("/parent/child"), or an error
// wrapping ErrNotFound that names the path.
func (s *System) Lookup(path string) (Ref, error) {
	s.mu.Lock()
	c := s.registry[path]
	s.mu.Unlock()
	if c == nil {
		return Ref{}, fmt.Errorf("lookup %q: %w", path, ErrNotFound)
	}
	return Ref{c}, nil
}

// Shutdown stops every actor, as Stop does (top-level actors finish what is
// queued, their children are stopped first), waits for them, then shuts down
// the dispatchers' executors. An actor waiting out a restart backoff handles
// its queue, the stop included, once the backoff ends. When ctx ends first,
// it kills what is left, lets the executors abandon what they hold (an actor
// whose turn is dropped so ends there: Stopped, watchers, parent, Lookup,
// Done), and returns an error wrapping ctx.Err(); an actor whose Receive is
// still running ends when it returns. Spawn fails with ErrShutdown once it
// has begun. It may be called more than once.
func (s *System) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	var gone chan struct{}
	if s.live > 0 {
		if s.gone == nil {
			s.gone = make(chan struct{})
		}
		gone = s.gone
	}
	s.mu.Unlock()

	s.guardian.mu.Lock()
	top := make([]*cell, 0, len(s.guardian.children))
	for _, c := range s.guardian.children {
		top = append(top, c)
	}
	s.guardian.mu.Unlock()
	for _, c := range top {
		Ref{c}.Stop()
	}

	var errs []error
	if gone != nil {
		select {
		case <-gone:
		case <-ctx.Done():
			s.mu.Lock()
			left := len(s.registry)
			for _, c := range s.registry {
				c.sendSystem(killMsg{})
			}
			s.mu.Unlock()
			errs = append(errs, fmt.Errorf("actor system shutdown: %d actors still running: %w", left, ctx.Err()))
		}
	}
	s.mu.Lock()
	shared := make([]*dispatcher, 0, len(s.shared))
	for _, d := range s.shared {
		shared = append(shared, d)
	}
	s.mu.Unlock()
	for _, d := range shared {
		if err := d.shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	s.mu.Lock()
	var retired chan struct{}
	if s.retiring > 0 {
		if s.retired == nil {
			s.retired = make(chan struct{})
		}
		retired = s.retired
	}
	s.mu.Unlock()
	if retired != nil {
		select {
		case <-retired:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("actor system shutdown: pinned dispatchers: %w", ctx.Err()))
		}
	}
	return errors.Join(errs...)
}
