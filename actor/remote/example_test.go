package remote_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/remote"
)

// Two nodes on an embedded NATS server: an actor on "b" answers an Ask
// sent from "a".
func Example() {
	ns, _ := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	go ns.Start()
	ns.ReadyForConnections(10 * time.Second)
	defer ns.WaitForShutdown()
	defer ns.Shutdown()
	ctx := context.Background()

	join := func(name string) *remote.Node {
		sys, _ := actor.NewSystem()
		n, err := remote.Join(sys, name, remote.WithURL(ns.ClientURL()))
		if err != nil {
			panic(err)
		}
		return n
	}
	a, b := join("a"), join("b")
	defer func() {
		for _, n := range []*remote.Node{a, b} {
			_ = n.System().Shutdown(ctx)
			_ = n.Leave(ctx)
		}
	}()
	_, _ = b.System().Spawn(actor.Props{Name: "greeter", New: func() actor.Actor {
		return actor.ReceiveFunc(func(c *actor.Context, msg any) {
			if name, ok := msg.(string); ok {
				c.Respond("hello, " + name + ", from b")
			}
		})
	}})

	greeter := a.Ref("b", "/greeter")
	reply, err := actor.Ask[string](ctx, greeter, "a")
	fmt.Println(greeter, reply, err)
	// Output: /greeter@b hello, a, from b <nil>
}
