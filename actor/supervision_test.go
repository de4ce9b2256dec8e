package actor

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

var errBoom = errors.New("boom")

// counter counts its messages; "fail" panics with errBoom. It reports
// every signal and count on events.
func counter(events chan<- string) func() Actor {
	return func() Actor {
		n := 0
		return ReceiveFunc(func(c *Context, msg any) {
			switch m := msg.(type) {
			case Started:
				events <- "started"
			case Stopped:
				events <- "stopped"
			case Restarting:
				events <- fmt.Sprintf("restarting(%v)", m.Reason)
			case string:
				if m == "fail" {
					panic(errBoom)
				}
				n++
				events <- fmt.Sprintf("%s=%d", m, n)
			}
		})
	}
}

// expect reads len(want) events and compares them.
func expect(t *testing.T, events <-chan string, want ...string) {
	t.Helper()
	var got []string
	for range want {
		got = append(got, recv(t, events))
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
}

func TestSupervisionDirectives(t *testing.T) {
	for _, tc := range []struct {
		name string
		sup  Supervisor
		want []string
	}{
		// Akka typed's default: stop; the message queued after is a dead letter.
		{"default stops", Supervisor{}, []string{"started", "a=1", "stopped"}},
		{"stop", Supervisor{Decide: Always(Stop)}, []string{"started", "a=1", "stopped"}},
		// Resume keeps the state: the count goes on.
		{"resume", Supervisor{Decide: Always(Resume)}, []string{"started", "a=1", "b=2"}},
		// Restart: a fresh behaviour, the mailbox kept.
		{"restart", Supervisor{Decide: Always(Restart)}, []string{"started", "a=1", "restarting(boom)", "started", "b=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := newTestSystem(t)
			events := make(chan string, 10)
			// The actor holds "a" until all three are told, so that b is
			// queued before fail is handled: a Tell racing the failure may
			// come after the stop, and its dead letter comes later.
			gate := make(chan struct{})
			newCounter := counter(events)
			r := spawn(t, sys, Props{Name: "c", Supervisor: tc.sup, New: func() Actor {
				a := newCounter()
				return ReceiveFunc(func(c *Context, msg any) {
					if msg == "a" {
						<-gate
					}
					a.Receive(c, msg)
				})
			}})
			// Each dead letter notes whether Done had closed when it was found.
			type letter struct {
				msg       any
				afterDone bool
			}
			letters := make(chan letter, 10)
			sys.SubscribeDeadLetters(func(d DeadLetter) {
				select {
				case <-d.Recipient.Done():
					letters <- letter{d.Message, true}
				default:
					letters <- letter{d.Message, false}
				}
			})
			r.Tell("a")
			r.Tell("fail")
			r.Tell("b")
			close(gate)
			expect(t, events, tc.want...)
			if tc.want[len(tc.want)-1] != "stopped" {
				if n := sys.DeadLetters(); n != 0 {
					t.Errorf("dead letters: got %d; want 0", n)
				}
				return
			}
			// What was queued is a dead letter before Done closes.
			waitDone(t, r)
			if n := sys.DeadLetters(); n != 1 {
				t.Errorf("dead letters at Done: got %d; want 1 (b)", n)
			}
			if got, want := recv(t, letters), (letter{"b", false}); got != want {
				t.Errorf("dead letter: got %+v; want %+v", got, want)
			}
			// What comes after is one too, from a later turn.
			r.Tell("c")
			if got, want := recv(t, letters), (letter{"c", true}); got != want {
				t.Errorf("dead letter: got %+v; want %+v", got, want)
			}
		})
	}
}

// MaxRestarts=3 within 10 s: three restarts, and the fourth failure within
// the window stops the actor; failures further apart than the window never
// do.
func TestRestartLimit(t *testing.T) {
	clock := newFakeClock()
	sys := newTestSystem(t, WithClock(clock))
	events := make(chan string, 100)
	sup := Supervisor{Decide: Always(Restart), MaxRestarts: 3, Within: 10 * time.Second}
	r := spawn(t, sys, Props{Name: "limited", Supervisor: sup, New: counter(events)})
	expect(t, events, "started")
	for range 3 { // exactly at the limit
		r.Tell("fail")
		expect(t, events, "restarting(boom)", "started")
	}
	clock.advance(9 * time.Second) // still within the window
	r.Tell("fail")                 // one past
	expect(t, events, "stopped")
	waitDone(t, r)

	spread := spawn(t, sys, Props{Name: "spread", Supervisor: sup, New: counter(events)})
	expect(t, events, "started")
	for range 6 {
		r := spread
		r.Tell("fail")
		expect(t, events, "restarting(boom)", "started")
		clock.advance(4 * time.Second) // three failures span more than 10 s
	}
}

// Backoff: restart n waits Min·2ⁿ (capped at Max) on the clock, during which
// user messages wait in the mailbox.
func TestRestartBackoff(t *testing.T) {
	clock := newFakeClock()
	sys := newTestSystem(t, WithClock(clock))
	events := make(chan string, 100)
	sup := Supervisor{Decide: Always(Restart), Backoff: Backoff{Min: 100 * time.Millisecond, Max: 300 * time.Millisecond}}
	r := spawn(t, sys, Props{Name: "backoff", Supervisor: sup, New: counter(events)})
	expect(t, events, "started")
	for _, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond} {
		r.Tell("fail")
		r.Tell("queued")
		expect(t, events, "restarting(boom)")
		waitFor(t, func() bool { return len(clock.pending()) == 1 })
		if got := clock.pending(); got[0] != want {
			t.Errorf("backoff: got %v; want %v", got[0], want)
		}
		clock.advance(want - time.Millisecond)
		select {
		case e := <-events:
			t.Fatalf("%s before the backoff ended", e)
		case <-time.After(10 * time.Millisecond):
		}
		clock.advance(time.Millisecond)
		expect(t, events, "started", "queued=1")
	}
	// A stop during the backoff cancels the restart.
	r.Tell("fail")
	expect(t, events, "restarting(boom)")
	waitFor(t, func() bool { return len(clock.pending()) == 1 })
	r.Kill()
	waitDone(t, r)
	if n := len(clock.pending()); n != 0 {
		t.Errorf("%d timers left after the actor stopped; want 0", n)
	}
}

func TestBackoffDelay(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		b      Backoff
		n      int
		random float64
		want   time.Duration
	}{
		{Backoff{}, 3, 0.5, 0},
		{Backoff{Min: 10 * ms}, 0, 0, 10 * ms},
		{Backoff{Min: 10 * ms}, 3, 0, 80 * ms},
		{Backoff{Min: 10 * ms, Max: 50 * ms}, 2, 0, 40 * ms},
		{Backoff{Min: 10 * ms, Max: 50 * ms}, 3, 0, 50 * ms},
		{Backoff{Min: 10 * ms, Max: 50 * ms}, 1000, 0, 50 * ms},
		{Backoff{Min: 10 * ms, Max: 50 * ms, RandomFactor: 0.2}, 0, 0.5, 11 * ms},
		{Backoff{Min: 10 * ms, RandomFactor: 1}, 1, 0.999, 20*ms + 19980*time.Microsecond},
		{Backoff{Min: time.Hour}, 1 << 30, 0, 1 << 20 * time.Hour},                // stops doubling before it overflows
		{Backoff{Min: time.Hour, RandomFactor: 1e300}, 1 << 30, 1, math.MaxInt64}, // and saturates
	} {
		if got := tc.b.delay(tc.n, tc.random); got != tc.want {
			t.Errorf("%+v.delay(%d, %v): got %v; want %v", tc.b, tc.n, tc.random, got, tc.want)
		}
	}
}

// Escalate stops the child and fails the parent, whose supervisor decides.
func TestEscalate(t *testing.T) {
	sys := newTestSystem(t)
	events := make(chan string, 10)
	child := make(chan Ref, 2)
	parent := spawn(t, sys, Props{Name: "parent", Supervisor: Supervisor{Decide: Always(Restart)},
		New: func() Actor {
			return ReceiveFunc(func(c *Context, msg any) {
				switch m := msg.(type) {
				case Started:
					k, err := c.Spawn(Props{Name: "child", Supervisor: Supervisor{Decide: Always(Escalate)}, New: counter(make(chan string, 10))})
					if err != nil {
						panic(err)
					}
					child <- k
					events <- "parent started"
				case Restarting:
					var esc *EscalatedError
					if e, ok := m.Reason.(*EscalatedError); ok {
						esc = e
					}
					if esc == nil || esc.Child != "/parent/child" || !errors.Is(esc, errBoom) {
						events <- fmt.Sprintf("restarting with %v", m.Reason)
						return
					}
					events <- "parent restarting"
				}
			})
		}})
	expect(t, events, "parent started")
	first := recv(t, child)
	first.Tell("fail")
	expect(t, events, "parent restarting", "parent started")
	waitDone(t, first)
	if second := recv(t, child); second == first || second.Path() != "/parent/child" {
		t.Errorf("after the restart: child %v; want a new /parent/child", second)
	}
	parent.Stop()
	waitDone(t, parent)
}

// A Decide that panics, or answers nonsense, stops the actor.
func TestDecideMisbehaves(t *testing.T) {
	for name, decide := range map[string]func(any) Directive{
		"panics":   func(any) Directive { panic("decide") },
		"nonsense": func(any) Directive { return Directive(42) },
	} {
		t.Run(name, func(t *testing.T) {
			sys := newTestSystem(t)
			events := make(chan string, 10)
			r := spawn(t, sys, Props{Supervisor: Supervisor{Decide: decide}, New: counter(events)})
			r.Tell("fail")
			expect(t, events, "started", "stopped")
		})
	}
}

// A panic in Started is supervised like any other.
func TestPanicInStarted(t *testing.T) {
	clock := newFakeClock()
	sys := newTestSystem(t, WithClock(clock))
	starts := 0
	r := spawn(t, sys, Props{Supervisor: Supervisor{Decide: Always(Restart), MaxRestarts: 2}, New: behaviour(func(c *Context, msg any) {
		if _, ok := msg.(Started); ok {
			starts++
			panic("no start")
		}
	})})
	waitDone(t, r)
	if starts != 3 {
		t.Errorf("started %d times; want 3 (the first and two restarts)", starts)
	}
}
