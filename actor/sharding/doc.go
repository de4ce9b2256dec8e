// Package sharding places entities, actors addressed by a kind and an id,
// across the hosting nodes of an actor/remote cluster, with at most one
// activation of each entity alive at a time (Akka Cluster Sharding,
// protoactor's grains, Orleans' virtual actors).
//
// A node that hosts a kind registers it with WithKind; any node sends to
// (kind, id) through Entity's Ref, on which Tell, Send and Ask work as on a
// local Ref. The first message activates the entity on its shard's owner
// (shard = FNV-1a(id) mod WithShards); later ones reach that activation
// until it passivates (Kind.PassivateAfter) or its shard moves.
//
// Who owns a shard is a lease in a JetStream key-value bucket, written
// only by compare-and-set on the revision its writer saw. An owner renews
// each lease every TTL/6 and trusts it, by its own monotonic clock, until
// half the TTL has passed since it sent its last successful renewal: each
// entity checks that deadline before each message and, past it, handles
// nothing more (the message is a dead letter wrapping ErrLeaseLapsed);
// the owner then kills the shard's entities, which neither hear Stopping
// nor Save (a fence). Another node takes a lease only after seeing it
// unrenewed for the whole TTL by its own clock, or released by a handoff.
// So two activations never overlap while clocks run at rates within a few
// percent of each other and a message's handling (and a Stopping, and
// whatever a Save still writes once its context, bounded by the lease, has
// ended) takes less than half the TTL minus that drift, whatever the
// network does; a store that checks FencingToken needs no such bound for
// Save. Shards go
// to the live hosts by rendezvous hashing: a joining node takes its shards
// by handoff (the owner stops their entities, which save, then releases),
// and a dead node's shards are taken within the longer of the lease TTL and
// the failure bound after its last renewal. Messages for a shard without a
// reachable owner wait on the node that holds them, up to WithBuffer's
// bound.
//
//	sh, err := sharding.Start(node, sharding.WithKind(sharding.Kind{
//		Name: "cart",
//		New:  func(id string) actor.Actor { return newCart(id) },
//	}))
//	if err != nil { … }
//	defer sh.Close(ctx)
//	cart, err := sh.Entity("cart", "c-42")
//	reply, err := cart.Ask(ctx, &pb.AddItem{Sku: "A1"})
//
// The leases need JetStream on the NATS server (nats-server -js): Start
// fails with ErrNoJetStream without it. See docs/actor.md for the
// guarantees under partition, the mapping from Akka and protoactor, and the
// figures.
package sharding
