package remote

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// A Codec turns messages of the types it is registered for into bytes and
// back. Implementations are safe for concurrent use.
type Codec interface {
	// Append appends msg's encoding to b and returns the extended slice.
	Append(b []byte, msg any) ([]byte, error)
	// Decode returns the message data encodes. data is only valid during
	// the call: a message that keeps bytes must copy them.
	Decode(data []byte) (any, error)
}

// Codecs maps message types to wire names and codecs. Both ends of a
// message must register its type under the same name. Protocol buffer
// messages need no registration: their full name is their wire name, and
// the receiver finds the type in protoregistry.GlobalTypes. Strings and
// byte slices are built in ("string", "bytes"). It is safe for concurrent
// use; lookups take no lock.
type Codecs struct {
	mu     sync.Mutex
	byType atomic.Pointer[map[reflect.Type]*entry]
	byName atomic.Pointer[map[string]*entry]
	protos atomic.Pointer[map[string]protoreflect.MessageType] // found in the registry, under mu
	sent   atomic.Pointer[map[reflect.Type]*entry]             // protobuf types encoded so far, under mu
}

type entry struct {
	name  string
	codec Codec
}

// NewCodecs returns a registry with the built-in codecs.
func NewCodecs() *Codecs {
	c := &Codecs{}
	c.byType.Store(&map[reflect.Type]*entry{})
	c.byName.Store(&map[string]*entry{})
	c.protos.Store(&map[string]protoreflect.MessageType{})
	c.sent.Store(&map[reflect.Type]*entry{})
	c.mustRegister("string", "", stringCodec{})
	c.mustRegister("bytes", []byte(nil), bytesCodec{})
	return c
}

func (c *Codecs) mustRegister(name string, sample any, codec Codec) {
	if err := c.Register(name, sample, codec); err != nil {
		panic(err)
	}
}

// Register makes codec encode messages of sample's dynamic type under name.
// Registering a type or a name twice is an error.
func (c *Codecs) Register(name string, sample any, codec Codec) error {
	if name == "" || sample == nil || codec == nil {
		return fmt.Errorf("register codec %q: %w: want a name, a sample and a codec", name, ErrInvalid)
	}
	t := reflect.TypeOf(sample)
	c.mu.Lock()
	defer c.mu.Unlock()
	types, names := *c.byType.Load(), *c.byName.Load()
	if _, ok := types[t]; ok {
		return fmt.Errorf("register codec %q: %w: type %v is registered", name, ErrInvalid, t)
	}
	if _, ok := names[name]; ok {
		return fmt.Errorf("register codec %q: %w: name is registered", name, ErrInvalid)
	}
	e := &entry{name: name, codec: codec}
	nt := make(map[reflect.Type]*entry, len(types)+1)
	for k, v := range types {
		nt[k] = v
	}
	nt[t] = e
	nn := make(map[string]*entry, len(names)+1)
	for k, v := range names {
		nn[k] = v
	}
	nn[name] = e
	c.byType.Store(&nt)
	c.byName.Store(&nn)
	return nil
}

// RegisterJSON registers T, a plain Go struct (or a pointer to one), under
// name with encoding/json: exported fields travel, and a receiver decodes
// into a T. JSON is the codec for plain structs because each message
// decodes on its own (gob's stream carries type descriptions once per
// stream, which a batch that may be lost cannot rely on) and any language
// reads it.
func RegisterJSON[T any](c *Codecs, name string) error {
	var zero T
	return c.Register(name, zero, jsonCodec[T]{})
}

// encoder returns the name and codec for msg: a registered type's, or
// protobuf's for a proto.Message.
func (c *Codecs) encoder(msg any) (name string, codec Codec, ok bool) {
	t := reflect.TypeOf(msg)
	if e := (*c.byType.Load())[t]; e != nil {
		return e.name, e.codec, true
	}
	if e := (*c.sent.Load())[t]; e != nil {
		return e.name, e.codec, true
	}
	if m, isProto := msg.(proto.Message); isProto {
		return c.protoSent(t, string(m.ProtoReflect().Descriptor().FullName())), protoCodec{}, true
	}
	return "", nil, false
}

// Encode appends msg's encoding to b and returns its wire name with the
// extended slice, for a transport that carries a message inside another
// (package actor/sharding's envelopes). A type no codec handles is an
// error wrapping ErrUnknownType.
func (c *Codecs) Encode(b []byte, msg any) (name string, out []byte, err error) {
	name, codec, ok := c.encoder(msg)
	if !ok {
		return "", b, fmt.Errorf("encode %T: %w", msg, ErrUnknownType)
	}
	out, err = codec.Append(b, msg)
	if err != nil {
		return "", b, fmt.Errorf("encode %s: %w", name, err)
	}
	return name, out, nil
}

// Decode returns the message data encodes under the wire name name, as
// Encode wrote it. An unknown name is an error wrapping ErrUnknownType.
func (c *Codecs) Decode(name string, data []byte) (any, error) {
	d, err := c.decoder([]byte(name))
	return d.decode([]byte(name), data, err)
}

// protoSent keeps the wire name of protobuf type t, so that the next
// message of t costs one map lookup, and returns it.
//
//go:noinline
func (c *Codecs) protoSent(t reflect.Type, name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.sent.Load()
	next := make(map[reflect.Type]*entry, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[t] = &entry{name: name, codec: protoCodec{}}
	c.sent.Store(&next)
	return name
}

// decoder is how to decode one wire type: its registered codec, or the
// protobuf message type of that name.
type decoder struct {
	codec Codec
	proto protoreflect.MessageType
}

// decoder returns the decoder of the type registered under name, or of the
// protobuf message of that full name.
func (c *Codecs) decoder(name []byte) (decoder, error) {
	if e := (*c.byName.Load())[string(name)]; e != nil {
		return decoder{codec: e.codec}, nil
	}
	mt := (*c.protos.Load())[string(name)]
	if mt == nil {
		var err error
		if mt, err = c.protoType(string(name)); err != nil {
			return decoder{}, fmt.Errorf("%w: %q", ErrUnknownType, name)
		}
	}
	return decoder{proto: mt}, nil
}

// decode decodes data as a message of type name, or returns err, what
// looking the decoder up returned.
func (d decoder) decode(name, data []byte, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if d.codec != nil {
		return d.codec.Decode(data)
	}
	m := d.proto.New().Interface()
	// Merge into the new, empty message: the same result without a Reset.
	if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("decode %s: %w", name, err)
	}
	return m, nil
}

// protoType finds the protobuf message type of name in the global
// registry and keeps it: the registry takes a lock per lookup.
func (c *Codecs) protoType(name string) (protoreflect.MessageType, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.protos.Load()
	next := make(map[string]protoreflect.MessageType, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[name] = mt
	c.protos.Store(&next)
	return mt, nil
}

type protoCodec struct{}

func (protoCodec) Append(b []byte, msg any) ([]byte, error) {
	return proto.MarshalOptions{}.MarshalAppend(b, msg.(proto.Message))
}

// Decode is never called: decode finds the type by name.
func (protoCodec) Decode([]byte) (any, error) { return nil, ErrUnknownType }

type jsonCodec[T any] struct{}

func (jsonCodec[T]) Append(b []byte, msg any) ([]byte, error) {
	data, err := json.Marshal(msg)
	if err != nil {
		return b, err
	}
	return append(b, data...), nil
}

func (jsonCodec[T]) Decode(data []byte) (any, error) {
	var v T
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		if err := json.Unmarshal(data, p.Interface()); err != nil {
			return nil, err
		}
		return p.Interface(), nil
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return v, nil
}

type stringCodec struct{}

func (stringCodec) Append(b []byte, msg any) ([]byte, error) { return append(b, msg.(string)...), nil }
func (stringCodec) Decode(data []byte) (any, error)          { return string(data), nil }

type bytesCodec struct{}

func (bytesCodec) Append(b []byte, msg any) ([]byte, error) { return append(b, msg.([]byte)...), nil }
func (bytesCodec) Decode(data []byte) (any, error)          { return append([]byte(nil), data...), nil }

var (
	_ Codec = protoCodec{}
	_ Codec = jsonCodec[struct{}]{}
	_ Codec = stringCodec{}
	_ Codec = bytesCodec{}
)
