package actor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/loomrt/loom"
)

// DefaultThroughput is the most messages a mailbox handles per turn when its
// Dispatcher does not say (docs/actor.md has the sweep that chose it).
const DefaultThroughput = 64

// DefaultDispatcher is the dispatcher of actors whose Props name none. Its
// executor is the one called "actors": LOOM_EXECUTOR_ACTORS, else
// LOOM_EXECUTOR, else virtual, like every other executor of the application.
const DefaultDispatcher = "actors"

// A Dispatcher runs mailboxes: an executor and a throughput. A mailbox that
// receives a message while idle is handed to the executor as one task (a
// turn), which handles up to Throughput messages and then yields, so that
// one busy actor does not keep the others from the executor.
//
// Every System has the dispatchers of Dispatchers(); WithDispatcher adds or
// replaces one.
type Dispatcher struct {
	// Name is what Props.Dispatcher refers to, and the executor's name:
	// LOOM_EXECUTOR_<NAME> overrides Spec (loom.FromEnv).
	Name string
	// Spec is the executor spec (loom.Parse) when LOOM_EXECUTOR_<NAME> is
	// unset; "" follows LOOM_EXECUTOR, else "virtual".
	Spec string
	// PerActor builds one executor from the spec for every actor, shut down
	// when the actor stops: with "pool:1" an actor always runs on its own
	// goroutine, with "threads:1" on its own OS thread (Akka's
	// PinnedDispatcher).
	PerActor bool
	// Throughput is the most messages a mailbox handles per turn; 0 means
	// DefaultThroughput.
	Throughput int
	// Blocking runs every turn inside loom.Blocking, so that actors whose
	// calls hold OS threads (cgo, raw system calls) count against the
	// process-wide bound of such calls and cannot exhaust the threads.
	Blocking bool
}

// Dispatchers returns the dispatchers every System starts with:
//
//	actors    DefaultDispatcher: LOOM_EXECUTOR_ACTORS, else LOOM_EXECUTOR, else virtual
//	pool      pool:GOMAXPROCS, Akka's fork-join dispatcher: the fastest for message-heavy actors
//	virtual   a new goroutine per turn, Akka's virtual-thread-executor
//	pinned    pool:1 per actor, Akka's PinnedDispatcher (threads:1 locks each to an OS thread)
//	blocking  pool:16 inside loom.Blocking, Akka's default-blocking-io-dispatcher: for actors that block
//
// Each is switched by its own variable, LOOM_EXECUTOR_POOL and so on.
func Dispatchers() []Dispatcher {
	return []Dispatcher{
		{Name: DefaultDispatcher},
		{Name: "pool", Spec: fmt.Sprintf("pool:%d", runtime.GOMAXPROCS(0))},
		{Name: "virtual", Spec: "virtual"},
		{Name: "pinned", Spec: "pool:1", PerActor: true},
		{Name: "blocking", Spec: "pool:16", Blocking: true},
	}
}

// executorFor builds the executor called name: the spec in
// LOOM_EXECUTOR_<NAME>, else fallback if not empty, else LOOM_EXECUTOR, else
// virtual.
func executorFor(name, fallback string) (loom.Executor, error) {
	return loom.FromEnv(name, fallback)
}

// dispatcher is a Dispatcher at work. Turns go to the executor without
// waiting: an executor with a bounded queue (a pool) would otherwise block a
// turn that wakes another mailbox while every worker does the same, and
// nothing would run again. So at most limit turns, one per worker of the
// executor, are handed over at once; the mailboxes beyond wait in the
// dispatcher's ready list, and a finishing turn runs the next of them.
//
// The executor's own queue is left empty but for a moment: a turn queued
// there would wait behind workers that keep running the ready list, for as
// long as it stays full. With a turn per worker, a turn handed over while a
// worker is still leaving its task waits for that worker alone.
type dispatcher struct {
	name       string
	exec       loom.Executor
	throughput int
	limit      int64 // the executor's workers; 0: it never waits (virtual)
	blocking   bool

	_       [64]byte
	running atomic.Int64 // turns handed over and not finished
	ready   atomic.Int64 // mailboxes in the ready list
	_       [64]byte
	mu      sync.Mutex
	first   *cell
	last    *cell
	closed  atomic.Bool // set under mu: shut down; the ready list and held take no more

	tasks atomic.Uint32 // tasks run, to spread them over held
	held  []heldSlot    // one per worker; see hold
}

func newDispatcher(d Dispatcher, exec loom.Executor) *dispatcher {
	st := exec.Stats()
	t := d.Throughput
	if t <= 0 {
		t = DefaultThroughput
	}
	disp := &dispatcher{name: d.Name, exec: exec, throughput: t, blocking: d.Blocking}
	if st.Workers > 0 {
		disp.limit = int64(st.Workers)
		disp.held = make([]heldSlot, st.Workers)
	}
	return disp
}

// schedule runs a turn of c, whose status the caller has just set to
// scheduled.
func (d *dispatcher) schedule(c *cell) {
	if d.limit == 0 {
		d.submit(c)
		return
	}
	for {
		n := d.running.Load()
		if n >= d.limit || d.ready.Load() != 0 {
			break
		}
		if d.running.CompareAndSwap(n, n+1) {
			d.submit(c)
			return
		}
	}
	d.mu.Lock()
	if d.closed.Load() {
		// No worker will come for it: see shutdown.
		d.mu.Unlock()
		c.abandon()
		return
	}
	if d.last == nil {
		d.first = c
	} else {
		d.last.nextReady = c
	}
	d.last = c
	d.ready.Add(1)
	d.mu.Unlock()
	// A turn may have finished after we looked: see finished.
	d.admit()
}

// admit hands ready mailboxes over while there is room.
func (d *dispatcher) admit() {
	for d.ready.Load() != 0 {
		n := d.running.Load()
		if n >= d.limit {
			return
		}
		if !d.running.CompareAndSwap(n, n+1) {
			continue
		}
		c := d.next()
		if c == nil {
			d.running.Add(-1)
			continue
		}
		d.submit(c)
	}
}

// next takes the first mailbox of the ready list, or nil.
func (d *dispatcher) next() *cell {
	d.mu.Lock()
	c := d.first
	if c != nil {
		d.first = c.nextReady
		c.nextReady = nil
		if d.first == nil {
			d.last = nil
		}
		d.ready.Add(-1)
	}
	d.mu.Unlock()
	return c
}

// submit hands c's turn to the executor. A turn the executor refuses runs
// on the caller, whose goroutine then stands in for the executor's; once the
// executor is shut down, c is ended as dropped says.
func (d *dispatcher) submit(c *cell) {
	err := d.exec.Go(c.turnCtx, c.turnTask)
	if err == nil {
		return
	}
	if errors.Is(err, loom.ErrClosed) {
		d.dropped(c)
		return
	}
	d.run(c)
}

// run is the task of c's turns: the turn and those it hands off, then the
// ready mailboxes waiting for room, on the same goroutine. (A virtual
// dispatcher's task calls cell.turn itself; see System.spawn.)
func (d *dispatcher) run(c *cell) {
	if d.limit == 0 {
		d.turn(c) // nothing to hand off or wait for
		return
	}
	// The held slot this goroutine's turns try first: tasks running at
	// once mostly get slots of their own.
	slot := int(d.tasks.Add(1) % uint32(len(d.held)))
	d.finished(d.chain(c, 0, slot), slot)
}

// chain runs c's turn, then the turn it handed off (hold), and so on, at
// most handoffRun turns in a row; a handoff beyond them is scheduled like
// any woken mailbox, behind those waiting. turns counts the turns this
// goroutine has run in a row, for yieldEvery; chain returns it, updated.
func (d *dispatcher) chain(c *cell, turns, slot int) int {
	for run := 1; ; run++ {
		c.slot = slot
		next := d.turn(c)
		if turns++; turns%yieldEvery == 0 {
			runtime.Gosched()
		}
		if next == nil {
			return turns
		}
		if run == handoffRun {
			d.schedule(next)
			return turns
		}
		c = next
	}
}

// handoffRun is how many turns one goroutine runs in a row by handing off,
// at most, before the mailbox it would run next waits its turn behind the
// others ready: a pair of actors that keep waking each other would otherwise
// keep a worker to themselves.
const handoffRun = 16

// A heldSlot holds a mailbox that a turn woke and keeps to run next (see
// hold), where a worker that comes free can take it. Each has a cache line
// of its own: the goroutines running turns at once use different slots.
type heldSlot struct {
	c atomic.Pointer[cell]
	_ [56]byte
}

// hold lets a turn keep w, a mailbox of this dispatcher that it woke, to
// run it next on the same goroutine rather than scheduling it; it returns
// the slot where w is held, trying slot first. That is allowed while every
// worker of a pool is busy: w would only wait in the ready list and run on
// whichever worker came free, so its messages (written by this turn, in this
// core's cache) and its own state would move between cores. With a worker
// idle, w is scheduled, to run beside this turn.
//
// A held mailbox is in a slot of held, not on the turn's stack, so that a
// worker that comes free takes it (finished) instead of leaving it to wait
// for the rest of the turn, which may block, even on w itself (an Ask, a
// full bounded mailbox). The holder writes the slot and then reads running;
// a finishing worker writes running and then reads the slots: both
// sequentially consistent, so at least one sees the other, and whichever
// empties the slot first runs w, or schedules it.
//
// Only a pool's dispatcher holds: a virtual one's goroutines get the same
// from the Go scheduler, which runs a goroutine readied by another next on
// its P; a blocking one's turns run inside loom.Blocking.
func (d *dispatcher) hold(slot int, w *cell) (int, bool) {
	if d.limit == 0 || d.blocking || d.running.Load() < d.limit || d.closed.Load() {
		return 0, false
	}
	for k := range d.held {
		i := (slot + k) % len(d.held)
		s := &d.held[i].c
		if !s.CompareAndSwap(nil, w) {
			continue
		}
		// A worker may have come free meanwhile, or shutdown emptied the
		// slots (it sets closed first): then w is scheduled, unless they
		// took it already.
		if (d.running.Load() < d.limit || d.closed.Load()) && s.CompareAndSwap(w, nil) {
			return 0, false
		}
		return i, true
	}
	return 0, false
}

// unhold takes back the mailbox w that the turn held in slot, to run it
// next; nil if a worker that came free took it.
func (d *dispatcher) unhold(slot int, w *cell) *cell {
	if d.held[slot].c.CompareAndSwap(w, nil) {
		return w
	}
	return nil
}

// takeHeld takes a mailbox that a turn holds, to run it here; nil if none.
func (d *dispatcher) takeHeld() *cell {
	for i := range d.held {
		s := &d.held[i].c
		if w := s.Load(); w != nil && s.CompareAndSwap(w, nil) {
			return w
		}
	}
	return nil
}

// anyHeld reports whether a turn holds a mailbox.
func (d *dispatcher) anyHeld() bool {
	for i := range d.held {
		if d.held[i].c.Load() != nil {
			return true
		}
	}
	return false
}

// dropped is what the executor calls (loom.OnDrop) for a turn of c it
// admitted and will never run: its Shutdown gave up while the turn was
// queued, or refused (closed). c is killed (cell.abandon): its messages go
// to dead letters and its lifecycle ends on this goroutine; so are the
// mailboxes waiting in the ready list for the room it held, which no turn
// of this executor will run either.
func (d *dispatcher) dropped(c *cell) {
	c.abandon()
	if d.limit == 0 {
		return
	}
	for {
		for r := d.next(); r != nil; r = d.next() {
			r.abandon()
		}
		d.running.Add(-1)
		// As in finished: a mailbox may have joined the list after we
		// looked and left it to us.
		if d.ready.Load() == 0 || !d.reacquire() {
			return
		}
	}
}

// turn runs a turn of c, inside loom.Blocking for a Blocking dispatcher,
// and returns the mailbox it handed off. A turn that Blocking refuses
// (SetBlockingLimit's Reject) runs all the same: its mailbox holds the turn
// and nothing else would run it.
func (d *dispatcher) turn(c *cell) *cell {
	if !d.blocking {
		return c.turn()
	}
	if err := loom.Blocking(context.Background(), c.turnFunc); err != nil {
		c.turn()
	}
	return nil // a blocking dispatcher does not hand off
}

// finished ends a counted turn: the ready mailboxes run in its place, on
// this goroutine. It never hands a turn to the executor: its own task still
// holds a worker, and a pool whose queue is full would wait for that worker
// forever. turns is how many turns the goroutine has run in a row.
func (d *dispatcher) finished(turns, slot int) {
	for {
		for c := d.next(); c != nil; c = d.next() {
			turns = d.chain(c, turns, slot)
		}
		// Nothing ready: a mailbox that another turn holds runs here
		// rather than wait for that turn's end (see hold).
		if w := d.takeHeld(); w != nil {
			turns = d.chain(w, turns, slot)
			continue
		}
		d.running.Add(-1)
		// A mailbox may have joined the ready list or a held slot after we
		// looked, seen no room, and left it to us: take the room back.
		if (d.ready.Load() == 0 && !d.anyHeld()) || !d.reacquire() {
			return
		}
	}
}

// yieldEvery is how many turns a worker runs in a row before it lets the
// goroutines waiting for its P run (runtime.Gosched). A worker that keeps
// finding mailboxes ready never blocks, so a goroutine it readies (an Ask's
// caller, an HTTP handler) would otherwise wait until the ready list empties
// or the runtime preempts the worker after 10 ms: the actors' clients stall,
// then everything waits for them at once (docs/design/actor-dispatcher.md).
const yieldEvery = 16

// reacquire takes a slot back if there is room.
func (d *dispatcher) reacquire() bool {
	for {
		n := d.running.Load()
		if n >= d.limit {
			return false
		}
		if d.running.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// shutdown shuts the executor down. The mailboxes still in the ready list
// then wait for a worker that may never come (Shutdown gave up while a turn
// held every worker): they are killed, as dropped says, on this goroutine,
// and so is every mailbox scheduled from then on that finds no room (the
// others find the executor closed).
func (d *dispatcher) shutdown(ctx context.Context) error {
	err := d.exec.Shutdown(ctx)
	d.mu.Lock()
	d.closed.Store(true)
	d.mu.Unlock()
	for c := d.next(); c != nil; c = d.next() {
		c.abandon()
	}
	for c := d.takeHeld(); c != nil; c = d.takeHeld() {
		c.abandon() // its holder's turn did not end: see hold
	}
	if err != nil {
		return fmt.Errorf("dispatcher %s: %w", d.name, err)
	}
	return nil
}
