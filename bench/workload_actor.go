package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/web"
)

// The actor-echo scenario runs Akka's ActorBenchmark echo on package actor
// inside the server under test. One request drives one pair of actors for
// actorEchoRounds rounds: the sender sends a batch of actorEchoBatch
// messages and waits for all of them to come back. With 64 connections, 64
// pairs echo at once, as in the seed. The models are the actors'
// dispatchers and throughputs (parseActorModel); the HTTP handler, which only
// waits for its pair, runs on its own virtual executor in every run.
const (
	actorEchoPairs  = 64
	actorEchoBatch  = 50
	actorEchoRounds = 100
	// actorEchoMessages is what one request moves, both ways counted.
	actorEchoMessages = actorEchoRounds * actorEchoBatch * 2
	// actorEchoPeer is the peer-server workload that does the same with
	// protoactor-go or hollywood (bench/peers/cmd/peer-server).
	actorEchoPeer = "actor-echo"
	// throughputKey is how a model sets its dispatcher's throughput.
	throughputKey = ",throughput="
)

// actorEchoModels are the dispatchers compared (Akka's fork-join, its
// virtual-thread executor, its PinnedDispatcher) at loom's default
// throughput, then at Akka's (5) and at protoactor-go's and hollywood's
// (300). The quick run takes pool and virtual at the default throughput:
// the seed's comparison.
func actorEchoModels(quick bool) []string {
	if quick {
		return []string{"pool", "virtual"}
	}
	dispatchers := []string{"pool", "virtual", "pinned"}
	models := append([]string(nil), dispatchers...)
	for _, t := range []int{5, 300} {
		for _, d := range dispatchers {
			models = append(models, fmt.Sprintf("%s%s%d", d, throughputKey, t))
		}
	}
	return models
}

// parseActorModel reads an actor-echo model: a dispatcher of package actor
// by name ("pool", "virtual", "pinned", "blocking"; see actor.Dispatchers)
// or an executor spec for a dispatcher of its own ("threads:2"), then
// optionally ",throughput=N", the messages a mailbox handles per turn
// (default actor.DefaultThroughput).
func parseActorModel(model string) (actor.Dispatcher, error) {
	name, throughput := model, 0
	if i := strings.LastIndex(model, throughputKey); i >= 0 {
		name = model[:i]
		t, err := strconv.Atoi(model[i+len(throughputKey):])
		if err != nil || t < 1 {
			return actor.Dispatcher{}, fmt.Errorf("actor-echo model %q: throughput %q: want a positive whole number",
				model, model[i+len(throughputKey):])
		}
		throughput = t
	}
	for _, d := range actor.Dispatchers() {
		if d.Name == name && name != actor.DefaultDispatcher {
			d.Throughput = throughput
			return d, nil
		}
	}
	if _, err := loom.ParseSpec(name); err != nil {
		return actor.Dispatcher{}, fmt.Errorf("actor-echo model %q: want a dispatcher (pool, virtual, pinned, blocking) or an "+
			"executor spec, then optionally %sN: %w", model, throughputKey, err)
	}
	return actor.Dispatcher{Name: "echo", Spec: name, Throughput: throughput}, nil
}

func actorEcho() *Scenario {
	plan := func(quick bool, warmup, d time.Duration) Plan {
		return Plan{Models: actorEchoModels(quick), Connections: actorEchoPairs, Warmup: warmup, Duration: d, Timeout: 10 * time.Second}
	}
	return &Scenario{
		Name: "actor-echo",
		Workload: fmt.Sprintf("GET /echo drives one pair of actors through %d rounds: the sender sends %d messages and "+
			"waits for their %d echoes; %s messages per request, both ways counted. The model is the actors' dispatcher, "+
			"and its throughput when it says (messages per mailbox turn; loom's default %d)",
			actorEchoRounds, actorEchoBatch, actorEchoBatch, count(actorEchoMessages), actor.DefaultThroughput),
		Seed: "Akka PR for the virtual-thread executor: ActorBenchmark (pairs of actors echoing batches of messages), " +
			"the virtual-thread dispatcher about 30% below the fork-join one, with more allocation",
		Changes: fmt.Sprintf("%d pairs, one per connection, for 4 s after a 1 s warm-up (0.8 s after 0.1 s with --quick, which "+
			"runs pool and virtual at the default throughput, beside protoactor-go only). A request carries %s messages so that HTTP costs a few percent of it; the rates are messages per "+
			"second (requests × %s). pool is pool:GOMAXPROCS, pinned a goroutine per actor; throughput 5 is Akka's default, 300 "+
			"protoactor-go's and hollywood's. peer:protoactor and peer:hollywood serve the same GET /echo with those "+
			"libraries at their defaults (bench/peers). The limit is goroutine-and-channel pairs doing the same echo, "+
			"measured by the runner in this run.", actorEchoPairs, count(actorEchoMessages), count(actorEchoMessages)),
		Peer:       actorEchoPeer,
		Peers:      []string{"protoactor", "hollywood"},
		Full:       plan(false, time.Second, 4*time.Second),
		Quick:      withPeers(plan(true, 100*time.Millisecond, 800*time.Millisecond), []string{"protoactor"}),
		Unit:       Unit{Name: "msg/s", PerRequest: actorEchoMessages},
		Limit:      actorEchoLimit,
		Targets:    get("/echo"),
		ExpectBody: fmt.Sprintf("echoed=%d\n", actorEchoMessages),
		ServeModel: func(model string) (ServeFunc, error) {
			d, err := parseActorModel(model)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, app *web.App, p Plan, _ string) (func() error, error) {
				return serveActorEcho(ctx, app, p, d)
			}, nil
		},
		Ratios: [][2]string{{"pool", "peer:protoactor"}, {"pool", "peer:hollywood"}, {"virtual", "pool"}, {"pinned", "pool"}},
	}
}

// echoRun asks a sender to echo rounds batches and answer the messages moved.
type echoRun struct{ rounds int }

// echoPing is the message of one pair: one pointer, made once, that
// carries the sender's address.
type echoPing struct{ from actor.Ref }

// echoSender runs the rounds an echoRun asks for, then answers it.
type echoSender struct {
	echo      actor.Ref
	ping      *echoPing
	rounds    int
	received  int
	requester actor.Ref
}

func (s *echoSender) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Started:
		s.ping = &echoPing{from: c.Self()}
	case *echoRun:
		s.rounds, s.received, s.requester = m.rounds, 0, c.Sender()
		s.send(c)
	case *echoPing:
		if s.received++; s.received < actorEchoBatch {
			return
		}
		s.received = 0
		if s.rounds--; s.rounds > 0 {
			s.send(c)
			return
		}
		c.Tell(s.requester, actorEchoMessages)
		s.requester = actor.Ref{}
	}
}

func (s *echoSender) send(c *actor.Context) {
	for range actorEchoBatch {
		c.Tell(s.echo, s.ping)
	}
}

func echoBack(c *actor.Context, msg any) {
	if m, ok := msg.(*echoPing); ok {
		c.Tell(m.from, m)
	}
}

// serveActorEcho spawns the pairs and mounts GET /echo, which borrows an
// idle pair for one request.
func serveActorEcho(ctx context.Context, app *web.App, p Plan, d actor.Dispatcher) (func() error, error) {
	sys, err := actor.NewSystem(actor.WithDispatcher(d))
	if err != nil {
		return nil, err
	}
	handlers := loom.Virtual(loom.WithName("echo-requests"))
	stop := func() error {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return errors.Join(sys.Shutdown(stopCtx), handlers.Shutdown(stopCtx))
	}
	idle := make(chan actor.Ref, p.Connections)
	for range p.Connections {
		echo, err := sys.Spawn(actor.Props{Dispatcher: d.Name, New: func() actor.Actor { return actor.ReceiveFunc(echoBack) }})
		if err != nil {
			return nil, errors.Join(err, stop())
		}
		sender, err := sys.Spawn(actor.Props{Dispatcher: d.Name, New: func() actor.Actor { return &echoSender{echo: echo} }})
		if err != nil {
			return nil, errors.Join(err, stop())
		}
		idle <- sender
	}
	run := &echoRun{rounds: actorEchoRounds}
	app.Get("/echo", func(w http.ResponseWriter, r *http.Request) error {
		var pair actor.Ref
		select {
		case pair = <-idle:
		case <-r.Context().Done():
			return r.Context().Err()
		}
		n, err := actor.Ask[int](r.Context(), pair, run)
		if err != nil {
			// The pair may still be echoing: it is not given back.
			return err
		}
		idle <- pair
		_, err = fmt.Fprintf(w, "echoed=%d\n", n)
		return err
	}, web.WithExecutor(handlers))
	return stop, nil
}

// actorEchoLimit is what goroutine-and-channel pairs, the least a Go
// program can do, reach on the same echo, measured once per process: the
// actors' figure divided by it says what the actor machinery costs. Its
// PerSecond is in requests, as every limit is; the formula in messages.
func actorEchoLimit(Plan) Limit {
	perSecond := channelEchoRate()
	return Limit{
		PerSecond: perSecond / actorEchoMessages,
		Formula: fmt.Sprintf("%d goroutine-and-channel pairs echo %s msg/s here (measured in this run, best of 3)",
			actorEchoPairs, count(int64(perSecond))),
	}
}

// channelEchoRate measures, once per process, the messages per second of
// actorEchoPairs pairs of goroutines that echo batches through buffered
// channels. The best of three runs is taken: other processes only ever make
// a run slower.
var channelEchoRate = sync.OnceValue(func() float64 {
	const rounds = 100
	best := 0.0
	for range 3 {
		start := time.Now()
		var done sync.WaitGroup
		for range actorEchoPairs {
			toEcho := make(chan *struct{}, actorEchoBatch)
			toSender := make(chan *struct{}, actorEchoBatch)
			done.Add(2)
			go func() {
				defer done.Done()
				for m := range toEcho {
					toSender <- m
				}
			}()
			go func() {
				defer done.Done()
				ping := &struct{}{}
				for range rounds {
					for range actorEchoBatch {
						toEcho <- ping
					}
					for range actorEchoBatch {
						<-toSender
					}
				}
				close(toEcho)
			}()
		}
		done.Wait()
		rate := float64(actorEchoPairs*rounds*actorEchoBatch*2) / time.Since(start).Seconds()
		best = max(best, rate)
	}
	return best
})
