package actor_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/loomrt/loom/actor"
)

// A greeter answers every name it is asked about.
func Example() {
	sys, err := actor.NewSystem()
	if err != nil {
		log.Fatal(err)
	}
	defer sys.Shutdown(context.Background())

	greeter, err := sys.Spawn(actor.Props{
		Name:       "greeter",
		Dispatcher: "pool", // LOOM_EXECUTOR_POOL=virtual would move it
		New: func() actor.Actor {
			return actor.ReceiveFunc(func(c *actor.Context, msg any) {
				if name, ok := msg.(string); ok {
					c.Respond("hello, " + name)
				}
			})
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	reply, err := actor.Ask[string](context.Background(), greeter, "loom")
	fmt.Println(reply, err, greeter.Path())
	// Output: hello, loom <nil> /greeter
}

// A counter keeps its state in its own fields: Receive is never called
// concurrently for one actor.
type counter struct{ n int }

type (
	increment struct{}
	get       struct{}
)

func (c *counter) Receive(ctx *actor.Context, msg any) {
	switch msg.(type) {
	case increment:
		c.n++
	case get:
		ctx.Respond(c.n)
	}
}

func ExampleSystem_Spawn() {
	sys, err := actor.NewSystem()
	if err != nil {
		log.Fatal(err)
	}
	defer sys.Shutdown(context.Background())

	ref, err := sys.Spawn(actor.Props{
		Name: "counter",
		New:  func() actor.Actor { return &counter{} },
		// Restart with a fresh counter on a panic, at most 10 times a minute.
		Supervisor: actor.Supervisor{Decide: actor.Always(actor.Restart), MaxRestarts: 10, Within: time.Minute},
	})
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		ref.Tell(increment{})
	}
	n, err := actor.Ask[int](context.Background(), ref, get{})
	fmt.Println(n, err)
	// Output: 3 <nil>
}
