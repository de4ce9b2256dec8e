package remote

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/loomrt/loom/actor"
)

// events collects a node's membership events.
type events struct {
	mu   sync.Mutex
	list []MemberEvent
}

func collectEvents(t *testing.T, n *Node) *events {
	e := &events{}
	t.Cleanup(n.SubscribeMembers(func(ev MemberEvent) {
		e.mu.Lock()
		e.list = append(e.list, ev)
		e.mu.Unlock()
	}))
	return e
}

func (e *events) wait(t *testing.T, node string, kind EventKind) MemberEvent {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		e.mu.Lock()
		for _, ev := range e.list {
			if ev.Node == node && ev.Kind == kind {
				e.mu.Unlock()
				return ev
			}
		}
		e.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %v event for %s in 15 s", kind, node)
	return MemberEvent{}
}

func (e *events) count(kind EventKind) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := 0
	for _, ev := range e.list {
		if ev.Kind == kind {
			k++
		}
	}
	return k
}

// watchAll spawns an actor on n that watches refs and reports each
// Terminated with when it arrived.
func watchAll(t *testing.T, n *Node, refs ...actor.Ref) <-chan actor.Terminated {
	t.Helper()
	got := make(chan actor.Terminated, len(refs))
	w := spawn(t, n.System(), "", func(c *actor.Context, msg any) {
		switch msg := msg.(type) {
		case actor.Started:
			for _, r := range refs {
				c.Watch(r)
			}
		case actor.Terminated:
			got <- msg
		case string:
			c.Respond(msg)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := w.Ask(ctx, "sync"); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestJoinAndLeaveEvents(t *testing.T) {
	ns := startNATS(t)
	a := join(t, ns, "a")
	ev := collectEvents(t, a)
	b, err := Join(newSystem(t), "b", WithURL(ns.url()))
	if err != nil {
		t.Fatal(err)
	}
	ev.wait(t, "b", Joined)
	spawn(t, b.System(), "echo", echo)
	ref := a.Ref("b", "/echo")
	got := watchAll(t, a, ref)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	left := ev.wait(t, "b", Left)
	if !errors.Is(left.Reason, ErrNodeLeft) {
		t.Errorf("Left reason %v; want ErrNodeLeft", left.Reason)
	}
	term := recv(t, got)
	if term.Actor != ref || !errors.Is(term.Reason, ErrNodeLeft) {
		t.Errorf("Terminated %+v; want %v with ErrNodeLeft", term, ref)
	}
	if err := ref.Send(ctx, "late"); !errors.Is(err, ErrNodeLeft) {
		t.Errorf("Send after leave = %v; want ErrNodeLeft", err)
	}
	waitMembers(t, a)
}

// A node whose connection dies without a word is declared down within the
// failure bound: watchers get Terminated, Asks in flight fail, Tells go to
// dead letters.
func TestSilentNodeIsDown(t *testing.T) {
	ns := startNATS(t)
	const heartbeat, failAfter = 50 * time.Millisecond, 500 * time.Millisecond
	a := join(t, ns, "a", WithFailureDetector(heartbeat, failAfter))
	ev := collectEvents(t, a)
	b := join(t, ns, "b")
	spawn(t, b.System(), "mute", func(*actor.Context, any) {})
	waitMembers(t, a, "b")
	ref := a.Ref("b", "/mute")
	got := watchAll(t, a, ref)
	asked := make(chan error, 1)
	go func() {
		_, err := ref.Ask(context.Background(), "never answered")
		asked <- err
	}()
	// b's heartbeats stop as a kill -9's would; its TCP connection stays.
	b.nc.Close()
	start := time.Now()
	down := ev.wait(t, "b", Down)
	if !errors.Is(down.Reason, ErrNodeDown) {
		t.Errorf("Down reason %v; want ErrNodeDown", down.Reason)
	}
	term := recv(t, got)
	if !errors.Is(term.Reason, ErrNodeDown) {
		t.Errorf("Terminated reason %v; want ErrNodeDown", term.Reason)
	}
	if err := recv(t, asked); !errors.Is(err, ErrNodeDown) {
		t.Errorf("Ask in flight = %v; want ErrNodeDown", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("down after %v", d)
	}
	dead := collectDeadLetters(t, a.System())
	ref.Tell("after")
	dead.wait(t, func(d actor.DeadLetter) bool { return errors.Is(d.Reason, ErrNodeDown) && d.Message == "after" })
}

// A node killed with SIGKILL is declared down within the default bound,
// 2.75 s: its watchers get Terminated, and an Ask in flight fails with
// ErrNodeDown.
func TestKilledNodeIsDownWithinBound(t *testing.T) {
	ns := startNATS(t)
	a := join(t, ns, "a")
	c := startChild(t, ns, "", "victim")
	waitMembers(t, a, "victim")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ref, err := a.Lookup(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := actor.Ask[string](ctx, ref, "up?"); err != nil || got != "up?" {
		t.Fatalf("Ask = %q, %v", got, err)
	}
	got := watchAll(t, a, ref)
	asked := make(chan error, 1)
	go func() {
		// echo answers at once: an Ask queued after the kill is in flight
		// until the node is declared down.
		<-time.After(50 * time.Millisecond)
		_, err := ref.Ask(context.Background(), "in flight")
		asked <- err
	}()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	term := recv(t, got)
	took := time.Since(killed)
	if !errors.Is(term.Reason, ErrNodeDown) || term.Actor != ref {
		t.Errorf("Terminated %+v; want %v with ErrNodeDown", term, ref)
	}
	// The bound holds from the last heartbeat handled; on a machine busy
	// enough to delay the handling, the margin absorbs the delay.
	bound := DefaultFailAfter + DefaultHeartbeat
	if took > bound+time.Second || took < DefaultFailAfter-DefaultHeartbeat {
		t.Errorf("Terminated %v after the kill; want within %v (and no sooner than the silence allowed)", took, bound)
	}
	t.Logf("Terminated %v after SIGKILL", took)
	if err := recv(t, asked); !errors.Is(err, ErrNodeDown) {
		t.Errorf("Ask in flight = %v; want ErrNodeDown", err)
	}
}

// No node is declared down while the machine is merely busy: every core
// spins for twice the failure bound, in this process, which runs both
// nodes' heartbeats, and the NATS server.
func TestNoFalseDownUnderCPUSaturation(t *testing.T) {
	if testing.Short() {
		t.Skip("spins every core for 5 s")
	}
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	evA, evB := collectEvents(t, a), collectEvents(t, b)
	spawn(t, b.System(), "echo", echo)
	waitMembers(t, a, "b")
	waitMembers(t, b, "a")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := 0; ; x++ {
				if x%1024 == 0 {
					select {
					case <-stop:
						return
					default:
					}
				}
			}
		}()
	}
	// Traffic between the nodes meanwhile.
	ref := a.Ref("b", "/echo")
	deadline := time.Now().Add(2 * DefaultFailAfter)
	asks := 0
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := ref.Ask(ctx, "busy")
		cancel()
		if err != nil {
			t.Errorf("Ask under load: %v", err)
			break
		}
		asks++
	}
	close(stop)
	wg.Wait()
	if n := evA.count(Down) + evB.count(Down); n != 0 {
		t.Errorf("%d Down events under CPU saturation; want 0", n)
	}
	t.Logf("%d asks answered while every core spun", asks)
}

// A node that comes back under its name before the failure bound is a new
// incarnation: the old one is down at once (its watchers get Terminated),
// the new one joins, and the old one's late bytes are ignored.
func TestRestartedNodeIsANewIncarnation(t *testing.T) {
	ns := startNATS(t)
	a := join(t, ns, "a")
	ev := collectEvents(t, a)
	old := join(t, ns, "b")
	spawn(t, old.System(), "echo", echo)
	waitMembers(t, a, "b")
	ref := a.Ref("b", "/echo")
	got := watchAll(t, a, ref)
	oldInstance := old.instance
	old.nc.Close() // dies without a word

	fresh := join(t, ns, "b")
	spawn(t, fresh.System(), "echo", echo)
	term := recv(t, got)
	if term.Actor != ref || !errors.Is(term.Reason, ErrNodeDown) {
		t.Errorf("Terminated %+v; want %v with ErrNodeDown", term, ref)
	}
	down := ev.wait(t, "b", Down)
	if !strings.Contains(down.Reason.Error(), "restarted") {
		t.Errorf("Down reason %v; want it to say the node restarted", down.Reason)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := actor.Ask[string](ctx, a.Ref("b", "/echo"), "new?"); err != nil || got != "new?" {
		t.Fatalf("Ask of the new incarnation = %q, %v", got, err)
	}
	// A batch from the old incarnation is stale.
	stale := a.Stats().Stale
	if err := fresh.nc.Publish(a.prefix+"n.a", appendHeader(nil, "b", oldInstance)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for a.Stats().Stale == stale && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if a.Stats().Stale == stale {
		t.Error("a batch from the old incarnation was not counted stale")
	}
}

// busyPerCoreEnv sets TestBusyNodeIsNotDown's spinning goroutines per core
// (16 by default), to find the load past which the bound no longer holds.
const busyPerCoreEnv = "LOOM_REMOTE_BUSY_PER_CORE"

// A node whose process runs far more CPU-bound goroutines than it has
// cores (16 per core, as CPU-bound actors on a virtual dispatcher would)
// reads its socket late, but its heartbeats go out: neither side declares
// the other down, and its actors still answer.
func TestBusyNodeIsNotDown(t *testing.T) {
	if testing.Short() {
		t.Skip("spins a child process's cores for 7.5 s")
	}
	ns := startNATS(t)
	a := join(t, ns, "a")
	ev := collectEvents(t, a)
	perCore := 16
	if k, err := strconv.Atoi(os.Getenv(busyPerCoreEnv)); err == nil {
		perCore = k
	}
	startChild(t, ns, "", "busy", spinEnv+"="+strconv.Itoa(perCore*runtime.GOMAXPROCS(0)))
	waitMembers(t, a, "busy")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ref, err := a.Lookup(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * DefaultFailAfter)
	if got, err := actor.Ask[string](ctx, ref, "still there?"); err != nil || got != "still there?" {
		t.Errorf("Ask of the busy node = %q, %v", got, err)
	}
	// The busy node, had it declared a down, would have told a so: a
	// counts a Down either way.
	if n := ev.count(Down); n != 0 {
		ev.mu.Lock()
		t.Errorf("%d Down events while the node was busy; want 0: %v", n, ev.list)
		ev.mu.Unlock()
	}
	if got := strings.Join(a.Members(), ","); got != "busy" {
		t.Errorf("a sees %q; want busy", got)
	}
}

// relay forwards TCP connections to target; while its reads are held,
// nothing goes from target to the clients, as if they read their sockets
// late, while what they send still goes through.
type relay struct {
	l    net.Listener
	mu   sync.Mutex
	gate chan struct{} // while not nil, reads wait for it to close
	wg   sync.WaitGroup
}

func (r *relay) hold() {
	r.mu.Lock()
	r.gate = make(chan struct{})
	r.mu.Unlock()
}

func (r *relay) release() {
	r.mu.Lock()
	close(r.gate)
	r.gate = nil
	r.mu.Unlock()
}

func startRelay(t *testing.T, target string) *relay {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{l: l}
	var conns []net.Conn
	var mu sync.Mutex
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			r.wg.Add(2)
			go func() { defer r.wg.Done(); _, _ = io.Copy(s, c); s.Close() }()
			go func() {
				defer r.wg.Done()
				buf := make([]byte, 32<<10)
				for {
					k, err := s.Read(buf)
					r.mu.Lock()
					gate := r.gate
					r.mu.Unlock()
					if gate != nil {
						<-gate
					}
					if k > 0 {
						if _, werr := c.Write(buf[:k]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		r.mu.Lock()
		if r.gate != nil {
			close(r.gate)
			r.gate = nil
		}
		r.mu.Unlock()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		r.wg.Wait()
	})
	return r
}

func (r *relay) url() string { return "nats://" + r.l.Addr().String() }

// A node that reads its socket late (what a process with many more
// CPU-bound goroutines than cores does) declares no node down for the
// silence it has not read yet: its own heartbeats come back late too.
// Nor is it declared down: its heartbeats go out.
func TestLateReaderDeclaresNoneDown(t *testing.T) {
	ns := startNATS(t)
	r := startRelay(t, "127.0.0.1:"+strconv.Itoa(ns.port))
	a := join(t, ns, "a")
	late, err := Join(newSystem(t), "late", WithURL(r.url()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = late.Leave(ctx)
	})
	evA, evLate := collectEvents(t, a), collectEvents(t, late)
	spawn(t, late.System(), "echo", echo)
	waitMembers(t, a, "late")
	waitMembers(t, late, "a")
	r.hold()
	time.Sleep(2 * DefaultFailAfter)
	r.release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := actor.Ask[string](ctx, a.Ref("late", "/echo"), "back?"); err != nil || got != "back?" {
		t.Errorf("Ask after the late read = %q, %v", got, err)
	}
	if n := evA.count(Down) + evLate.count(Down); n != 0 {
		t.Errorf("%d Down events for a silence not yet read; want 0", n)
	}
	if got := strings.Join(late.Members(), ","); got != "a" {
		t.Errorf("late sees %q; want a", got)
	}
}

// A node on a connection made without echo never reads its own heartbeats
// back; it still declares a silent node down.
func TestNoEchoConnectionDetectsDown(t *testing.T) {
	ns := startNATS(t)
	nc, err := nats.Connect(ns.url(), nats.NoEcho())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	a := join(t, ns, "a", WithConn(nc), WithFailureDetector(50*time.Millisecond, 500*time.Millisecond))
	ev := collectEvents(t, a)
	b := join(t, ns, "b")
	waitMembers(t, a, "b")
	b.nc.Close()
	if down := ev.wait(t, "b", Down); !errors.Is(down.Reason, ErrNodeDown) {
		t.Errorf("Down reason %v; want ErrNodeDown", down.Reason)
	}
}
