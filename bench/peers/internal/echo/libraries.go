package echo

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	hollywood "github.com/anthdm/hollywood/actor"
	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/loomrt/loom/actor"
)

// closeTimeout bounds how long Close waits for a library's actors.
const closeTimeout = 10 * time.Second

// loom

type loomPing struct{ from actor.Ref }

type loomSender struct {
	echo actor.Ref
	ping *loomPing
	rounds
}

func (s *loomSender) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case *start:
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
	for range Batch {
		c.Tell(s.echo, s.ping)
	}
}

func loomEchoer(c *actor.Context, msg any) {
	if m, ok := msg.(*loomPing); ok {
		c.Tell(m.from, m)
	}
}

// loom runs the pairs on one of loom's dispatchers, at its default
// throughput.
func (p *Pairs) loom(dispatcher string) error {
	sys, err := actor.NewSystem()
	if err != nil {
		return err
	}
	p.close = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		return sys.Shutdown(ctx)
	}
	for i := range p.start {
		echo, err := sys.Spawn(actor.Props{Dispatcher: dispatcher, New: func() actor.Actor { return actor.ReceiveFunc(loomEchoer) }})
		if err != nil {
			return fmt.Errorf("%w (close: %v)", err, p.close())
		}
		done := p.done[i]
		sender, err := sys.Spawn(actor.Props{Dispatcher: dispatcher, New: func() actor.Actor {
			return &loomSender{echo: echo, rounds: rounds{done: done}}
		}})
		if err != nil {
			return fmt.Errorf("%w (close: %v)", err, p.close())
		}
		p.start[i] = func(n int) { sender.Tell(&start{rounds: n}) }
	}
	return nil
}

// protoactor-go

type protoPing struct{ from *protoactor.PID }

type protoSender struct {
	echo *protoactor.PID
	ping *protoPing
	rounds
}

func (s *protoSender) Receive(c protoactor.Context) {
	switch m := c.Message().(type) {
	case *start:
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
	for range Batch {
		c.Send(s.echo, s.ping)
	}
}

// protoactor runs the pairs on protoactor-go's defaults: its default
// dispatcher (a goroutine per mailbox turn, throughput 300) and unbounded
// mailboxes; its logging goes nowhere.
func (p *Pairs) protoactor() {
	quiet := func(*protoactor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }
	sys := protoactor.NewActorSystem(protoactor.WithLoggerFactory(quiet))
	echoProps := protoactor.PropsFromFunc(func(c protoactor.Context) {
		if m, ok := c.Message().(*protoPing); ok {
			c.Send(m.from, m)
		}
	})
	for i := range p.start {
		echo := sys.Root.Spawn(echoProps)
		done := p.done[i]
		sender := sys.Root.Spawn(protoactor.PropsFromProducer(func() protoactor.Actor {
			return &protoSender{echo: echo, rounds: rounds{done: done}}
		}))
		p.start[i] = func(n int) { sys.Root.Send(sender, &start{rounds: n}) }
	}
	p.close = func() error {
		sys.Shutdown()
		return nil
	}
}

// hollywood

type hollywoodPing struct{ from *hollywood.PID }

type hollywoodSender struct {
	echo *hollywood.PID
	ping *hollywoodPing
	rounds
}

func (s *hollywoodSender) Receive(c *hollywood.Context) {
	switch m := c.Message().(type) {
	case *start:
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
	for range Batch {
		c.Send(s.echo, s.ping)
	}
}

type hollywoodEchoer struct{}

func (hollywoodEchoer) Receive(c *hollywood.Context) {
	if m, ok := c.Message().(*hollywoodPing); ok {
		c.Send(m.from, m)
	}
}

// hollywood runs the pairs on hollywood's defaults (a goroutine per mailbox
// turn, throughput 300).
func (p *Pairs) hollywood() error {
	engine, err := hollywood.NewEngine(hollywood.NewEngineConfig())
	if err != nil {
		return err
	}
	var pids []*hollywood.PID
	for i := range p.start {
		echo := engine.Spawn(func() hollywood.Receiver { return hollywoodEchoer{} }, "echo", hollywood.WithID(fmt.Sprint(i)))
		done := p.done[i]
		sender := engine.Spawn(func() hollywood.Receiver {
			return &hollywoodSender{echo: echo, rounds: rounds{done: done}}
		}, "sender", hollywood.WithID(fmt.Sprint(i)))
		pids = append(pids, echo, sender)
		p.start[i] = func(n int) { engine.Send(sender, &start{rounds: n}) }
	}
	p.close = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		stops := make([]func(), len(pids))
		for i, pid := range pids {
			stops[i] = func() { <-engine.Poison(pid).Done() }
		}
		if err := waitAll(ctx, stops); err != nil {
			return fmt.Errorf("hollywood: %w", err)
		}
		return nil
	}
	return nil
}

// channels: the baseline, a goroutine per actor and a buffered channel as
// its mailbox, nothing else.

func (p *Pairs) channels() {
	var wg sync.WaitGroup
	starts := make([]chan int, len(p.start))
	for i := range p.start {
		starts[i] = make(chan int, 1)
		toEcho := make(chan *struct{}, Batch)
		toSender := make(chan *struct{}, Batch)
		wg.Go(func() {
			for m := range toEcho {
				toSender <- m
			}
		})
		done := p.done[i]
		wg.Go(func() {
			defer close(toEcho)
			ping := &struct{}{}
			for n := range starts[i] {
				for range n {
					for range Batch {
						toEcho <- ping
					}
					for range Batch {
						<-toSender
					}
				}
				done <- struct{}{}
			}
		})
		p.start[i] = func(n int) { starts[i] <- n }
	}
	p.close = func() error {
		for _, s := range starts {
			close(s)
		}
		wg.Wait()
		return nil
	}
}
