package remote

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/actor"
)

func TestAskAndTellAcrossNodes(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	spawn(t, b.System(), "echo", echo)
	waitMembers(t, a, "b")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ref := a.Ref("b", "/echo")
	if got, want := ref.String(), "/echo@b"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	if ref != a.Ref("b", "/echo") {
		t.Error("two Refs to /echo on b differ; want equal")
	}
	got, err := actor.Ask[string](ctx, ref, "hello")
	if err != nil || got != "hello" {
		t.Fatalf("Ask = %q, %v; want hello, nil", got, err)
	}

	// A Tell from an actor carries it as the sender: the reply comes back.
	replies := make(chan any, 1)
	spawn(t, a.System(), "client", func(c *actor.Context, msg any) {
		switch msg := msg.(type) {
		case string:
			if msg == "go" {
				c.Tell(ref, []byte("ping"))
				return
			}
		case []byte:
			if c.Sender() != ref {
				replies <- fmt.Errorf("sender %v; want %v", c.Sender(), ref)
				return
			}
			replies <- string(msg)
		}
	})
	client, _ := a.System().Lookup("/client")
	client.Tell("go")
	if got := recv(t, replies); got != "ping" {
		t.Fatalf("reply %v; want ping", got)
	}
}

// Messages from one sender to one remote actor arrive in the order sent,
// across many batches.
func TestOrderPerSenderReceiver(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	const count = 20000
	done := make(chan error, 1)
	next := 0
	spawn(t, b.System(), "sink", func(c *actor.Context, msg any) {
		s, ok := msg.(string)
		if !ok {
			return
		}
		if s != fmt.Sprint(next) {
			done <- fmt.Errorf("got message %s; want %d", s, next)
			return
		}
		next++
		if next == count {
			done <- nil
		}
	})
	ref := a.Ref("b", "/sink")
	for i := range count {
		ref.Tell(fmt.Sprint(i))
	}
	if err := recv(t, done); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.BatchesSent >= count {
		t.Errorf("%d batches for %d messages; want many messages per batch", s.BatchesSent, count)
	}
}

type unregistered struct{ X int }

// A message of a type no codec handles goes to dead letters at Tell, on the
// sender's node, with the reason.
func TestUnknownTypeIsDeadLetter(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	spawn(t, b.System(), "echo", echo)
	dead := collectDeadLetters(t, a.System())
	ref := a.Ref("b", "/echo")
	ref.Tell(unregistered{1})
	d := dead.wait(t, func(d actor.DeadLetter) bool { return errors.Is(d.Reason, ErrUnknownType) })
	if d.Recipient != ref || d.Message != (unregistered{1}) {
		t.Errorf("dead letter %+v; want unregistered{1} to %v", d, ref)
	}
	if err := ref.Send(context.Background(), unregistered{2}); !errors.Is(err, ErrUnknownType) {
		t.Errorf("Send = %v; want ErrUnknownType", err)
	}
	_, err := ref.Ask(context.Background(), unregistered{3})
	if !errors.Is(err, ErrUnknownType) {
		t.Errorf("Ask = %v; want ErrUnknownType", err)
	}
}

type point struct {
	X, Y int
	Name string
}

func TestJSONCodecAcrossNodes(t *testing.T) {
	ns := startNATS(t)
	codecs := func() *Codecs {
		c := NewCodecs()
		if err := RegisterJSON[point](c, "point"); err != nil {
			t.Fatal(err)
		}
		if err := RegisterJSON[*unregistered](c, "ptr"); err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := join(t, ns, "a", WithCodecs(codecs())), join(t, ns, "b", WithCodecs(codecs()))
	spawn(t, b.System(), "echo", echo)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, msg := range []any{point{1, 2, "p"}, &unregistered{7}} {
		got, err := a.Ref("b", "/echo").Ask(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", msg) {
			t.Errorf("echo of %#v = %#v", msg, got)
		}
	}
}

// An Ask to an actor that does not exist fails at once with the remote
// node's reason, not at its deadline.
func TestAskMissingActorFailsFast(t *testing.T) {
	ns := startNATS(t)
	a, _ := join(t, ns, "a"), join(t, ns, "b")
	waitMembers(t, a, "b")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := a.Ref("b", "/nobody").Ask(ctx, "hi")
	if !errors.Is(err, actor.ErrNotFound) {
		t.Fatalf("Ask = %v; want ErrNotFound", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Ask failed after %v; want at once", d)
	}
}

// An Ask fails within its deadline when nothing answers.
func TestAskDeadline(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	spawn(t, b.System(), "mute", func(*actor.Context, any) {})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := a.Ref("b", "/mute").Ask(ctx, "hi")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Ask = %v; want DeadlineExceeded", err)
	}
}

func TestWatchRemoteActor(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	target := spawn(t, b.System(), "target", func(*actor.Context, any) {})
	spawn(t, b.System(), "echo", echo)
	ref := a.Ref("b", "/target")
	got := make(chan actor.Terminated, 2)
	watcher := spawn(t, a.System(), "watcher", func(c *actor.Context, msg any) {
		switch msg := msg.(type) {
		case actor.Started:
			c.Watch(ref)
			c.Watch(a.Ref("b", "/missing"))
			c.Respond("watching")
		case actor.Terminated:
			got <- msg
		case string:
			c.Respond(msg)
		}
	})
	// An Ask after the watch has passed b's actor's mailbox.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := watcher.Ask(ctx, "sync"); err != nil {
		t.Fatal(err)
	}
	missing := recv(t, got)
	if missing.Actor.Path() != "/missing" || !errors.Is(missing.Reason, actor.ErrNotFound) {
		t.Errorf("Terminated %+v; want /missing with ErrNotFound", missing)
	}
	// Frames to b are handled in the order queued: once this is answered,
	// the watch, queued before it, has reached /target.
	if _, err := a.Ref("b", "/echo").Ask(ctx, "sync"); err != nil {
		t.Fatal(err)
	}
	target.Stop()
	term := recv(t, got)
	if term.Actor != ref || term.Reason != nil {
		t.Errorf("Terminated %+v; want %v with no reason", term, ref)
	}
	select {
	case <-ref.Done():
	case <-time.After(10 * time.Second):
		t.Error("Done of the remote Ref not closed after Terminated")
	}
}

// Stop and Kill on a remote Ref stop the actor.
func TestStopRemoteActor(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	for _, kill := range []bool{false, true} {
		target := spawn(t, b.System(), fmt.Sprint("t", kill), func(*actor.Context, any) {})
		ref := a.Ref("b", target.Path())
		if kill {
			ref.Kill()
		} else {
			ref.Stop()
		}
		select {
		case <-target.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("kill=%v: %v did not stop", kill, target)
		}
	}
}

// BenchmarkRemoteEcho is the actor-echo workload across two nodes in this
// process: pairs of a sender on one node and an echoer on the other, each
// sender sending batches of 50 and waiting for their echoes; a message is
// one way, so a round trip counts two.
func BenchmarkRemoteEcho(b *testing.B) {
	const pairs, batch = 64, 50
	ns := startNATSProcess(b)
	nodes := make([]*Node, 2)
	for i, name := range []string{"a", "b"} {
		sys, err := actor.NewSystem()
		if err != nil {
			b.Fatal(err)
		}
		n, err := Join(sys, name, WithURL(ns.url()), WithCodecs(seqCodecs(b)))
		if err != nil {
			b.Fatal(err)
		}
		nodes[i] = n
		defer func() {
			_ = sys.Shutdown(context.Background())
			_ = n.Leave(context.Background())
		}()
	}
	a, e := nodes[0], nodes[1]
	for i := range pairs {
		spawnB(b, e.System(), fmt.Sprint("echo", i), func(c *actor.Context, msg any) {
			if _, ok := msg.(*seq); ok {
				c.Respond(msg)
			}
		})
	}
	rounds := max(1, b.N/(pairs*batch*2))
	done := make(chan struct{}, pairs)
	senders := make([]actor.Ref, pairs)
	for i := range pairs {
		echo := a.Ref("b", fmt.Sprint("/echo", i))
		left, back := 0, 0
		ping := &seq{N: 1}
		senders[i] = spawnB(b, a.System(), fmt.Sprint("sender", i), func(c *actor.Context, msg any) {
			switch msg.(type) {
			case string:
				left, back = rounds, 0
			case *seq:
				back++
				if back < batch {
					return
				}
				back = 0
				if left--; left == 0 {
					done <- struct{}{}
					return
				}
			default:
				return
			}
			for range batch {
				c.Tell(echo, ping)
			}
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for _, s := range senders {
		s.Tell("go")
	}
	for range pairs {
		<-done
	}
	b.StopTimer()
	b.ReportMetric(float64(rounds*pairs*batch*2)/b.Elapsed().Seconds(), "msg/s")
	if s := e.Stats(); s.BatchesReceived > 0 {
		b.ReportMetric(float64(s.FramesReceived)/float64(s.BatchesReceived), "msg/batch")
	}
}

func spawnB(b *testing.B, sys *actor.System, name string, f func(c *actor.Context, msg any)) actor.Ref {
	r, err := sys.Spawn(actor.Props{Name: name, New: func() actor.Actor { return actor.ReceiveFunc(f) }})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// What arrives from another node runs on the receiving actor's dispatcher,
// whose executor LOOM_EXECUTOR_<NAME> switches as for local messages.
func TestRemoteMessagesRunOnTheActorsDispatcher(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR_BLOCKING", "threads:3")
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	if _, err := b.System().Spawn(actor.Props{Name: "echo", Dispatcher: "blocking", New: func() actor.Actor { return actor.ReceiveFunc(echo) }}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 10 {
		if _, err := a.Ref("b", "/echo").Ask(ctx, "hi"); err != nil {
			t.Fatal(err)
		}
	}
	st, ok := b.System().DispatcherStats("blocking")
	if !ok || st.Kind != loom.KindThreads || st.Workers != 3 || st.Completed == 0 {
		t.Errorf("blocking dispatcher stats %+v, %v; want threads:3 with turns completed", st, ok)
	}
}

// BenchmarkRemoteAsk is one Ask at a time to an echo on another node, NATS
// in its own process: the round trip's latency and what it allocates on
// both nodes.
func BenchmarkRemoteAsk(b *testing.B) {
	ns := startNATSProcess(b)
	nodes := make([]*Node, 2)
	for i, name := range []string{"a", "b"} {
		sys, err := actor.NewSystem()
		if err != nil {
			b.Fatal(err)
		}
		n, err := Join(sys, name, WithURL(ns.url()), WithCodecs(seqCodecs(b)))
		if err != nil {
			b.Fatal(err)
		}
		nodes[i] = n
		defer func() {
			_ = sys.Shutdown(context.Background())
			_ = n.Leave(context.Background())
		}()
	}
	spawnB(b, nodes[1].System(), "echo", func(c *actor.Context, msg any) {
		if _, ok := msg.(*seq); ok {
			c.Respond(msg)
		}
	})
	ref := nodes[0].Ref("b", "/echo")
	msg := &seq{N: 1}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ref.Ask(ctx, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// An Ask answered, failed or timed out leaves nothing behind in the node's
// table of pending Asks.
func TestAsksLeaveNoPendingEntry(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	spawn(t, b.System(), "echo", echo)
	spawn(t, b.System(), "mute", func(*actor.Context, any) {})
	waitMembers(t, a, "b")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 100 {
		if _, err := a.Ref("b", "/echo").Ask(ctx, "hi"); err != nil {
			t.Fatalf("Ask echo = %v", err)
		}
	}
	if _, err := a.Ref("b", "/nobody").Ask(ctx, "hi"); !errors.Is(err, actor.ErrNotFound) {
		t.Fatalf("Ask nobody = %v; want ErrNotFound", err)
	}
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	if _, err := a.Ref("b", "/mute").Ask(short, "hi"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Ask mute = %v; want DeadlineExceeded", err)
	}
	a.askMu.Lock()
	left := len(a.asks)
	a.askMu.Unlock()
	if left != 0 {
		t.Errorf("%d Asks pending after all ended; want 0", left)
	}
}
