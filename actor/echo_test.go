package actor

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The echo benchmark after Akka's ActorBenchmark: pairs of actors, the
// sender sends a batch and waits for the whole batch to come back, again and
// again. Every message, either way, is one op.
const (
	echoPairs = 64
	echoBatch = 50
)

type echoMessage struct{}

var echoPing = &echoMessage{}

type echoStart struct{}

var echoGo = &echoStart{}

// echoSender sends batches to its echo and counts the echoes.
type echoSender struct {
	echo     Ref
	rounds   int
	received int
	done     *sync.WaitGroup
}

func (s *echoSender) Receive(c *Context, msg any) {
	switch msg {
	case echoGo:
		s.send(c)
	case echoPing:
		s.received++
		if s.received < echoBatch {
			return
		}
		s.received = 0
		s.rounds--
		if s.rounds == 0 {
			s.done.Done()
			return
		}
		s.send(c)
	}
}

func (s *echoSender) send(c *Context) {
	for range echoBatch {
		c.Tell(s.echo, echoPing)
	}
}

func echoReceiver(c *Context, msg any) {
	if msg == echoPing {
		c.Respond(msg)
	}
}

// runEcho runs the echo workload: pairs pairs, each doing rounds batches.
func runEcho(tb testing.TB, sys *System, dispatcher string, pairs, rounds int) {
	var done sync.WaitGroup
	done.Add(pairs)
	senders := make([]Ref, pairs)
	for i := range pairs {
		echo, err := sys.Spawn(Props{Dispatcher: dispatcher, New: func() Actor { return ReceiveFunc(echoReceiver) }})
		if err != nil {
			tb.Fatal(err)
		}
		senders[i], err = sys.Spawn(Props{Dispatcher: dispatcher, New: func() Actor {
			return &echoSender{echo: echo, rounds: rounds, done: &done}
		}})
		if err != nil {
			tb.Fatal(err)
		}
	}
	for _, s := range senders {
		s.Tell(echoGo)
	}
	done.Wait()
}

func BenchmarkEcho(b *testing.B) {
	for _, d := range []string{"pool", "virtual", "pinned"} {
		b.Run(d, func(b *testing.B) {
			benchEcho(b, d, 0)
		})
	}
}

func benchEcho(b *testing.B, dispatcher string, throughput int) {
	sys, err := NewSystem(WithDispatcher(withThroughput(dispatcher, throughput)))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			b.Error(err)
		}
	}()
	perRound := echoPairs * echoBatch * 2
	rounds := max(1, b.N/perRound)
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), processCPU()
	runEcho(b, sys, dispatcher, echoPairs, rounds)
	elapsed, cpu := time.Since(start), processCPU()-cpu
	b.StopTimer()
	msgs := float64(rounds * perRound)
	b.ReportMetric(msgs/elapsed.Seconds(), "msg/s")
	// CPU time per message: what a busy machine's other load does not
	// change as much as it changes msg/s.
	b.ReportMetric(float64(cpu.Nanoseconds())/msgs, "cpu-ns/msg")
}

// withThroughput returns the built-in dispatcher called name with the given
// throughput (0: the default).
func withThroughput(name string, throughput int) Dispatcher {
	for _, d := range Dispatchers() {
		if d.Name == name {
			d.Throughput = throughput
			return d
		}
	}
	panic("no dispatcher " + name)
}

func BenchmarkEchoThroughput(b *testing.B) {
	for _, d := range []string{"pool", "virtual"} {
		for _, t := range []int{1, 5, 10, 50, 64, 100, 300} {
			b.Run(fmt.Sprintf("%s/t=%d", d, t), func(b *testing.B) {
				benchEcho(b, d, t)
			})
		}
	}
}

// BenchmarkTell is one Tell of a pointer message from outside the actor
// system to a pool actor, in the steady state: batches of echoBatch, each
// handled before the next is sent, so the queue does not grow without end
// (a flood outruns any consumer and grows the queue by a node per message).
// allocs/op is the cost of a Tell itself; ns/op includes the handling.
func BenchmarkTell(b *testing.B) {
	sys, err := NewSystem()
	if err != nil {
		b.Fatal(err)
	}
	defer sys.Shutdown(context.Background())
	var handled atomic.Int64
	r, err := sys.Spawn(Props{Dispatcher: "pool", New: func() Actor {
		return ReceiveFunc(func(_ *Context, msg any) {
			if msg == echoPing {
				handled.Add(1)
			}
		})
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	sent := int64(0)
	for b.Loop() {
		r.Tell(echoPing)
		if sent++; sent%echoBatch == 0 {
			for handled.Load() < sent {
				runtime.Gosched()
			}
		}
	}
}
