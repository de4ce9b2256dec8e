package peers

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	hollywood "github.com/anthdm/hollywood/actor"
	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/loomrt/loom/actor"

	_ "github.com/loomrt/loom/bench/peers/internal/protowarn" // before either registers its protobuf files
)

// The echo benchmark after Akka's ActorBenchmark, run by each library the
// way its users write actors: echoPairs pairs, the sender sends a batch of
// echoBatch messages and waits for all of them to come back, again and
// again. Every message, either way, is one op; msg/s counts both ways.
//
// Each library sends at its cheapest: a message is one pointer, made once
// per pair, that carries the sender's address, so no library pays for a
// sender envelope or a reply future.
const (
	echoPairs = 64
	echoBatch = 50
)

// An echoRunner runs rounds batches on every pair and returns when all
// pairs are done.
type echoRunner interface {
	run(rounds int) error
	close() error
}

type echoLibrary struct {
	name string
	make func() (echoRunner, error)
}

func echoLibraries() []echoLibrary {
	libs := []echoLibrary{}
	for _, d := range []string{"pool", "virtual", "pinned"} {
		libs = append(libs, echoLibrary{"loom-" + d, func() (echoRunner, error) { return newLoomEcho(d) }})
	}
	return append(libs,
		echoLibrary{"protoactor", func() (echoRunner, error) { return newProtoEcho(), nil }},
		echoLibrary{"hollywood", newHollywoodEcho},
		echoLibrary{"channels", func() (echoRunner, error) { return channelEcho{}, nil }},
	)
}

// BenchmarkEcho runs the echo workload on loom's dispatchers, protoactor-go,
// hollywood and bare goroutine-and-channel pairs, in turn within one run.
// Compare with benchstat, or by the msg/s column.
func BenchmarkEcho(b *testing.B) {
	for _, lib := range echoLibraries() {
		b.Run(lib.name, func(b *testing.B) {
			r, err := lib.make()
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := r.close(); err != nil {
					b.Error(err)
				}
			}()
			perRound := echoPairs * echoBatch * 2
			rounds := max(1, b.N/perRound)
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu := time.Now(), processCPU()
			if err := r.run(rounds); err != nil {
				b.Fatal(err)
			}
			elapsed, cpu := time.Since(start), processCPU()-cpu
			b.StopTimer()
			msgs := float64(rounds * perRound)
			b.ReportMetric(msgs/elapsed.Seconds(), "msg/s")
			// CPU time per message, which the machine's other load changes
			// less than it changes msg/s.
			b.ReportMetric(float64(cpu.Nanoseconds())/msgs, "cpu-ns/msg")
		})
	}
}

// TestEcho checks every library's echo delivers every message (a fast
// result from lost messages would be a lie).
func TestEcho(t *testing.T) {
	for _, lib := range echoLibraries() {
		t.Run(lib.name, func(t *testing.T) {
			r, err := lib.make()
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // a second run reuses the pairs
				if err := r.run(20); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.close(); err != nil {
				t.Error(err)
			}
		})
	}
}

// echoTimeout bounds one run, so that a lost message fails instead of
// hanging.
const echoTimeout = 2 * time.Minute

func waitPairs(done *sync.WaitGroup) error {
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
		return nil
	case <-time.After(echoTimeout):
		return fmt.Errorf("echo: pairs not done after %v: messages lost", echoTimeout)
	}
}

// echoRounds is a sender's count of its batches, the same in every library:
// begin starts rounds batches; returned counts one message back and reports
// whether the next batch is due, marking the pair done after the last.
type echoRounds struct {
	rounds   int
	received int
	done     *sync.WaitGroup
}

// echoStart tells a sender to run rounds batches.
type echoStart struct{ rounds int }

func (r *echoRounds) begin(rounds int) { r.rounds, r.received = rounds, 0 }

func (r *echoRounds) returned() bool {
	r.received++
	if r.received < echoBatch {
		return false
	}
	r.received = 0
	if r.rounds--; r.rounds == 0 {
		r.done.Done()
		return false
	}
	return true
}

// loom

type loomEcho struct {
	sys     *actor.System
	senders []actor.Ref
	done    sync.WaitGroup
}

type loomPing struct{ from actor.Ref }

type loomSender struct {
	echo actor.Ref
	ping *loomPing
	echoRounds
}

func (s *loomSender) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case *echoStart:
		s.begin(m.rounds)
		s.send(c)
	case *loomPing:
		if s.returned() {
			s.send(c)
		}
	case actor.Started:
		s.ping = &loomPing{from: c.Self()}
	}
}

func (s *loomSender) send(c *actor.Context) {
	for range echoBatch {
		c.Tell(s.echo, s.ping)
	}
}

func loomEchoer(c *actor.Context, msg any) {
	if m, ok := msg.(*loomPing); ok {
		c.Tell(m.from, m)
	}
}

func newLoomEcho(dispatcher string) (*loomEcho, error) {
	sys, err := actor.NewSystem()
	if err != nil {
		return nil, err
	}
	e := &loomEcho{sys: sys}
	for range echoPairs {
		echo, err := sys.Spawn(actor.Props{Dispatcher: dispatcher, New: func() actor.Actor { return actor.ReceiveFunc(loomEchoer) }})
		if err != nil {
			return nil, err
		}
		s, err := sys.Spawn(actor.Props{Dispatcher: dispatcher, New: func() actor.Actor {
			return &loomSender{echo: echo, echoRounds: echoRounds{done: &e.done}}
		}})
		if err != nil {
			return nil, err
		}
		e.senders = append(e.senders, s)
	}
	return e, nil
}

func (e *loomEcho) run(rounds int) error {
	e.done.Add(len(e.senders))
	start := &echoStart{rounds: rounds}
	for _, s := range e.senders {
		s.Tell(start)
	}
	return waitPairs(&e.done)
}

func (e *loomEcho) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.sys.Shutdown(ctx)
}

// protoactor-go

type protoEcho struct {
	sys     *protoactor.ActorSystem
	senders []*protoactor.PID
	done    sync.WaitGroup
}

type protoPing struct{ from *protoactor.PID }

type protoSender struct {
	echo *protoactor.PID
	ping *protoPing
	echoRounds
}

func (s *protoSender) Receive(c protoactor.Context) {
	switch m := c.Message().(type) {
	case *echoStart:
		s.begin(m.rounds)
		s.send(c)
	case *protoPing:
		if s.returned() {
			s.send(c)
		}
	case *protoactor.Started:
		s.ping = &protoPing{from: c.Self()}
	}
}

func (s *protoSender) send(c protoactor.Context) {
	for range echoBatch {
		c.Send(s.echo, s.ping)
	}
}

func newProtoEcho() *protoEcho {
	quiet := func(*protoactor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }
	sys := protoactor.NewActorSystem(protoactor.WithLoggerFactory(quiet))
	e := &protoEcho{sys: sys}
	echoProps := protoactor.PropsFromFunc(func(c protoactor.Context) {
		if m, ok := c.Message().(*protoPing); ok {
			c.Send(m.from, m)
		}
	})
	for range echoPairs {
		echo := sys.Root.Spawn(echoProps)
		s := sys.Root.Spawn(protoactor.PropsFromProducer(func() protoactor.Actor {
			return &protoSender{echo: echo, echoRounds: echoRounds{done: &e.done}}
		}))
		e.senders = append(e.senders, s)
	}
	return e
}

func (e *protoEcho) run(rounds int) error {
	e.done.Add(len(e.senders))
	start := &echoStart{rounds: rounds}
	for _, s := range e.senders {
		e.sys.Root.Send(s, start)
	}
	return waitPairs(&e.done)
}

func (e *protoEcho) close() error {
	e.sys.Shutdown()
	return nil
}

// hollywood

type hollywoodEcho struct {
	engine  *hollywood.Engine
	pids    []*hollywood.PID
	senders []*hollywood.PID
	done    sync.WaitGroup
}

type hollywoodPing struct{ from *hollywood.PID }

type hollywoodSender struct {
	echo *hollywood.PID
	ping *hollywoodPing
	echoRounds
}

func (s *hollywoodSender) Receive(c *hollywood.Context) {
	switch m := c.Message().(type) {
	case *echoStart:
		s.begin(m.rounds)
		s.send(c)
	case *hollywoodPing:
		if s.returned() {
			s.send(c)
		}
	case hollywood.Started:
		s.ping = &hollywoodPing{from: c.PID()}
	}
}

func (s *hollywoodSender) send(c *hollywood.Context) {
	for range echoBatch {
		c.Send(s.echo, s.ping)
	}
}

type hollywoodEchoer struct{}

func (hollywoodEchoer) Receive(c *hollywood.Context) {
	if m, ok := c.Message().(*hollywoodPing); ok {
		c.Send(m.from, m)
	}
}

func newHollywoodEcho() (echoRunner, error) {
	engine, err := hollywood.NewEngine(hollywood.NewEngineConfig())
	if err != nil {
		return nil, err
	}
	e := &hollywoodEcho{engine: engine}
	for i := range echoPairs {
		echo := engine.Spawn(func() hollywood.Receiver { return hollywoodEchoer{} }, "echo", hollywood.WithID(fmt.Sprint(i)))
		s := engine.Spawn(func() hollywood.Receiver {
			return &hollywoodSender{echo: echo, echoRounds: echoRounds{done: &e.done}}
		}, "sender", hollywood.WithID(fmt.Sprint(i)))
		e.pids = append(e.pids, echo, s)
		e.senders = append(e.senders, s)
	}
	return e, nil
}

func (e *hollywoodEcho) run(rounds int) error {
	e.done.Add(len(e.senders))
	start := &echoStart{rounds: rounds}
	for _, s := range e.senders {
		e.engine.Send(s, start)
	}
	return waitPairs(&e.done)
}

func (e *hollywoodEcho) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, pid := range e.pids {
		wg.Go(func() { <-e.engine.Poison(pid).Done() })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("hollywood: actors not stopped: %w", ctx.Err())
	}
}

// channels: the baseline, a goroutine per actor and a buffered channel as
// its mailbox, nothing else.

type channelEcho struct{}

func (channelEcho) run(rounds int) error {
	var done sync.WaitGroup
	done.Add(echoPairs)
	for range echoPairs {
		toEcho := make(chan *struct{}, echoBatch)
		toSender := make(chan *struct{}, echoBatch)
		go func() {
			for m := range toEcho {
				toSender <- m
			}
			close(toSender)
		}()
		go func() {
			defer done.Done()
			ping := &struct{}{}
			for range rounds {
				for range echoBatch {
					toEcho <- ping
				}
				for range echoBatch {
					<-toSender
				}
			}
			close(toEcho)
			for range toSender {
			}
		}()
	}
	return waitPairs(&done)
}

func (channelEcho) close() error { return nil }
