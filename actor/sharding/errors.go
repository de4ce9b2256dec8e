package sharding

import "errors"

var (
	// ErrInvalid is returned for a bad argument: an empty entity id, a
	// bad kind name, a bad option, a nil Node.
	ErrInvalid = errors.New("sharding: invalid argument")
	// ErrUnknownKind is returned, and is a dead letter's reason, for a kind
	// that no hosting node of the cluster registered.
	ErrUnknownKind = errors.New("sharding: unknown entity kind")
	// ErrNoJetStream is returned by Start when the NATS server the Node is
	// connected to has no JetStream: the shard leases live in a JetStream
	// key-value bucket.
	ErrNoJetStream = errors.New("sharding: JetStream not enabled on the NATS server")
	// ErrUnavailable is the reason of a message that waited for its shard
	// to have an owner, for its shard to stop, or for its entity to
	// passivate, longer than the buffer timeout (WithBuffer), and of an Ask
	// that waited for a route that long.
	ErrUnavailable = errors.New("sharding: shard has no owner")
	// ErrBufferFull is the reason of a message for a shard without an
	// owner when the shard's buffer already holds its bound (WithBuffer).
	ErrBufferFull = errors.New("sharding: shard buffer full")
	// ErrTooManyHops is the reason of a message forwarded between nodes
	// more than maxHops times while its shard moved.
	ErrTooManyHops = errors.New("sharding: message forwarded too many times")
	// ErrMoved is the reason of an Ask made on a shard's owner node whose
	// shard moved to another node while the message was queued here: the
	// Ask fails (with actor.ErrStopped) and may be retried.
	ErrMoved = errors.New("sharding: shard moved")
	// ErrLeaseLapsed is the reason of a message an entity did not handle
	// because its shard's lease was no longer trusted when the message's
	// turn came: the node fenced the shard, and another may own it.
	ErrLeaseLapsed = errors.New("sharding: shard lease lapsed")
	// ErrClosed is returned, and is the reason of what was buffered, once
	// the Sharding has closed.
	ErrClosed = errors.New("sharding: closed")
)
