package actor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// dropScene is a System whose dispatcher "one" (one worker, a queue of one)
// has its worker held by the actor stuck until release is closed, a parent
// on "pool" with a child victim on "one", which has a child of its own on
// "pool", and a watcher of victim on "pool". What the actors hear goes to
// heard.
type dropScene struct {
	sys                   *System
	stuck, parent, victim Ref
	grandchild, watcher   Ref
	heard                 chan string
	terminated            chan Ref
	release               chan struct{}
}

func newDropScene(t *testing.T) *dropScene {
	t.Helper()
	s := &dropScene{
		sys:        newTestSystem(t, WithDispatcher(Dispatcher{Name: "one", Spec: "pool:1,queue=1"})),
		heard:      make(chan string, 64),
		terminated: make(chan Ref, 4),
		release:    make(chan struct{}),
	}
	t.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
	})
	signals := func(name string) func(c *Context, msg any) {
		return func(c *Context, msg any) {
			switch msg.(type) {
			case Stopping:
				s.heard <- name + " Stopping"
			case Stopped:
				s.heard <- name + " Stopped"
			}
		}
	}
	grand := signals("grandchild")
	victimSignals := signals("victim")
	victim := behaviour(func(c *Context, msg any) {
		victimSignals(c, msg)
		switch msg.(type) {
		case Started:
			if _, err := c.Spawn(Props{Name: "grandchild", Dispatcher: "pool", New: behaviour(grand)}); err != nil {
				t.Errorf("spawn grandchild: %v", err)
			}
		case string:
			c.Respond(msg)
		}
	})
	s.parent = spawn(t, s.sys, Props{Name: "parent", Dispatcher: "pool", New: behaviour(func(c *Context, msg any) {
		switch msg {
		case "spawn":
			r, err := c.Spawn(Props{Name: "victim", Dispatcher: "one", New: victim,
				Mailbox: Mailbox{Capacity: 16}})
			if err != nil {
				t.Errorf("spawn victim: %v", err)
			}
			c.Respond(r)
		case "children":
			c.Respond(len(c.Children()))
		}
	})})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	if s.victim, err = Ask[Ref](ctx, s.parent, "spawn"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.victim.Ask(ctx, "ping"); err != nil { // it has started
		t.Fatal(err)
	}
	if s.grandchild, err = s.sys.Lookup("/parent/victim/grandchild"); err != nil {
		t.Fatal(err)
	}
	s.watcher = spawn(t, s.sys, Props{Name: "watcher", Dispatcher: "pool", New: behaviour(func(c *Context, msg any) {
		switch m := msg.(type) {
		case Ref:
			c.Watch(m)
			c.Respond("watching")
		case Terminated:
			s.terminated <- m.Actor
		}
	})})
	if _, err := s.watcher.Ask(ctx, s.victim); err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	s.stuck = spawn(t, s.sys, Props{Name: "stuck", Dispatcher: "one", New: behaviour(func(c *Context, msg any) {
		if msg == "block" {
			close(entered)
			<-s.release
		}
	})})
	s.stuck.Tell("block")
	recv(t, entered)
	return s
}

// one returns the dispatcher "one".
func (s *dropScene) one() *dispatcher {
	s.sys.mu.Lock()
	defer s.sys.mu.Unlock()
	return s.sys.shared["one"]
}

// shutdownOne shuts down dispatcher "one" and gives up at once: a turn
// waiting for its worker is dropped unrun.
func (s *dropScene) shutdownOne(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.one().shutdown(ctx)
}

// checkKilled checks that victim ended as a killed actor does: its child
// stopped first, Stopping then Stopped, its watcher told, its parent and
// Lookup rid of it, an Ask to it an error.
func (s *dropScene) checkKilled(t *testing.T) {
	t.Helper()
	waitDone(t, s.victim)
	waitDone(t, s.grandchild)
	var got []string
	for len(s.heard) > 0 {
		got = append(got, <-s.heard)
	}
	want := []string{"victim Stopping", "grandchild Stopping", "grandchild Stopped", "victim Stopped"}
	if len(got) != len(want) {
		t.Errorf("signals: got %q; want %q", got, want)
	} else {
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("signals: got %q; want %q", got, want)
				break
			}
		}
	}
	if r := recv(t, s.terminated); r != s.victim {
		t.Errorf("Terminated for %v; want %v", r, s.victim)
	}
	if _, err := s.sys.Lookup(s.victim.Path()); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lookup(%s) after the end: %v; want ErrNotFound", s.victim.Path(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n, err := Ask[int](ctx, s.parent, "children"); err != nil || n != 0 {
		t.Errorf("parent's children: %d, %v; want 0, nil", n, err)
	}
	if _, err := s.victim.Ask(ctx, "late"); !errors.Is(err, ErrStopped) {
		t.Errorf("Ask after the end: %v; want ErrStopped", err)
	}
}

// An actor whose mailbox turn its executor drops unrun (Shutdown gave up
// while the turn was queued) is killed: queued messages and a pending Ask
// fail, its child stops first, it hears Stopping and Stopped, its watcher
// gets Terminated, its parent and Lookup forget it, and the System then
// shuts down cleanly (goleak in TestMain). Without abandon ending the
// lifecycle, Terminated never comes, Lookup finds the actor and the
// parent's Stop waits for it forever.
func TestDroppedTurnKillsTheActor(t *testing.T) {
	s := newDropScene(t)
	lost := make(chan any, 8)
	defer s.sys.SubscribeDeadLetters(func(d DeadLetter) {
		if d.Recipient == s.victim {
			lost <- d.Message
		}
	})()
	s.victim.Tell("q1") // its turn waits for the worker in the ready list
	asked := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := s.victim.Ask(ctx, "q2")
		asked <- err
	}()
	// Both queued (the mailbox is bounded, so size counts them).
	for s.victim.c.size.Load() != 2 {
		time.Sleep(time.Millisecond)
	}
	s.shutdownOne(t)

	if err := recv(t, asked); !errors.Is(err, ErrStopped) {
		t.Errorf("pending Ask: %v; want ErrStopped", err)
	}
	if m := recv(t, lost); m != "q1" {
		t.Errorf("first dead letter %v; want q1", m)
	}
	s.checkKilled(t)
	close(s.release)
	// newTestSystem's cleanup checks that Shutdown succeeds.
}

// An idle actor whose executor is closed is killed by the first message
// that finds it so (the executor refuses the turn): the message goes to
// dead letters and the lifecycle ends as for a dropped turn.
func TestClosedExecutorKillsTheActor(t *testing.T) {
	s := newDropScene(t)
	close(s.release) // stuck's turn ends; the executor is idle
	for s.one().running.Load() != 0 {
		time.Sleep(time.Millisecond)
	}
	s.shutdownOne(t)
	if _, err := s.sys.Lookup(s.victim.Path()); err != nil {
		t.Fatalf("Lookup before any message: %v; want the actor (nothing has refused it yet)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.victim.Ask(ctx, "refused"); !errors.Is(err, ErrStopped) {
		t.Errorf("Ask to an actor whose executor is closed: %v; want ErrStopped", err)
	}
	s.checkKilled(t)
}
