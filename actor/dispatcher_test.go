package actor

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"golang.org/x/sys/unix"
)

// goroutineID returns the running goroutine's number, from its stack
// header: a test-only way to tell goroutines apart.
func goroutineID() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(buf[:bytes.IndexByte(buf, ' ')]), 10, 64)
	return id
}

type where struct {
	goroutine uint64
	thread    int
}

// placements sends n messages, one turn each (a reply in between), and
// returns where each was handled.
func placements(t *testing.T, sys *System, dispatcher string, n int) []where {
	t.Helper()
	r := spawn(t, sys, Props{Dispatcher: dispatcher, New: behaviour(func(c *Context, msg any) {
		if msg == "where" {
			c.Respond(where{goroutineID(), unix.Gettid()})
		}
	})})
	var got []where
	for range n {
		w, err := Ask[where](context.Background(), r, "where")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, w)
	}
	r.Stop()
	waitDone(t, r)
	return got
}

// pinned runs every turn of an actor on the same goroutine, and on one OS
// thread when its spec is threads:1; virtual starts a goroutine per turn.
// A turn takes every message that arrives while it runs, up to the
// throughput, so the virtual check counts turns with a throughput of 1
// (one message, one turn) and checks apart that one turn's messages share
// its goroutine.
func TestDispatchersRunWhereTheySay(t *testing.T) {
	sys := newTestSystem(t,
		WithDispatcher(Dispatcher{Name: "pinned-locked", Spec: "threads:1", PerActor: true}),
		WithDispatcher(Dispatcher{Name: "virtual-1", Spec: "virtual", Throughput: 1}))

	pinned := placements(t, sys, "pinned", 20)
	for _, w := range pinned[1:] {
		if w.goroutine != pinned[0].goroutine {
			t.Fatalf("pinned: turns on goroutines %d and %d; want one", pinned[0].goroutine, w.goroutine)
		}
	}
	other := placements(t, sys, "pinned", 1)
	if other[0].goroutine == pinned[0].goroutine {
		t.Errorf("two pinned actors share goroutine %d", other[0].goroutine)
	}

	locked := placements(t, sys, "pinned-locked", 20)
	for _, w := range locked[1:] {
		if w.thread != locked[0].thread || w.goroutine != locked[0].goroutine {
			t.Fatalf("pinned-locked: turns on %+v and %+v; want one goroutine on one thread", locked[0], w)
		}
	}

	virtual := placements(t, sys, "virtual-1", 20)
	seen := map[uint64]bool{}
	for _, w := range virtual {
		if seen[w.goroutine] {
			t.Fatalf("virtual: goroutine %d ran two turns; want a new one per turn", w.goroutine)
		}
		seen[w.goroutine] = true
	}

	// Three messages queued while the first holds the turn: one turn, one
	// goroutine.
	gate := make(chan struct{})
	turn := make(chan uint64, 3)
	r := spawn(t, sys, Props{Dispatcher: "virtual", New: behaviour(func(c *Context, msg any) {
		if msg == "hold" {
			<-gate
		}
		if _, ok := msg.(string); ok { // not the signals, which have turns of their own
			turn <- goroutineID()
		}
	})})
	r.Tell("hold")
	r.Tell("next")
	r.Tell("next")
	close(gate)
	first := recv(t, turn)
	for range 2 {
		if g := recv(t, turn); g != first {
			t.Errorf("virtual: one turn on goroutines %d and %d; want one", first, g)
		}
	}
}

// The pool dispatcher never runs more turns at once than its workers, and
// never blocks a turn that wakes other actors when its executor's queue is
// full (128 actors, pool:1 with a queue of 1).
func TestPoolDispatcherBounded(t *testing.T) {
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "tiny", Spec: "pool:1,queue=1", Throughput: 1}))
	const n = 128
	var mu sync.Mutex
	running, most := 0, 0
	var wg sync.WaitGroup
	wg.Add(n)
	var refs []Ref
	for range n {
		refs = append(refs, spawn(t, sys, Props{Dispatcher: "tiny", New: behaviour(func(c *Context, msg any) {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			if next, ok := msg.(Ref); ok {
				c.Tell(next, "hop")
			}
			if msg == "hop" {
				wg.Done()
			}
			mu.Lock()
			running--
			mu.Unlock()
		})}))
	}
	for i, r := range refs {
		r.Tell(refs[(i+1)%n]) // each wakes the next from inside a turn
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("turns stalled: a full executor queue blocked a turn")
	}
	if most != 1 {
		t.Errorf("most turns at once: got %d; want 1", most)
	}
}

// Throughput bounds the messages of one turn: with 1, two actors fed at
// once take turns instead of one finishing first.
func TestThroughputYields(t *testing.T) {
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "one", Spec: "pool:1,queue=0", Throughput: 1}))
	var mu sync.Mutex
	var order []string
	gate := make(chan struct{})
	entered := make(chan struct{})
	blocker := spawn(t, sys, Props{Dispatcher: "one", New: behaviour(func(c *Context, msg any) {
		if msg == "block" {
			close(entered)
			<-gate
		}
	})})
	rec := func(name string) Ref {
		return spawn(t, sys, Props{Dispatcher: "one", New: behaviour(func(c *Context, msg any) {
			if _, ok := msg.(int); ok {
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
			}
		})})
	}
	a, b := rec("a"), rec("b")
	blocker.Tell("block")
	<-entered
	for i := range 3 {
		a.Tell(i)
		b.Tell(i)
	}
	close(gate)
	a.Stop()
	b.Stop()
	waitDone(t, a)
	waitDone(t, b)
	if got := strings.Join(order, ""); got != "ababab" {
		t.Errorf("got %s; want ababab (one message per turn)", got)
	}
}

// The blocking dispatcher's turns count against loom.Blocking's bound while
// they run, and leave it when they end; pool's never count. The count is the
// process's, so each case starts once the turns before it have ended: the
// blocking actor's turn goes on after its reply is sent.
func TestBlockingDispatcherCounts(t *testing.T) {
	sys := newTestSystem(t)
	for _, tc := range []struct {
		dispatcher string
		want       int
	}{{"blocking", 1}, {"pool", 0}} {
		r := spawn(t, sys, Props{Dispatcher: tc.dispatcher, New: behaviour(func(c *Context, msg any) {
			if msg == "running" {
				_, running := loom.BlockingLimit()
				c.Respond(running)
			}
		})})
		got, err := Ask[int](context.Background(), r, "running")
		if err != nil || got != tc.want {
			t.Errorf("%s: loom.Blocking calls running: got %d, %v; want %d", tc.dispatcher, got, err, tc.want)
		}
		r.Stop()
		waitDone(t, r)
		waitFor(t, func() bool { _, running := loom.BlockingLimit(); return running == 0 })
	}
}

func TestBadDispatcherOptions(t *testing.T) {
	for _, d := range []Dispatcher{{Name: ""}, {Name: "neg", Throughput: -1}} {
		if _, err := NewSystem(WithDispatcher(d)); !errors.Is(err, ErrInvalidProps) {
			t.Errorf("NewSystem(%+v): got %v; want ErrInvalidProps", d, err)
		}
	}
}

// Tell of a pointer message to a pool actor allocates nothing in the steady
// state: the queue's nodes are recycled.
func TestTellAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	sys := newTestSystem(t)
	var handled atomic.Int64
	r := spawn(t, sys, Props{Dispatcher: "pool", New: behaviour(func(c *Context, msg any) {
		if msg == echoPing {
			handled.Add(1)
		}
	})})
	// The steady state: batches of 50, each handled before the next, as
	// in the echo benchmark.
	const batch, batches = 50, 200
	tell := func() {
		for range batches {
			sent := handled.Load() + batch
			for range batch {
				r.Tell(echoPing)
			}
			for handled.Load() != sent {
				runtime.Gosched()
			}
		}
	}
	tell() // fill the node pool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tell()
	runtime.ReadMemStats(&after)
	// A GC empties the node pool; allow a refill, not one per message.
	const runs = batch * batches
	if n := after.Mallocs - before.Mallocs; n > runs/100 {
		t.Errorf("%d Tells allocated %d times; want at most %d", runs, n, runs/100)
	}
	if got := testing.AllocsPerRun(runs, func() { r.Tell(echoPing) }); got != 0 {
		t.Errorf("AllocsPerRun: got %v; want 0", got)
	}
}

// A worker that keeps finding mailboxes ready lets the goroutines its turns
// ready run every few turns: with one P, a goroutine woken by an actor runs
// after a handful of turns, not after the ready list empties or the runtime
// preempts the worker (10 ms, tens of thousands of turns here). Other load
// on the machine can only make the count smaller.
func TestPoolWorkerLetsWokenGoroutinesRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "ring", Spec: "pool:1,queue=1", Throughput: 1}))
	const n = 8
	var turns atomic.Int64
	var stop atomic.Bool
	refs := make([]Ref, n)
	for i := range n {
		refs[i] = spawn(t, sys, Props{Dispatcher: "ring", New: behaviour(func(c *Context, msg any) {
			if _, ok := msg.(int); ok {
				turns.Add(1)
				if !stop.Load() {
					c.Tell(refs[(i+1)%n], 0)
				}
			}
		})})
	}
	defer stop.Store(true)
	woken := make(chan int64)
	signal := spawn(t, sys, Props{Dispatcher: "ring", New: behaviour(func(c *Context, msg any) {
		if msg == "signal" {
			woken <- turns.Load()
		}
	})})
	for _, r := range refs {
		r.Tell(0) // n tokens: the ready list is never empty
	}
	for turns.Load() < 1000 {
		runtime.Gosched()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sent := <-woken // readied by the signal's turn: its P is the worker's
		if late := turns.Load() - sent; late > 2000 {
			t.Errorf("the woken goroutine ran %d turns later; want at most 2000", late)
		}
	}()
	signal.Tell("signal")
	recv(t, done)
}

// sharedDispatcher returns the System's dispatcher called name.
func sharedDispatcher(sys *System, name string) *dispatcher {
	sys.mu.Lock()
	defer sys.mu.Unlock()
	return sys.shared[name]
}

// While every worker is busy, a mailbox that a turn wakes runs next on the
// turn's goroutine (handed off), ahead of the mailboxes already waiting in
// the ready list. Scheduled like the others, it would run after them.
func TestPoolTurnHandsOffTheMailboxItWakes(t *testing.T) {
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "one", Spec: "pool:1"}))
	var mu sync.Mutex
	var order []string
	rec := func(name string) Ref {
		return spawn(t, sys, Props{Dispatcher: "one", New: behaviour(func(c *Context, msg any) {
			if msg == "hello" {
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
			}
		})})
	}
	woken, waiting := rec("woken"), rec("waiting")
	entered, gate := make(chan struct{}), make(chan struct{})
	waker := spawn(t, sys, Props{Dispatcher: "one", New: behaviour(func(c *Context, msg any) {
		if msg == "go" {
			close(entered)
			<-gate
			c.Tell(woken, "hello")
		}
	})})
	waker.Tell("go")
	recv(t, entered)
	waiting.Tell("hello") // the only worker is busy: into the ready list
	close(gate)
	waker.Stop() // its turn has sent hello to woken once it has stopped
	waitDone(t, waker)
	for _, r := range []Ref{woken, waiting} {
		r.Stop()
		waitDone(t, r)
	}
	if got := strings.Join(order, " "); got != "woken waiting" {
		t.Errorf("order: %s; want woken waiting (the woken mailbox handed off)", got)
	}
}

// A pair of actors that wake each other run by handoff at most handoffRun
// turns in a row once another mailbox waits: then the pair waits its turn.
func TestHandoffRunIsBounded(t *testing.T) {
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "one", Spec: "pool:1", Throughput: 1}))
	var turns atomic.Int64
	var stop atomic.Bool
	defer stop.Store(true)
	var ping, pong Ref
	bounce := func(other *Ref) func() Actor {
		return behaviour(func(c *Context, msg any) {
			if msg == "ball" && !stop.Load() {
				turns.Add(1)
				c.Tell(*other, "ball")
			}
		})
	}
	ping = spawn(t, sys, Props{Dispatcher: "one", New: bounce(&pong)})
	pong = spawn(t, sys, Props{Dispatcher: "one", New: bounce(&ping)})
	ran := make(chan int64, 1)
	other := spawn(t, sys, Props{Dispatcher: "one", New: behaviour(func(c *Context, msg any) {
		if msg == "hello" {
			ran <- turns.Load()
		}
	})})
	ping.Tell("ball")
	for turns.Load() < 1000 {
		time.Sleep(time.Millisecond)
	}
	other.Tell("hello")
	// Read after the Tell: turns the pair ran before other was listed only
	// make late smaller.
	listed := turns.Load()
	if late := recv(t, ran) - listed; late > handoffRun {
		t.Errorf("the pair ran %d turns after another mailbox was ready; want at most %d", late, handoffRun)
	}
}

// wakeThenWait spawns, on the dispatcher "two" of sys, a waker whose one
// turn wakes another actor, runs hold (if not nil), and then waits for the
// woken actor to run: it would wait for ever if the woken actor waited for
// the turn's end. The returned start sends the three messages in one
// Receive, so that one turn handles them, and waits for the turn's end.
func wakeThenWait(t *testing.T, sys *System, hold func()) (start func()) {
	answered, waited := make(chan struct{}), make(chan struct{})
	woken := spawn(t, sys, Props{Dispatcher: "two", New: behaviour(func(c *Context, msg any) {
		if msg == "ping" {
			close(answered)
		}
	})})
	waker := spawn(t, sys, Props{Dispatcher: "two", New: behaviour(func(c *Context, msg any) {
		switch msg {
		case "tell":
			c.Tell(woken, "ping")
		case "hold":
			if hold != nil {
				hold()
			}
		case "wait":
			recv(t, answered)
			close(waited)
		}
	})})
	driver := spawn(t, sys, Props{Dispatcher: "two", New: behaviour(func(c *Context, msg any) {
		if msg == "go" {
			for _, m := range []string{"tell", "hold", "wait"} {
				c.Tell(waker, m)
			}
		}
	})})
	return func() {
		driver.Tell("go")
		recv(t, waited)
	}
}

// A turn keeps what it wakes only while no worker is idle: with one idle, the
// woken mailbox runs there at once, beside the turn.
func TestNoHandoffWhileAWorkerIsIdle(t *testing.T) {
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "two", Spec: "pool:2"}))
	wakeThenWait(t, sys, nil)()
}

// A mailbox held by a turn whose next Receive blocks, waiting for that
// very mailbox, is taken by a worker that comes free meanwhile: held on the
// turn's goroutine alone, it would wait for the turn's end for ever.
func TestHeldHandoffGoesToAFreedWorker(t *testing.T) {
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "two", Spec: "pool:2"}))
	release := blockOneWorker(t, sys)
	// The waker's worker and the blocker's are busy, so the woken actor
	// is held; then the blocker's worker comes free.
	wakeThenWait(t, sys, release)()
}

// The same with a bounded mailbox: a turn that holds the consumer it woke
// and then waits for room in the consumer's mailbox gets it once a worker
// comes free and runs the consumer.
func TestHeldHandoffFreesABoundedMailbox(t *testing.T) {
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "two", Spec: "pool:2"}))
	release := blockOneWorker(t, sys)
	consumer := spawn(t, sys, Props{Dispatcher: "two", Mailbox: Mailbox{Capacity: 1},
		New: behaviour(func(c *Context, msg any) {})})
	sent := make(chan struct{})
	producer := spawn(t, sys, Props{Dispatcher: "two", New: behaviour(func(c *Context, msg any) {
		switch msg {
		case "first":
			c.Tell(consumer, 1) // held: both workers busy
		case "second":
			release()
			c.Tell(consumer, 2) // waits for room: the consumer must run
			close(sent)
		}
	})})
	driver := spawn(t, sys, Props{Dispatcher: "two", New: behaviour(func(c *Context, msg any) {
		if msg == "go" {
			c.Tell(producer, "first")
			c.Tell(producer, "second")
		}
	})})
	driver.Tell("go")
	recv(t, sent)
}

// blockOneWorker spawns, on the dispatcher "two" of sys, an actor whose turn
// holds a worker until release is called (at the latest when the test
// ends), and waits until it does.
func blockOneWorker(t *testing.T, sys *System) (release func()) {
	entered, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	blocker := spawn(t, sys, Props{Dispatcher: "two", New: behaviour(func(c *Context, msg any) {
		if msg == "block" {
			close(entered)
			<-gate
		}
	})})
	blocker.Tell("block")
	recv(t, entered)
	return release
}

// A virtual turn starts on a new goroutine, whose first stack is small: the
// turn runs as few frames from the goroutine's start as it can, with no
// dispatcher loop (nothing to hand off) and no context of its own to derive
// (nothing to drop), lest the stack be copied on a share of the turns.
func TestVirtualTurnRunsShallow(t *testing.T) {
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "v", Spec: "virtual"}))
	stack := make(chan string, 1)
	r := spawn(t, sys, Props{Dispatcher: "v", New: behaviour(func(c *Context, msg any) {
		if msg == "where" {
			buf := make([]byte, 8<<10)
			stack <- string(buf[:runtime.Stack(buf, false)])
		}
	})})
	r.Tell("where")
	got := recv(t, stack)
	for _, deep := range []string{"(*dispatcher).run", "(*dispatcher).turn", "(*core).runWith"} {
		if strings.Contains(got, deep) {
			t.Errorf("a virtual turn runs under %s:\n%s", deep, got)
		}
	}
	if !strings.Contains(got, "(*cell).turn") {
		t.Errorf("not a turn's stack:\n%s", got)
	}
}

// Once the dispatcher has shut down it holds nothing: shutdown took what was
// held, and a mailbox held after it would wait for a turn that may never end.
func TestNoHandoffAfterShutdown(t *testing.T) {
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "two", Spec: "pool:2"}))
	w := spawn(t, sys, Props{Dispatcher: "two", New: behaviour(func(c *Context, msg any) {})})
	d := allBusy(t, sys, "two")
	if _, ok := d.hold(0, w.c); !ok {
		t.Fatal("no handoff with every worker busy")
	}
	if d.unhold(0, w.c) != w.c {
		t.Fatal("the held mailbox was not given back")
	}
	d.closed.Store(true)
	defer d.closed.Store(false)
	if _, ok := d.hold(0, w.c); ok {
		t.Error("a handoff held after shutdown")
	}
}

// Turns holding at once hold in slots of their own, whichever slot they try
// first, and when every slot is taken a woken mailbox is not held.
func TestHeldSlotsKeepEachHolder(t *testing.T) {
	sys := newTestSystem(t, WithDispatcher(Dispatcher{Name: "two", Spec: "pool:2"}))
	var cells []*cell
	for range 3 {
		cells = append(cells, spawn(t, sys, Props{Dispatcher: "two", New: behaviour(func(c *Context, msg any) {})}).c)
	}
	d := allBusy(t, sys, "two")
	first, ok1 := d.hold(1, cells[0])
	second, ok2 := d.hold(1, cells[1]) // slot 1 is taken: the next one
	if !ok1 || !ok2 || first == second {
		t.Fatalf("two holders: slots %d (%v) and %d (%v); want two slots", first, ok1, second, ok2)
	}
	if _, ok := d.hold(0, cells[2]); ok {
		t.Error("held with every slot taken")
	}
	if d.unhold(second, cells[1]) != cells[1] || d.unhold(first, cells[0]) != cells[0] {
		t.Error("a holder did not get its mailbox back")
	}
	if d.anyHeld() {
		t.Error("a slot still holds a mailbox")
	}
}

// allBusy returns sys's dispatcher called name with every worker counted
// busy, as far as hold can tell, until the test ends.
func allBusy(t *testing.T, sys *System, name string) *dispatcher {
	d := sharedDispatcher(sys, name)
	d.running.Add(d.limit)
	t.Cleanup(func() { d.running.Add(-d.limit) })
	return d
}
