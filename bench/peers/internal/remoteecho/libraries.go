package remoteecho

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	hollywood "github.com/anthdm/hollywood/actor"
	hollywoodremote "github.com/anthdm/hollywood/remote"
	protoactor "github.com/asynkron/protoactor-go/actor"
	protoremote "github.com/asynkron/protoactor-go/remote"
	"github.com/nats-io/nats-server/v2/server"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/remote"
)

// Every library sends the same protobuf message, encoded by its transport.
func ping() *wrapperspb.Int64Value { return wrapperspb.Int64(1) }

func serveNATS(port string, ready func(), stdin io.Reader) error {
	p, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: p, NoLog: true, NoSigs: true})
	if err != nil {
		return err
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		return errors.New("nats: not ready in 10 s")
	}
	ready()
	waitStdin(stdin)
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}

// serveEcho runs pairs echoes, named echo-0…, and one more, ask, until
// stdin ends.
func serveEcho(library, addr string, pairs int, ready func(), stdin io.Reader) error {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	switch library {
	case "loom":
		sys, err := actor.NewSystem()
		if err != nil {
			return err
		}
		n, err := remote.Join(sys, "echo", remote.WithURL(addr))
		if err != nil {
			return err
		}
		echo := func() actor.Actor {
			return actor.ReceiveFunc(func(c *actor.Context, msg any) {
				if m, ok := msg.(*wrapperspb.Int64Value); ok {
					c.Respond(m)
				}
			})
		}
		for i := range pairs + 1 {
			name := "ask"
			if i < pairs {
				name = fmt.Sprint("echo-", i)
			}
			if _, err := sys.Spawn(actor.Props{Name: name, New: echo}); err != nil {
				return err
			}
		}
		ready()
		waitStdin(stdin)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return errors.Join(sys.Shutdown(ctx), n.Leave(ctx))
	case "protoactor":
		quiet := func(*protoactor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }
		sys := protoactor.NewActorSystem(protoactor.WithLoggerFactory(quiet))
		host, port, err := hostPort(addr)
		if err != nil {
			return err
		}
		r := protoremote.NewRemote(sys, protoremote.Configure(host, port))
		r.Start()
		props := protoactor.PropsFromFunc(func(c protoactor.Context) {
			if m, ok := c.Message().(*wrapperspb.Int64Value); ok {
				c.Respond(m)
			}
		})
		for i := range pairs + 1 {
			name := "ask"
			if i < pairs {
				name = fmt.Sprint("echo-", i)
			}
			if _, err := sys.Root.SpawnNamed(props, name); err != nil {
				return err
			}
		}
		ready()
		waitStdin(stdin)
		r.Shutdown(true)
		sys.Shutdown()
		return nil
	case "hollywood":
		r := hollywoodremote.New(addr, hollywoodremote.NewConfig())
		e, err := hollywood.NewEngine(hollywood.NewEngineConfig().WithRemote(r))
		if err != nil {
			return err
		}
		echo := func() hollywood.Receiver { return hollywoodEcho{} }
		for i := range pairs + 1 {
			id := "ask"
			if i < pairs {
				id = strconv.Itoa(i)
			}
			e.Spawn(echo, "echo", hollywood.WithID(id))
		}
		ready()
		waitStdin(stdin)
		r.Stop().Wait()
		return nil
	}
	return fmt.Errorf("unknown library %q", library)
}

type hollywoodEcho struct{}

func (hollywoodEcho) Receive(c *hollywood.Context) {
	if m, ok := c.Message().(*wrapperspb.Int64Value); ok {
		c.Respond(m)
	}
}

func hostPort(addr string) (string, int, error) {
	i := strings.LastIndexByte(addr, ':')
	port, err := strconv.Atoi(addr[i+1:])
	if i < 0 || err != nil {
		return "", 0, fmt.Errorf("address %q: want host:port", addr)
	}
	return addr[:i], port, nil
}

// rounds is a sender's state: how many echoes of the batch are back.
type rounds struct {
	back int
	c    *counters
}

// returned counts one echo and reports whether the next batch should go.
func (r *rounds) returned() bool {
	r.back++
	if r.back < Batch {
		return false
	}
	r.back = 0
	r.c.messages.Add(2 * Batch)
	return !r.c.stop.Load()
}

type startMsg struct{}

// newDriver starts the senders, one per pair, each on its first batch, and
// the means to Ask.
func newDriver(library, addr string, pairs int, c *counters) (*driver, error) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	switch library {
	case "loom":
		return loomDriver(addr, pairs, c)
	case "protoactor":
		return protoDriver(addr, pairs, c)
	case "hollywood":
		return hollywoodDriver(addr, pairs, c)
	}
	return nil, fmt.Errorf("unknown library %q", library)
}

func loomDriver(url string, pairs int, c *counters) (*driver, error) {
	sys, err := actor.NewSystem()
	if err != nil {
		return nil, err
	}
	n, err := remote.Join(sys, "senders", remote.WithURL(url))
	if err != nil {
		return nil, err
	}
	closeAll := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return errors.Join(sys.Shutdown(ctx), n.Leave(ctx))
	}
	for deadline := time.Now().Add(10 * time.Second); len(n.Members()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, errors.Join(errors.New("loom: the echo node did not join in 10 s"), closeAll())
		}
	}
	for i := range pairs {
		echo := n.Ref("echo", fmt.Sprint("/echo-", i))
		msg := ping()
		r := rounds{c: c}
		sender, err := sys.Spawn(actor.Props{New: func() actor.Actor {
			return actor.ReceiveFunc(func(x *actor.Context, m any) {
				switch m.(type) {
				case startMsg:
				case *wrapperspb.Int64Value:
					if !r.returned() {
						return
					}
				default:
					return
				}
				for range Batch {
					x.Tell(echo, msg)
				}
			})
		}})
		if err != nil {
			return nil, errors.Join(err, closeAll())
		}
		sender.Tell(startMsg{})
	}
	asker := n.Ref("echo", "/ask")
	return &driver{
		ask: func(ctx context.Context) error {
			_, err := asker.Ask(ctx, ping())
			return err
		},
		close: closeAll,
	}, nil
}

type protoSender struct {
	echo *protoactor.PID
	msg  *wrapperspb.Int64Value
	rounds
}

func (s *protoSender) Receive(x protoactor.Context) {
	switch x.Message().(type) {
	case startMsg:
	case *wrapperspb.Int64Value:
		if !s.returned() {
			return
		}
	default:
		return
	}
	for range Batch {
		x.Request(s.echo, s.msg)
	}
}

func protoDriver(addr string, pairs int, c *counters) (*driver, error) {
	quiet := func(*protoactor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }
	sys := protoactor.NewActorSystem(protoactor.WithLoggerFactory(quiet))
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := protoremote.NewRemote(sys, protoremote.Configure("127.0.0.1", port))
	r.Start()
	for i := range pairs {
		echo := protoactor.NewPID(addr, fmt.Sprint("echo-", i))
		sender := sys.Root.Spawn(protoactor.PropsFromProducer(func() protoactor.Actor {
			return &protoSender{echo: echo, msg: ping(), rounds: rounds{c: c}}
		}))
		sys.Root.Send(sender, startMsg{})
	}
	asker := protoactor.NewPID(addr, "ask")
	return &driver{
		ask: func(ctx context.Context) error {
			timeout := 5 * time.Second
			if d, ok := ctx.Deadline(); ok {
				timeout = time.Until(d)
			}
			_, err := sys.Root.RequestFuture(asker, ping(), timeout).Result()
			return err
		},
		close: func() error {
			r.Shutdown(true)
			sys.Shutdown()
			return nil
		},
	}, nil
}

type hollywoodSender struct {
	echo *hollywood.PID
	msg  *wrapperspb.Int64Value
	rounds
}

func (s *hollywoodSender) Receive(x *hollywood.Context) {
	switch x.Message().(type) {
	case startMsg:
	case *wrapperspb.Int64Value:
		if !s.returned() {
			return
		}
	default:
		return
	}
	for range Batch {
		x.Send(s.echo, s.msg)
	}
}

func hollywoodDriver(addr string, pairs int, c *counters) (*driver, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := hollywoodremote.New("127.0.0.1:"+strconv.Itoa(port), hollywoodremote.NewConfig())
	e, err := hollywood.NewEngine(hollywood.NewEngineConfig().WithRemote(r))
	if err != nil {
		return nil, err
	}
	for i := range pairs {
		echo := hollywood.NewPID(addr, "echo/"+strconv.Itoa(i))
		pid := e.Spawn(func() hollywood.Receiver {
			return &hollywoodSender{echo: echo, msg: ping(), rounds: rounds{c: c}}
		}, "sender", hollywood.WithID(strconv.Itoa(i)))
		e.Send(pid, startMsg{})
	}
	asker := hollywood.NewPID(addr, "echo/ask")
	return &driver{
		ask: func(ctx context.Context) error {
			timeout := 5 * time.Second
			if d, ok := ctx.Deadline(); ok {
				timeout = time.Until(d)
			}
			_, err := e.Request(asker, ping(), timeout).Result()
			return err
		},
		close: func() error {
			r.Stop().Wait()
			return nil
		},
	}, nil
}
