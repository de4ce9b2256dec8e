package sharding

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/remote"
)

// envelope carries a message to an entity between nodes.
type envelope struct {
	Kind, ID string
	Msg      any
	Hops     int // nodes it has been sent to
}

// envelopeName is the envelope's wire name.
const envelopeName = "loom.sharding.envelope"

// envelopeCodec writes hops:u8 kind id name as uvarint-prefixed strings,
// then the message's encoding.
type envelopeCodec struct{ c *remote.Codecs }

func registerCodec(c *remote.Codecs) error {
	err := c.Register(envelopeName, (*envelope)(nil), envelopeCodec{c})
	if err == nil {
		return nil
	}
	if name, _, e := c.Encode(nil, &envelope{Msg: ""}); e == nil && name == envelopeName {
		return nil // registered by another Sharding on the same registry
	}
	return fmt.Errorf("register envelope codec: %w", err)
}

func (ec envelopeCodec) Append(b []byte, msg any) ([]byte, error) {
	e := msg.(*envelope)
	name, data, err := ec.c.Encode(nil, e.Msg)
	if err != nil {
		return b, err
	}
	b = append(b, byte(min(e.Hops, 255)))
	for _, s := range [...]string{e.Kind, e.ID, name} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return append(b, data...), nil
}

var errEnvelope = errors.New("sharding: malformed envelope")

func (ec envelopeCodec) Decode(data []byte) (any, error) {
	if len(data) < 1 {
		return nil, errEnvelope
	}
	e := &envelope{Hops: int(data[0])}
	data = data[1:]
	var fields [3]string
	for i := range fields {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			return nil, errEnvelope
		}
		fields[i] = string(data[k : k+int(n)])
		data = data[k+int(n):]
	}
	e.Kind, e.ID = fields[0], fields[1]
	msg, err := ec.c.Decode(fields[2], data)
	if err != nil {
		return nil, err
	}
	e.Msg = msg
	return e, nil
}

// entityActor runs a kind's behaviour for one id, with its Persistent
// hooks, while its shard's lease is held.
type entityActor struct {
	inner      actor.Actor
	kind, id   string
	lease      *leaseClock
	persistent Persistent // inner, if it is one
}

func newEntity(k *Kind, id string, lease *leaseClock) actor.Actor {
	inner := k.New(id)
	if inner == nil {
		panic(fmt.Sprintf("sharding: kind %s: New(%q) returned nil", k.Name, id))
	}
	p, _ := inner.(Persistent)
	return &entityActor{inner: inner, kind: k.Name, id: id, lease: lease, persistent: p}
}

// maxSave bounds a Save, within the lease's own deadline.
const maxSave = 10 * time.Second

func (a *entityActor) Receive(c *actor.Context, msg any) {
	switch msg.(type) {
	case actor.Started:
		if a.persistent != nil {
			ctx := context.WithValue(c.Context(), tokenKey{}, a.lease.token)
			if err := a.persistent.Load(ctx, a.id); err != nil {
				panic(fmt.Errorf("sharding: load %s: %w", a.id, err))
			}
		}
		a.inner.Receive(c, msg)
	case actor.Stopping:
		if !a.lease.held() {
			// Fenced: another node may own the entity already, so this
			// activation writes nothing more.
			return
		}
		a.inner.Receive(c, msg)
		if a.persistent == nil {
			return
		}
		if !a.lease.held() {
			slog.Error("sharding: save skipped: the shard's lease lapsed during Stopping", "entity", a.kind+"/"+a.id)
			return
		}
		ctx, cancel := context.WithTimeout(context.WithValue(c.Context(), tokenKey{}, a.lease.token), maxSave)
		defer cancel()
		ctx, cancelLease := a.lease.bound(ctx)
		defer cancelLease()
		if err := a.persistent.Save(ctx, a.id); err != nil {
			slog.Error("sharding: save failed", "entity", a.kind+"/"+a.id, "actor", c.Self().Path(), "err", err)
		}
	case actor.Stopped, actor.Restarting:
		a.inner.Receive(c, msg)
	default:
		if !a.lease.held() {
			// Checked before each message, not when it was queued: past
			// the deadline another node may take the shard.
			c.System().Undelivered(actor.DeadLetter{Recipient: c.Self(), Sender: c.Sender(), Message: msg,
				Reason: fmt.Errorf("entity %s/%s: %w", a.kind, a.id, ErrLeaseLapsed)})
			return
		}
		a.inner.Receive(c, msg)
	}
}
