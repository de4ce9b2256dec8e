package sharding_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/remote"
	"github.com/loomrt/loom/actor/sharding"
)

// A node "a" hosts counter entities; node "b" hosts none and asks one,
// twice: the first Ask activates it on a, the second reaches the same
// activation.
func Example() {
	store, _ := os.MkdirTemp("", "sharding-example")
	defer os.RemoveAll(store)
	ns, _ := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: store})
	go ns.Start()
	ns.ReadyForConnections(10 * time.Second)
	defer ns.WaitForShutdown()
	defer ns.Shutdown()
	ctx := context.Background()

	counter := sharding.Kind{Name: "counter", New: func(id string) actor.Actor {
		n := 0
		return actor.ReceiveFunc(func(c *actor.Context, msg any) {
			if msg == "inc" {
				n++
				c.Respond(fmt.Sprintf("%s: %d", id, n))
			}
		})
	}}
	var stops []func()
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	start := func(name string, opts ...sharding.Option) *sharding.Sharding {
		sys, _ := actor.NewSystem()
		n, err := remote.Join(sys, name, remote.WithURL(ns.ClientURL()))
		if err != nil {
			panic(err)
		}
		sh, err := sharding.Start(n, append(opts, sharding.WithLeaseTTL(time.Second))...)
		if err != nil {
			panic(err)
		}
		stops = append(stops, func() {
			_ = sh.Close(ctx) // first: hands the shards off
			_ = sys.Shutdown(ctx)
			_ = n.Leave(ctx)
		})
		return sh
	}
	start("a", sharding.WithKind(counter))
	b := start("b")

	e, err := b.Entity("counter", "e1")
	if err != nil {
		panic(err)
	}
	for range 2 {
		reply, err := actor.Ask[string](ctx, e, "inc")
		fmt.Println(reply, err)
	}
	_, err = b.Entity("cart", "c1")
	fmt.Println(err)
	// Output:
	// e1: 1 <nil>
	// e1: 2 <nil>
	// entity cart/c1: sharding: unknown entity kind "cart": no hosting node registered it
}
