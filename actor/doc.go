// Package actor gives Go services actors whose dispatchers are loom
// executors: the choice of Akka's dispatchers (fork-join, virtual threads,
// pinned, blocking-io) made by loom's one switch.
//
// An actor is a behaviour (Actor, or a ReceiveFunc) that receives its
// messages one at a time from a mailbox, so its state needs no lock. A
// System spawns actors from Props and returns Refs; Tell sends, Ask waits for
// a reply. Each mailbox runs on a named Dispatcher: an executor built from a
// spec (LOOM_EXECUTOR_<NAME>) and a throughput, the messages a mailbox
// handles per turn before it yields. A Supervisor decides what a panic in
// Receive does: stop, restart (with limits and backoff), resume or escalate.
//
//	sys, err := actor.NewSystem()
//	if err != nil { … }
//	defer sys.Shutdown(context.Background())
//	echo, err := sys.Spawn(actor.Props{Name: "echo", Dispatcher: "pool",
//		New: func() actor.Actor {
//			return actor.ReceiveFunc(func(c *actor.Context, msg any) {
//				if s, ok := msg.(string); ok { c.Respond(s) }
//			})
//		}})
//	reply, err := actor.Ask[string](ctx, echo, "hello")
//
// See docs/actor.md for the Akka → loom mapping and the echo benchmark.
package actor
