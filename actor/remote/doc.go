// Package remote joins actor Systems into a cluster over NATS, so that a
// Ref can point to an actor in another process and Tell, Ask, Watch, Stop
// and Kill work on it unchanged.
//
// Each System joins as a named node (Join). A node publishes heartbeats;
// one silent past the failure bound (2.75 s by default) is down: watchers of
// its actors get actor.Terminated with ErrNodeDown, Asks to it fail, and
// what is sent to it goes to dead letters. Messages to one node are queued
// in one batch and published as one NATS message per batch, so a busy pair
// of nodes moves many messages per publish. A Codecs registry names each
// message type on the wire: protocol buffer messages by their full name,
// plain structs with RegisterJSON; a message no codec handles goes to dead
// letters at Tell.
//
//	n, err := remote.Join(sys, "orders", remote.WithURL("nats://10.0.0.5:4222"))
//	if err != nil { … }
//	defer n.Leave(ctx)
//	stock := n.Ref("stock", "/reserve")        // an actor on node "stock"
//	reply, err := stock.Ask(ctx, &pb.Reserve{Sku: "A1"})
//
// Guarantees: messages from one sender to one actor arrive in order; each
// arrives at most once; what this node can tell was not delivered is a dead
// letter with its reason. See docs/actor.md for the rest, the Akka
// remoting mapping and the figures.
package remote
