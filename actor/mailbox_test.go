package actor

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// boundedActor spawns an actor with a mailbox of capacity 2 that is blocked
// in its first message, so that the mailbox fills; release lets it go on.
func boundedActor(t *testing.T, sys *System, overflow Overflow) (r Ref, got func() []int, release func()) {
	t.Helper()
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	var mu sync.Mutex
	var ints []int
	r = spawn(t, sys, Props{Name: "bounded", Mailbox: Mailbox{Capacity: 2, Overflow: overflow},
		New: blockedActor("bounded", entered, gate, &ints, &mu).New})
	r.Tell("block")
	recv(t, entered) // taken: the mailbox is empty again
	return r, func() []int {
			mu.Lock()
			defer mu.Unlock()
			return append([]int(nil), ints...)
		}, func() {
			close(gate)
		}
}

func TestBoundedMailboxFail(t *testing.T) {
	sys := newTestSystem(t)
	r, got, release := boundedActor(t, sys, Fail)
	ctx := context.Background()
	// Exactly at the capacity: accepted; one past: an error naming the actor.
	for i := range 2 {
		if err := r.Send(ctx, i); err != nil {
			t.Fatalf("Send %d of 2: %v", i+1, err)
		}
	}
	err := r.Send(ctx, 2)
	if !errors.Is(err, ErrMailboxFull) || !strings.Contains(err.Error(), "/bounded") {
		t.Errorf("Send 3 of 2: got %v; want ErrMailboxFull naming /bounded", err)
	}
	r.Tell(3) // the same, to dead letters
	if n := sys.DeadLetters(); n != 2 {
		t.Errorf("dead letters: got %d; want 2", n)
	}
	release()
	r.Stop()
	waitDone(t, r)
	if g := got(); len(g) != 2 || g[0] != 0 || g[1] != 1 {
		t.Errorf("handled %v; want [0 1]", g)
	}
}

func TestBoundedMailboxDropNewest(t *testing.T) {
	sys := newTestSystem(t)
	dropped := make(chan any, 4)
	sys.SubscribeDeadLetters(func(d DeadLetter) { dropped <- d.Message })
	r, got, release := boundedActor(t, sys, DropNewest)
	for i := range 4 {
		if err := r.Send(context.Background(), i); err != nil {
			t.Errorf("Send %d: got %v; want nil (the newest is dropped)", i, err)
		}
	}
	if a, b := recv(t, dropped), recv(t, dropped); a != 2 || b != 3 {
		t.Errorf("dropped %v, %v; want 2, 3", a, b)
	}
	release()
	r.Stop()
	waitDone(t, r)
	if g := got(); len(g) != 2 {
		t.Errorf("handled %v; want [0 1]", g)
	}
}

func TestBoundedMailboxWait(t *testing.T) {
	sys := newTestSystem(t)
	r, got, release := boundedActor(t, sys, Wait)
	for i := range 2 {
		if err := r.Send(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	// Full: Send waits until its context ends, and loses nothing else.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := r.Send(ctx, 99); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "/bounded") {
		t.Errorf("Send to a full mailbox: got %v; want DeadlineExceeded naming /bounded", err)
	}
	// A Tell waits for room, which the actor makes once released.
	told := make(chan struct{})
	go func() {
		r.Tell(2)
		r.Tell(3)
		close(told)
	}()
	select {
	case <-told:
		t.Fatal("Tell to a full mailbox returned without waiting")
	case <-time.After(20 * time.Millisecond):
	}
	release()
	recv(t, told)
	r.Stop()
	waitDone(t, r)
	if g := got(); len(g) != 4 || g[2] != 2 || g[3] != 3 {
		t.Errorf("handled %v; want [0 1 2 3]", g)
	}
	if n := sys.DeadLetters(); n != 0 {
		t.Errorf("dead letters: got %d; want 0", n)
	}
}

// Many senders on a small bounded mailbox lose nothing with Wait.
func TestBoundedMailboxWaitManySenders(t *testing.T) {
	sys := newTestSystem(t)
	const senders, each = 8, 500
	var mu sync.Mutex
	count := 0
	all := make(chan struct{})
	r := spawn(t, sys, Props{Dispatcher: "pool", Mailbox: Mailbox{Capacity: 4}, New: behaviour(func(c *Context, msg any) {
		if _, ok := msg.(int); ok {
			mu.Lock()
			count++
			if count == senders*each {
				close(all)
			}
			mu.Unlock()
		}
	})})
	tellFrom(r, senders, each)
	recv(t, all)
}

// recorder spawns, on a virtual dispatcher "v", an actor that passes the
// strings it receives to got, and has it handle a first one; waitIdle waits
// until its mailbox is idle.
func recorder(t *testing.T) (sys *System, r Ref, got chan any, waitIdle func()) {
	sys = newTestSystem(t, WithDispatcher(Dispatcher{Name: "v", Spec: "virtual"}))
	got = make(chan any, 2)
	r = spawn(t, sys, Props{Dispatcher: "v", New: behaviour(func(c *Context, msg any) {
		if s, ok := msg.(string); ok {
			got <- s
		}
	})})
	waitIdle = func() {
		for r.c.status.Load() != idle {
			time.Sleep(time.Millisecond)
		}
	}
	r.Tell("started")
	recv(t, got)
	waitIdle()
	return sys, r, got, waitIdle
}

// A producer descheduled between its push's exchange and its link leaves a
// message pushed but not yet linked. The turn that finds the mailbox empty
// then waits for the link (cell.linked) instead of scheduling turn after
// turn that find nothing, for as long as the producer is away.
func TestReleaseWaitsForAHalfDonePush(t *testing.T) {
	sys, r, got, _ := recorder(t)
	half := &node{msg: "half"}
	prev := r.c.user.tail.Swap(half) // a producer stops here, before its link
	before, _ := sys.DispatcherStats("v")
	r.Tell("after") // linked behind half: the turn it starts sees neither
	time.Sleep(50 * time.Millisecond)
	after, _ := sys.DispatcherStats("v")
	prev.next.Store(half) // the producer links, and finds the mailbox scheduled
	r.c.wake()
	if a, b := recv(t, got), recv(t, got); a != "half" || b != "after" {
		t.Errorf("got %v, %v; want half, after", a, b)
	}
	if turns := after.Submitted - before.Submitted; turns > 2 {
		t.Errorf("%d turns in 50 ms while a push was half done; want at most 2", turns)
	}
}

// A turn that saw a message pushed after it looked takes the mailbox back,
// but a turn that ran in between may have taken that message: then nothing
// is on its way, and the mailbox goes idle rather than held for a message
// that may never come. releaseFrom is given the heads a turn saw before the
// actor handled another message, as a turn that lost the race would have.
func TestReleaseLetsGoWhenAnotherTurnTookTheMessage(t *testing.T) {
	_, r, got, waitIdle := recorder(t)
	user, system := r.c.user.head, r.c.system.head // what the losing turn saw
	r.Tell("second")                               // pushed, and taken by a turn of its own
	recv(t, got)
	waitIdle()
	if !r.c.status.CompareAndSwap(idle, scheduled) { // the losing turn holds the mailbox
		t.Fatal("the mailbox is not idle")
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		r.c.releaseFrom(false, user, system)
	}()
	recv(t, released)
	if s := r.c.status.Load(); s != idle {
		t.Errorf("status %d after release; want idle (%d)", s, idle)
	}
	r.Tell("third") // and the mailbox still runs
	if m := recv(t, got); m != "third" {
		t.Errorf("got %v; want third", m)
	}
}
