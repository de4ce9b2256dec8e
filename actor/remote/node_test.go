package remote

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/loomrt/loom/actor"
)

func TestJoinRefusesBadSettings(t *testing.T) {
	ns := startNATS(t)
	sys := newSystem(t)
	for _, tc := range []struct {
		sys  *actor.System
		name string
		opts []Option
		want string // what the error must name
	}{
		{sys, "", nil, "node name"},
		{sys, "a.b", nil, "node name"},
		{sys, "a", []Option{WithCluster("x y")}, `cluster name "x y"`},
		{sys, "a", []Option{WithFailureDetector(time.Second, time.Second)}, "fail after 1s"},
		{sys, "a", []Option{WithMaxPending(-1)}, "max pending -1"},
		{nil, "a", nil, "nil actor system"},
	} {
		_, err := Join(tc.sys, tc.name, append([]Option{WithURL(ns.url())}, tc.opts...)...)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Join(%q) = %v; want ErrInvalid", tc.name, err)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Join(%q) = %v; want it to name %q", tc.name, err, tc.want)
		} else if !strings.Contains(tc.want, "name") && strings.Contains(err.Error(), "name") {
			t.Errorf("Join(%q) = %v; want no mention of a name: the name is fine", tc.name, err)
		}
	}
}

// Two clusters on one NATS server do not see each other, even with the
// same node names.
func TestClustersShareAServer(t *testing.T) {
	ns := startNATS(t)
	x1, x2 := join(t, ns, "n1", WithCluster("x")), join(t, ns, "n2", WithCluster("x"))
	y1, y2 := join(t, ns, "n1", WithCluster("y")), join(t, ns, "n2", WithCluster("y"))
	spawn(t, x2.System(), "who", func(c *actor.Context, msg any) {
		if _, ok := msg.(string); ok {
			c.Respond("x")
		}
	})
	spawn(t, y2.System(), "who", func(c *actor.Context, msg any) {
		if _, ok := msg.(string); ok {
			c.Respond("y")
		}
	})
	waitMembers(t, x1, "n2")
	waitMembers(t, y1, "n2")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		n    *Node
		want string
	}{{x1, "x"}, {y1, "y"}} {
		for range 20 {
			if got, err := actor.Ask[string](ctx, tc.n.Ref("n2", "/who"), "?"); err != nil || got != tc.want {
				t.Fatalf("%s's Ask = %q, %v; want %q", tc.n.cluster, got, err, tc.want)
			}
		}
	}
	if s := x2.Stats(); s.Stale != 0 || s.Malformed != 0 {
		t.Errorf("x2 stats %+v", s)
	}
}

// Bytes on a node's subjects that no node wrote are counted and ignored.
func TestMalformedBytesCounted(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	spawn(t, b.System(), "echo", echo)
	waitMembers(t, a, "b")
	garbage := [][]byte{
		nil,
		[]byte("hello"),
		{magic, version},
		appendHeader(nil, "a", 0),
		append(appendHeader(nil, "x", 9), 1, 2, 3),
		append(appendHeader(nil, "x", 9), 0xff, 0xff, 0xff, 0x7f, 1),
		append(appendHeader(nil, "x", 9), 3, 0, 0, 0, kindTell, 9, 'a'),
		append(appendHeader(nil, "x", 9), 2, 0, 0, 0, 77, 0),
	}
	subject := b.prefix + "n.b"
	for _, g := range garbage {
		if err := a.nc.Publish(subject, g); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range [][]byte{nil, []byte("x"), []byte("0123456789 bad name")} {
		if err := a.nc.Publish(b.prefix+"hb", g); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := actor.Ask[string](ctx, a.Ref("b", "/echo"), "still up"); err != nil || got != "still up" {
		t.Fatalf("Ask after garbage = %q, %v", got, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	want := uint64(len(garbage) + 3)
	for b.Stats().Malformed < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := b.Stats().Malformed; got != want {
		t.Errorf("Malformed = %d; want %d", got, want)
	}
	if got := strings.Join(b.Members(), ","); got != "a" {
		t.Errorf("b's members after the garbage: %q; want a (no member made of bytes no node wrote)", got)
	}
}

// An application that uses local actors links no NATS.
func TestActorLinksNoNATS(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/loomrt/loom/actor").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range []string{"nats-io", "google.golang.org/protobuf"} {
		if strings.Contains(string(out), dep) {
			t.Errorf("package actor depends on %s; want it only in actor/remote", dep)
		}
	}
}

// The NATS server stops and starts again on its port: the nodes reconnect
// without declaring each other down, and traffic resumes. Messages sent
// meanwhile are buffered by the NATS client and sent on reconnection; those
// that reach the server before the receiver has subscribed again are lost:
// the receiver sees a subsequence, in order, with no duplicates.
func TestNATSRestart(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	evA, evB := collectEvents(t, a), collectEvents(t, b)
	got := make(chan int, 10000)
	spawn(t, b.System(), "sink", func(c *actor.Context, msg any) {
		switch msg := msg.(type) {
		case string:
			var i int
			fmt.Sscan(msg, &i)
			got <- i
		case []byte:
			c.Respond(msg)
		}
	})
	ref := a.Ref("b", "/sink")
	ask := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := ref.Ask(ctx, []byte("ping"))
		return err
	}
	if err := ask(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	seq := 0
	tell := func(k int) {
		for range k {
			ref.Tell(fmt.Sprint(seq))
			seq++
		}
	}
	tell(100)
	// Answered after the 100 before it, which have then arrived.
	if err := ask(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	ns.stop()
	tell(100) // during the outage
	time.Sleep(500 * time.Millisecond)
	ns.start()
	deadline := time.Now().Add(20 * time.Second)
	for ask(500*time.Millisecond) != nil {
		if time.Now().After(deadline) {
			t.Fatal("no answer 20 s after the restart")
		}
	}
	tell(100)
	last := seq - 1
	received, prev := 0, -1
	for prev != last {
		i := recv(t, got)
		if i <= prev {
			t.Fatalf("message %d after %d: want increasing, no duplicates", i, prev)
		}
		prev = i
		received++
	}
	if received < 200 {
		t.Errorf("received %d of %d; want at least the 200 sent while connected", received, seq)
	}
	t.Logf("received %d of %d messages; %d sent during the outage", received, seq, 100)
	if n := evA.count(Down) + evB.count(Down); n != 0 {
		t.Errorf("%d Down events across a restart; want 0", n)
	}
}

// A NATS server that stalls (stopped with SIGSTOP, its connections open)
// for twice the failure bound silences every node alike: each reads its
// own heartbeats back late and declares no one down. Once it runs again,
// what was sent meanwhile arrives and traffic resumes.
func TestStalledServerDeclaresNoneDown(t *testing.T) {
	ns := startNATSProcess(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	evA, evB := collectEvents(t, a), collectEvents(t, b)
	got := make(chan string, 100)
	spawn(t, b.System(), "sink", func(c *actor.Context, msg any) {
		if s, ok := msg.(string); ok {
			got <- s
			c.Respond(s)
		}
	})
	waitMembers(t, a, "b")
	waitMembers(t, b, "a")
	ref := a.Ref("b", "/sink")
	server := ns.proc.cmd.Process
	if err := server.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ref.Tell("during the stall")
	time.Sleep(2 * DefaultFailAfter)
	if err := server.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if s := recv(t, got); s != "during the stall" {
		t.Errorf("received %q; want the message sent during the stall", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s, err := actor.Ask[string](ctx, ref, "after"); err != nil || s != "after" {
		t.Errorf("Ask after the stall = %q, %v", s, err)
	}
	if n := evA.count(Down) + evB.count(Down); n != 0 {
		t.Errorf("%d Down events for a stalled server; want 0", n)
	}
	if got := strings.Join(a.Members(), ","); got != "b" {
		t.Errorf("a sees %q; want b", got)
	}
}

// A message the NATS client refuses to publish (here: past its reconnect
// buffer while the server is gone) is a dead letter with the publish
// error, each message its own.
func TestPublishErrorIsDeadLetter(t *testing.T) {
	ns := startNATS(t)
	nc, err := nats.Connect(ns.url(), nats.ReconnectBufSize(4096), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	a := join(t, ns, "a", WithConn(nc))
	b := join(t, ns, "b")
	spawn(t, b.System(), "sink", func(*actor.Context, any) {})
	waitMembers(t, a, "b")
	dead := collectDeadLetters(t, a.System())
	ref := a.Ref("b", "/sink")
	ns.stop()
	deadline := time.Now().Add(10 * time.Second)
	for nc.Status() != nats.RECONNECTING {
		if time.Now().After(deadline) {
			t.Fatalf("connection %v 10 s after the server stopped; want reconnecting", nc.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// One message at a time, each its own batch: the client takes a
	// publish while what it buffers is under the bound.
	countDead := func() int {
		dead.mu.Lock()
		defer dead.mu.Unlock()
		return len(dead.list)
	}
	const sent = 50
	for i := range sent {
		batches, deadBefore := a.Stats().BatchesSent, countDead()
		ref.Tell(fmt.Sprintf("%03d %s", i, strings.Repeat("x", 1000)))
		for end := time.Now().Add(10 * time.Second); a.Stats().BatchesSent == batches && countDead() == deadBefore; {
			if time.Now().After(end) {
				t.Fatalf("message %d neither published nor a dead letter in 10 s", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// 4 KiB of buffer takes at most 4 of the 1 KiB messages.
	const want = sent - 4
	var seen map[string]bool
	for end := time.Now().Add(10 * time.Second); ; {
		seen = map[string]bool{}
		dead.mu.Lock()
		for _, d := range dead.list {
			if !errors.Is(d.Reason, nats.ErrReconnectBufExceeded) {
				continue
			}
			s, _ := d.Message.(string)
			if seen[s] || len(s) != 1004 || d.Recipient != ref {
				t.Errorf("dead letter %.10q to %v: want each message once, whole, to %v", s, d.Recipient, ref)
			}
			seen[s] = true
		}
		dead.mu.Unlock()
		if len(seen) >= want || time.Now().After(end) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(seen) < want {
		t.Errorf("%d of %d messages past a 4 KiB reconnect buffer are dead letters; want at least %d", len(seen), sent, want)
	}
	ns.start() // for the nodes to leave
	for deadline := time.Now().Add(10 * time.Second); !nc.IsConnected() || !b.Conn().IsConnected(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the nodes did not reconnect in 10 s after the server restarted")
		}
	}
}

// Leave returns by its context's end while a publish is stuck on a stalled
// server (stopped with SIGSTOP), on the node's own connection and on one
// WithConn gave it; once the server runs again the node's goroutines end,
// and a second Leave waits for them.
func TestLeaveBoundedByStuckPublish(t *testing.T) {
	for _, conn := range []string{"own", "given"} {
		t.Run(conn, func(t *testing.T) {
			ns := startNATSProcess(t)
			var opts []Option
			if conn == "given" {
				nc, err := nats.Connect(ns.url())
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				opts = append(opts, WithConn(nc))
			}
			a := join(t, ns, "a", append(opts, WithMaxPending(16), WithFailureDetector(250*time.Millisecond, time.Minute))...)
			b := join(t, ns, "b", WithFailureDetector(250*time.Millisecond, time.Minute))
			spawn(t, b.System(), "sink", func(*actor.Context, any) {})
			waitMembers(t, a, "b")
			var backpressure atomic.Bool
			t.Cleanup(a.System().SubscribeDeadLetters(func(d actor.DeadLetter) {
				if errors.Is(d.Reason, ErrBackpressure) {
					backpressure.Store(true)
				}
			}))
			server := ns.proc.cmd.Process
			if err := server.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			resumed := false
			resume := func() {
				if !resumed {
					resumed = true
					if err := server.Signal(syscall.SIGCONT); err != nil {
						t.Error(err)
					}
				}
			}
			defer resume()
			// The queue reaches its bound once the flusher is stuck in a
			// publish that the server does not read.
			ref := a.Ref("b", "/sink")
			for deadline := time.Now().Add(30 * time.Second); !backpressure.Load(); {
				if time.Now().After(deadline) {
					t.Fatal("no backpressure in 30 s of sending to a stopped server")
				}
				ref.Tell(make([]byte, 64<<10))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			left := make(chan error, 1)
			start := time.Now()
			go func() { left <- a.Leave(ctx) }()
			select {
			case err := <-left:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Leave = %v; want DeadlineExceeded", err)
				}
				t.Logf("Leave returned in %v", time.Since(start))
			case <-time.After(20 * time.Second):
				resume()
				<-left
				t.Fatal("Leave did not return in 20 s with a publish stuck; want by its context's end")
			}
			resume()
			ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel2()
			if err := a.Leave(ctx2); err != nil {
				t.Errorf("second Leave = %v; want nil once the server runs", err)
			}
		})
	}
}

// Leave reports what its connection's drain returned: here the server is
// gone and the connection reconnecting.
func TestLeaveReportsDrainError(t *testing.T) {
	ns := startNATS(t)
	a := join(t, ns, "a")
	ns.stop()
	for deadline := time.Now().Add(10 * time.Second); a.Conn().Status() != nats.RECONNECTING; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("connection %v 10 s after the server stopped; want reconnecting", a.Conn().Status())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := a.Leave(ctx)
	t.Logf("Leave = %v", err)
	if !errors.Is(err, nats.ErrConnectionReconnecting) {
		t.Errorf("Leave = %v; want the drain's ErrConnectionReconnecting", err)
	}
	if !a.Conn().IsClosed() {
		t.Error("connection open after Leave; want closed")
	}
}
