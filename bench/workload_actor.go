package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/web"
)

// The actor-echo scenarios run Akka's ActorBenchmark echo on package actor
// inside the server under test. One request drives one pair of actors for
// actorEchoRounds rounds: the sender sends a batch of actorEchoBatch
// messages and waits for all of them to come back. With 64 connections, 64
// pairs echo at once, as in the seed. The model is the actors' default
// dispatcher (the runner sets LOOM_EXECUTOR to it); the HTTP handler, which
// only waits for its pair, runs on its own virtual executor in every run.
const (
	actorEchoPairs  = 64
	actorEchoBatch  = 50
	actorEchoRounds = 100
	// actorEchoMessages is what one request moves, both ways counted.
	actorEchoMessages = actorEchoRounds * actorEchoBatch * 2
)

// actorEchoModels are the dispatchers compared: a pool of GOMAXPROCS workers
// on this 2-core machine (Akka's fork-join dispatcher), the same on locked
// OS threads, a goroutine per turn (Akka's virtual-thread executor), and a
// pool sized like a JVM's default blocking dispatcher.
func actorEchoModels() []string {
	return []string{"pool:2", "virtual", "threads:2", "pool:16"}
}

// actorEchoScenarios are the echo at three dispatcher throughputs: the
// dispatchers are the models, the throughput settings the scenarios.
func actorEchoScenarios() []*Scenario {
	return []*Scenario{
		actorEcho(actor.DefaultThroughput, "loom's default"),
		actorEcho(5, "Akka's default"),
		actorEcho(300, "protoactor-go's and hollywood's default"),
	}
}

// actorEcho returns the scenario for one throughput setting; name is
// "actor-echo" for loom's default, else "actor-echo-t<throughput>".
func actorEcho(throughput int, why string) *Scenario {
	name := "actor-echo"
	if throughput != actor.DefaultThroughput {
		name = fmt.Sprintf("actor-echo-t%d", throughput)
	}
	plan := func(d time.Duration) Plan {
		return Plan{Models: actorEchoModels(), Connections: actorEchoPairs, Duration: d, Timeout: 10 * time.Second}
	}
	return &Scenario{
		Name: name,
		Workload: fmt.Sprintf("GET /echo drives one pair of actors (throughput %d, %s) through %d rounds: the sender sends %d "+
			"messages and waits for their %d echoes; %s messages per request, both ways counted. The model is the actors' "+
			"dispatcher", throughput, why, actorEchoRounds, actorEchoBatch, actorEchoBatch, count(actorEchoMessages)),
		Seed: "Akka PR for the virtual-thread executor: ActorBenchmark (pairs of actors echoing batches of messages), " +
			"the virtual-thread dispatcher about 30% below the fork-join one, with more allocation",
		Changes: fmt.Sprintf("%d pairs, one per connection, for 10 s (1.5 s with --quick). A request carries %s messages so "+
			"that HTTP costs a few percent of it; req/s × %s is messages per second. The limit is goroutine-and-channel "+
			"pairs doing the same echo, measured by the runner in this run. The pinned dispatcher (a goroutine per actor) "+
			"and protoactor-go and hollywood are measured by `go test -bench Echo` in actor/ and bench/peers.",
			actorEchoPairs, count(actorEchoMessages), count(actorEchoMessages)),
		Full:       plan(10 * time.Second),
		Quick:      plan(1500 * time.Millisecond),
		Limit:      actorEchoLimit,
		Targets:    get("/echo"),
		ExpectBody: fmt.Sprintf("echoed=%d\n", actorEchoMessages),
		Serve: func(ctx context.Context, app *web.App, p Plan, _ string) (func() error, error) {
			return serveActorEcho(ctx, app, p, throughput)
		},
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
func serveActorEcho(ctx context.Context, app *web.App, p Plan, throughput int) (func() error, error) {
	sys, err := actor.NewSystem(actor.WithDispatcher(actor.Dispatcher{Name: actor.DefaultDispatcher, Throughput: throughput}))
	if err != nil {
		return nil, err
	}
	handlers := loom.Virtual(loom.Name("echo-requests"))
	stop := func() error {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return errors.Join(sys.Shutdown(stopCtx), handlers.Shutdown(stopCtx))
	}
	idle := make(chan actor.Ref, p.Connections)
	for range p.Connections {
		echo, err := sys.Spawn(actor.Props{New: func() actor.Actor { return actor.ReceiveFunc(echoBack) }})
		if err != nil {
			return nil, errors.Join(err, stop())
		}
		sender, err := sys.Spawn(actor.Props{New: func() actor.Actor { return &echoSender{echo: echo} }})
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
	}, web.Executor(handlers))
	return stop, nil
}

// actorEchoLimit is what goroutine-and-channel pairs, the least a Go
// program can do, reach on the same echo, measured once per process: the
// actors' figure divided by it says what the actor machinery costs.
func actorEchoLimit(Plan) Limit {
	perSecond := channelEchoRate()
	return Limit{
		PerSecond: perSecond / actorEchoMessages,
		Formula: fmt.Sprintf("%d goroutine-and-channel pairs echo %s msg/s here (measured in this run, best of 3) "+
			"÷ %s messages per request = %s req/s", actorEchoPairs, count(int64(perSecond)),
			count(actorEchoMessages), count(int64(perSecond/actorEchoMessages))),
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
