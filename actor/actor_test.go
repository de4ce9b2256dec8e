package actor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomrt/loom"
)

var allDispatchers = []string{DefaultDispatcher, "pool", "virtual", "pinned", "blocking"}

type seq struct {
	from, n int
}

// Messages from one sender to one actor arrive in the order sent, whatever
// the dispatcher, while many senders send at once. Guards the queue's FIFO
// order and the turn handing over between goroutines.
func TestOrderPerSender(t *testing.T) {
	const senders, each = 8, 2000
	for _, d := range allDispatchers {
		t.Run(d, func(t *testing.T) {
			sys := newTestSystem(t)
			var mu sync.Mutex
			var faults []string
			got := make(chan int, 1)
			last := make([]int, senders)
			total := 0
			r := spawn(t, sys, Props{Dispatcher: d, New: behaviour(func(c *Context, msg any) {
				if m, ok := msg.(*seq); ok {
					if m.n != last[m.from]+1 {
						mu.Lock()
						faults = append(faults, fmt.Sprintf("sender %d: got %d after %d", m.from, m.n, last[m.from]))
						mu.Unlock()
					}
					last[m.from] = m.n
					total++
					if total == senders*each {
						got <- total
					}
				}
			})})
			var wg sync.WaitGroup
			for s := range senders {
				wg.Go(func() {
					for i := 1; i <= each; i++ {
						r.Tell(&seq{from: s, n: i})
					}
				})
			}
			wg.Wait()
			if n := recv(t, got); n != senders*each {
				t.Errorf("got %d messages; want %d", n, senders*each)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(faults) > 0 {
				t.Errorf("out of order: %v", faults[:min(5, len(faults))])
			}
		})
	}
}

// Order also holds from actor to actor, through Context.Tell and the
// sending actor's node list.
func TestOrderActorToActor(t *testing.T) {
	sys := newTestSystem(t)
	const n = 5000
	done := make(chan string, 1)
	want := 1
	sink := spawn(t, sys, Props{Dispatcher: "pool", New: behaviour(func(c *Context, msg any) {
		if i, ok := msg.(int); ok {
			if i != want {
				done <- fmt.Sprintf("got %d; want %d", i, want)
				return
			}
			want++
			if i == n {
				done <- ""
			}
		}
	})})
	src := spawn(t, sys, Props{Dispatcher: "pool", New: behaviour(func(c *Context, msg any) {
		if msg == "go" {
			for i := 1; i <= n; i++ {
				c.Tell(sink, i)
			}
		}
	})})
	src.Tell("go")
	if fault := recv(t, done); fault != "" {
		t.Error(fault)
	}
}

// Nothing is lost when many goroutines send at once (run with -race).
func TestNothingLost(t *testing.T) {
	const senders, each = 16, 1000
	for _, d := range allDispatchers {
		t.Run(d, func(t *testing.T) {
			sys := newTestSystem(t)
			var count atomic.Int64
			all := make(chan struct{})
			r := spawn(t, sys, Props{Dispatcher: d, New: behaviour(func(c *Context, msg any) {
				if _, ok := msg.(int); ok && count.Add(1) == senders*each {
					close(all)
				}
			})})
			tellFrom(r, senders, each)
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				t.Fatalf("got %d messages; want %d", count.Load(), senders*each)
			}
		})
	}
}

func TestStartedFirstStoppedLast(t *testing.T) {
	sys := newTestSystem(t)
	var log []string
	gate := make(chan struct{})
	r := spawn(t, sys, Props{New: behaviour(func(c *Context, msg any) {
		switch m := msg.(type) {
		case Started:
			<-gate
			log = append(log, "started")
		case Stopping:
			log = append(log, "stopping")
		case Stopped:
			log = append(log, "stopped")
		case string:
			log = append(log, m)
		}
	})})
	r.Tell("a") // queued before Started runs: Started still comes first
	r.Stop()
	close(gate)
	waitDone(t, r)
	if got, want := strings.Join(log, ","), "started,a,stopping,stopped"; got != want {
		t.Errorf("got %s; want %s", got, want)
	}
}

func echoProps(name string) Props {
	return Props{Name: name, New: behaviour(func(c *Context, msg any) {
		switch m := msg.(type) {
		case string:
			c.Respond(m)
		case int:
			c.Respond(m * 2)
		}
	})}
}

func TestAsk(t *testing.T) {
	sys := newTestSystem(t)
	r := spawn(t, sys, echoProps("echo"))
	ctx := context.Background()

	s, err := Ask[string](ctx, r, "hi")
	if err != nil || s != "hi" {
		t.Errorf("Ask string: got %q, %v; want hi, nil", s, err)
	}
	n, err := Ask[int](ctx, r, 21)
	if err != nil || n != 42 {
		t.Errorf("Ask int: got %d, %v; want 42, nil", n, err)
	}
	_, err = Ask[int](ctx, r, "hi")
	if !errors.Is(err, ErrUnexpectedReply) || !strings.Contains(err.Error(), "got string, want int") {
		t.Errorf("Ask with the wrong type: got %v; want ErrUnexpectedReply naming string and int", err)
	}
}

func TestAskTimeout(t *testing.T) {
	sys := newTestSystem(t)
	silent := spawn(t, sys, Props{Name: "silent", New: behaviour(func(*Context, any) {})})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := silent.Ask(ctx, "anyone?")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "/silent") {
		t.Errorf("got %v; want DeadlineExceeded naming /silent", err)
	}
}

// Ask to a stopped actor is an error at once, not a hang; so is Ask to an
// actor that stops with the question still queued.
func TestAskStopped(t *testing.T) {
	sys := newTestSystem(t)
	r := spawn(t, sys, echoProps("gone"))
	r.Stop()
	waitDone(t, r)
	_, err := r.Ask(context.Background(), "hi") // no deadline: a hang would time the test out
	if !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "/gone") {
		t.Errorf("Ask after stop: got %v; want ErrStopped naming /gone", err)
	}

	gate := make(chan struct{})
	entered := make(chan struct{})
	blocked := spawn(t, sys, Props{Name: "blocked", New: behaviour(func(c *Context, msg any) {
		if msg == "block" {
			close(entered)
			<-gate
		}
	})})
	blocked.Tell("block")
	<-entered
	tail := blocked.c.user.tail.Load()
	errs := make(chan error, 1)
	go func() {
		_, err := blocked.Ask(context.Background(), "question")
		errs <- err
	}()
	// Kill once the question is queued: it goes to dead letters, which
	// fails the Ask.
	waitFor(t, func() bool { return blocked.c.user.tail.Load() != tail })
	blocked.Kill()
	close(gate)
	if err := recv(t, errs); !errors.Is(err, ErrStopped) {
		t.Errorf("Ask of a killed actor: got %v; want ErrStopped", err)
	}
	_, err = Ref{}.Ask(context.Background(), "x")
	if !errors.Is(err, ErrStopped) {
		t.Errorf("Ask of the zero Ref: got %v; want ErrStopped", err)
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestForward(t *testing.T) {
	sys := newTestSystem(t)
	back := spawn(t, sys, echoProps("back"))
	front := spawn(t, sys, Props{Name: "front", New: behaviour(func(c *Context, msg any) {
		c.Forward(back)
	})})
	got, err := Ask[string](context.Background(), front, "via")
	if err != nil || got != "via" {
		t.Errorf("got %q, %v; want via, nil", got, err)
	}
}

// tellFrom tells r the ints 0 to each-1 from each of senders goroutines at
// once, and returns when all are told.
func tellFrom(r Ref, senders, each int) {
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for i := range each {
				r.Tell(i)
			}
		})
	}
	wg.Wait()
}

// blockedActor returns props whose actor blocks on its first "block"
// message until gate closes, and records every int it receives.
func blockedActor(name string, entered chan<- struct{}, gate <-chan struct{}, got *[]int, mu *sync.Mutex) Props {
	return Props{Name: name, New: behaviour(func(c *Context, msg any) {
		switch m := msg.(type) {
		case string:
			if m == "block" {
				entered <- struct{}{}
				<-gate
			}
		case int:
			mu.Lock()
			*got = append(*got, m)
			mu.Unlock()
		}
	})}
}

// Stop finishes what is queued before it; Kill, a system message, overtakes
// it (however much is queued) and sends it to dead letters.
func TestStopAndKillWithQueuedMessages(t *testing.T) {
	for _, tc := range []struct {
		name     string
		stop     func(Ref)
		queued   int
		wantGot  int
		wantDead uint64
	}{
		{"stop", Ref.Stop, 10, 10, 3},
		{"kill", Ref.Kill, 10, 0, 13},
		{"kill overtakes 100", Ref.Kill, 100, 0, 103},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := newTestSystem(t)
			gate := make(chan struct{})
			var mu sync.Mutex
			var got []int
			entered := make(chan struct{}, 1)
			r := spawn(t, sys, blockedActor("a", entered, gate, &got, &mu))
			r.Tell("block")
			recv(t, entered)
			for i := range tc.queued {
				r.Tell(i)
			}
			tc.stop(r)
			for i := range 3 {
				r.Tell(100 + i) // after the stop: dead letters either way
			}
			close(gate)
			waitDone(t, r)
			mu.Lock()
			defer mu.Unlock()
			if len(got) != tc.wantGot {
				t.Errorf("handled %d queued messages; want %d", len(got), tc.wantGot)
			}
			if n := sys.DeadLetters(); n != tc.wantDead {
				t.Errorf("dead letters: got %d; want %d", n, tc.wantDead)
			}
		})
	}
}

func TestChildrenStopFirst(t *testing.T) {
	sys := newTestSystem(t)
	var mu sync.Mutex
	var events []string
	note := func(s string) { mu.Lock(); events = append(events, s); mu.Unlock() }
	kids := make(chan Ref, 2)
	parent := spawn(t, sys, Props{Name: "parent", New: behaviour(func(c *Context, msg any) {
		switch msg.(type) {
		case Started:
			for _, name := range []string{"a", "b"} {
				k, err := c.Spawn(Props{Name: name, New: behaviour(func(c *Context, msg any) {
					if _, ok := msg.(Stopped); ok {
						note("child stopped " + c.Self().Path())
					}
				})})
				if err != nil {
					panic(err)
				}
				kids <- k
			}
		case Stopped:
			note("parent stopped")
		}
	})})
	a, b := recv(t, kids), recv(t, kids)
	if a.Path() != "/parent/a" || b.Path() != "/parent/b" {
		t.Errorf("paths: got %s, %s; want /parent/a, /parent/b", a.Path(), b.Path())
	}
	if got, err := sys.Lookup("/parent/b"); err != nil || got != b {
		t.Errorf("Lookup(/parent/b): got %v, %v; want %v", got, err, b)
	}
	parent.Stop()
	waitDone(t, parent)
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 3 || events[2] != "parent stopped" {
		t.Errorf("got %v; want both children stopped, then the parent", events)
	}
	if _, err := sys.Lookup("/parent/b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lookup after stop: got %v; want ErrNotFound", err)
	}
}

func TestWatch(t *testing.T) {
	sys := newTestSystem(t)
	target := spawn(t, sys, echoProps("target"))
	terminated := make(chan Ref, 2)
	watcher := spawn(t, sys, Props{Name: "watcher", New: behaviour(func(c *Context, msg any) {
		switch m := msg.(type) {
		case Ref:
			c.Watch(m)
			c.Respond("watching")
		case Terminated:
			terminated <- m.Actor
		}
	})})
	if _, err := watcher.Ask(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	target.Stop()
	if got := recv(t, terminated); got != target {
		t.Errorf("Terminated for %v; want %v", got, target)
	}
	// Watching an actor that has already stopped: Terminated at once.
	if _, err := watcher.Ask(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, terminated); got != target {
		t.Errorf("second Terminated for %v; want %v", got, target)
	}
}

// Terminated comes after every message the stopped actor sent.
func TestTerminatedAfterLastMessages(t *testing.T) {
	sys := newTestSystem(t)
	got := make(chan any, 200)
	watcher := spawn(t, sys, Props{Name: "watcher", New: behaviour(func(c *Context, msg any) {
		switch m := msg.(type) {
		case Ref:
			c.Watch(m)
			c.Respond("watching")
		case int, Terminated:
			got <- m
		}
	})})
	talker := spawn(t, sys, Props{Name: "talker", New: behaviour(func(c *Context, msg any) {
		if msg == "talk" {
			for i := range 100 {
				c.Tell(watcher, i)
			}
			c.Self().Kill()
		}
	})})
	if _, err := watcher.Ask(context.Background(), talker); err != nil {
		t.Fatal(err)
	}
	talker.Tell("talk")
	for i := range 100 {
		if m := recv(t, got); m != i {
			t.Fatalf("message %d: got %v; want %d", i, m, i)
		}
	}
	if m, ok := recv(t, got).(Terminated); !ok || m.Actor != talker {
		t.Errorf("last: got %v; want Terminated{%v}", m, talker)
	}
}

func TestDeadLetters(t *testing.T) {
	sys := newTestSystem(t)
	got := make(chan DeadLetter, 10)
	cancel := sys.SubscribeDeadLetters(func(d DeadLetter) { got <- d })
	r := spawn(t, sys, echoProps("late"))
	r.Stop()
	waitDone(t, r)
	r.Tell("too late")
	d := recv(t, got)
	if d.Recipient != r || d.Message != "too late" || !errors.Is(d.Reason, ErrStopped) {
		t.Errorf("got %+v; want the message to /late, ErrStopped", d)
	}
	cancel()
	r.Tell("unseen")
	waitFor(t, func() bool { return sys.DeadLetters() == 2 }) // counted after cancel too
	if len(got) != 0 {
		t.Errorf("a cancelled subscription got %d dead letters", len(got))
	}
}

func TestSpawnErrors(t *testing.T) {
	sys := newTestSystem(t)
	spawn(t, sys, echoProps("taken"))
	for _, tc := range []struct {
		props Props
		want  error
		named string
	}{
		{Props{Name: "nil"}, ErrInvalidProps, "/nil"},
		{echoProps("taken"), ErrDuplicateName, "/taken"},
		{echoProps("a/b"), ErrInvalidProps, "/a/b"},
		{echoProps("$x"), ErrInvalidProps, "/$x"},
		{Props{Name: "d", Dispatcher: "nope", New: echoProps("").New}, ErrInvalidProps, `"nope"`},
		{Props{Name: "m", Mailbox: Mailbox{Capacity: -1}, New: echoProps("").New}, ErrInvalidProps, "/m"},
	} {
		_, err := sys.Spawn(tc.props)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.named) {
			t.Errorf("Spawn(%q): got %v; want %v naming %s", tc.props.Name, err, tc.want, tc.named)
		}
	}
}

// A Props.New that returns nil fails the actor, which stops (the default
// supervisor), and the process lives.
func TestNewReturnsNil(t *testing.T) {
	sys := newTestSystem(t)
	r := spawn(t, sys, Props{Name: "nil", New: func() Actor { return nil }})
	waitDone(t, r)
	if _, err := r.Ask(context.Background(), "x"); !errors.Is(err, ErrStopped) {
		t.Errorf("Ask: got %v; want ErrStopped", err)
	}
}

// A bad spec, in a dispatcher's variable or its Spec, stops NewSystem with
// an error naming the dispatcher and the spec.
func TestBadDispatcherSpec(t *testing.T) {
	t.Run("variable", func(t *testing.T) {
		t.Setenv("LOOM_EXECUTOR_POOL", "pool:x")
		_, err := NewSystem()
		if err == nil || !strings.Contains(err.Error(), "LOOM_EXECUTOR_POOL") || !strings.Contains(err.Error(), "pool:x") {
			t.Errorf("got %v; want an error naming LOOM_EXECUTOR_POOL and pool:x", err)
		}
	})
	t.Run("spec", func(t *testing.T) {
		_, err := NewSystem(WithDispatcher(Dispatcher{Name: "reports", Spec: "limit:-1"}))
		if err == nil || !strings.Contains(err.Error(), "dispatcher reports") || !strings.Contains(err.Error(), "limit:-1") {
			t.Errorf("got %v; want an error naming dispatcher reports and limit:-1", err)
		}
	})
}

// LOOM_EXECUTOR_ACTORS switches the default dispatcher.
func TestDefaultDispatcherFromEnv(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR_ACTORS", "pool:3")
	sys := newTestSystem(t)
	spawn(t, sys, echoProps("e"))
	if _, ok := sys.DispatcherStats("pool"); ok {
		t.Error("DispatcherStats(pool): built before any actor used it")
	}
	if st, _ := sys.DispatcherStats(DefaultDispatcher); st.Kind != loom.KindPool || st.Workers != 3 {
		t.Errorf("default dispatcher: got %s with %d workers; want pool with 3", st.Kind, st.Workers)
	}
}

func TestShutdown(t *testing.T) {
	sys, err := NewSystem()
	if err != nil {
		t.Fatal(err)
	}
	var refs []Ref
	for i := range 20 {
		refs = append(refs, spawn(t, sys, Props{Dispatcher: allDispatchers[i%len(allDispatchers)], New: echoProps("").New}))
	}
	if err := sys.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		select {
		case <-r.Done():
		default:
			t.Errorf("%s still running after Shutdown", r)
		}
	}
	if _, err := sys.Spawn(echoProps("late")); !errors.Is(err, ErrShutdown) {
		t.Errorf("Spawn after Shutdown: got %v; want ErrShutdown", err)
	}
	if err := sys.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	refs[0].Tell("after shutdown") // a dead letter, no panic
}

// A Shutdown whose context ends kills what is left and says so.
func TestShutdownGivesUp(t *testing.T) {
	sys, err := NewSystem()
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	r := spawn(t, sys, Props{Name: "stuck", Dispatcher: "pool", New: behaviour(func(c *Context, msg any) {
		if msg == "block" {
			<-gate
		}
	})})
	r.Tell("block")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = sys.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v; want DeadlineExceeded", err)
	}
	close(gate)
	waitDone(t, r)
}

// A Shutdown that gives up while mailbox turns wait in the executor's queue
// (the executor drops them unrun) sends their messages to dead letters, and
// those of the mailboxes waiting for the room the dropped turns held: none is
// lost unseen. Those actors are killed before Shutdown returns.
func TestShutdownGivesUpDeadLettersQueuedTurns(t *testing.T) {
	// One worker and a queue of one: a stuck actor holds the worker, a
	// second actor's turn waits in the executor's queue, a third waits in
	// the dispatcher's ready list.
	sys, err := NewSystem(WithDispatcher(Dispatcher{Name: "one", Spec: "pool:1,queue=1"}),
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	entered, gate := make(chan struct{}), make(chan struct{})
	stuck := spawn(t, sys, Props{Name: "stuck", Dispatcher: "one", New: behaviour(func(c *Context, msg any) {
		if msg == "block" {
			close(entered)
			<-gate
		}
	})})
	stuck.Tell("block")
	recv(t, entered)

	var mu sync.Mutex
	lost := map[string][]any{}
	cancelSub := sys.SubscribeDeadLetters(func(d DeadLetter) {
		mu.Lock()
		defer mu.Unlock()
		lost[d.Recipient.Path()] = append(lost[d.Recipient.Path()], d.Message)
	})
	defer cancelSub()
	handled := make(chan any, 10)
	record := behaviour(func(c *Context, msg any) {
		if _, ok := msg.(string); ok {
			handled <- msg
		}
	})
	queued := spawn(t, sys, Props{Name: "queued", Dispatcher: "one", New: record})
	ready := spawn(t, sys, Props{Name: "ready", Dispatcher: "one", New: record})
	for _, m := range []string{"q1", "q2", "q3"} {
		queued.Tell(m)
	}
	for _, m := range []string{"r1", "r2"} {
		ready.Tell(m)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sys.Shutdown(ctx); !errors.Is(err, loom.ErrAbandoned) {
		t.Errorf("Shutdown: got %v; want an error wrapping loom.ErrAbandoned", err)
	}
	mu.Lock()
	for path, want := range map[string][]any{queued.Path(): {"q1", "q2", "q3"}, ready.Path(): {"r1", "r2"}} {
		if got := lost[path]; !reflect.DeepEqual(got, want) {
			t.Errorf("dead letters of %s: got %v; want %v", path, got, want)
		}
	}
	mu.Unlock()
	// Both were killed before Shutdown returned: the one whose turn was
	// dropped and the one waiting in the ready list for its room.
	for _, r := range []Ref{queued, ready} {
		select {
		case <-r.Done():
		default:
			t.Errorf("%s not done when Shutdown returned", r)
		}
		if _, err := sys.Lookup(r.Path()); !errors.Is(err, ErrNotFound) {
			t.Errorf("Lookup(%s) after Shutdown gave up: %v; want ErrNotFound", r.Path(), err)
		}
	}
	close(gate)
	waitDone(t, stuck)
	if len(handled) != 0 {
		t.Errorf("%d messages handled after Shutdown gave up; want 0", len(handled))
	}
}
