package remote

import (
	"context"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/loomrt/loom/actor"
)

// seq is a message whose codec allocates nothing to encode.
type seq struct{ N uint64 }

type seqCodec struct{}

func (seqCodec) Append(b []byte, msg any) ([]byte, error) {
	return binary.LittleEndian.AppendUint64(b, msg.(*seq).N), nil
}

func (seqCodec) Decode(data []byte) (any, error) {
	if len(data) != 8 {
		return nil, errors.New("seq: want 8 bytes")
	}
	return &seq{N: binary.LittleEndian.Uint64(data)}, nil
}

func seqCodecs(t testing.TB) *Codecs {
	c := NewCodecs()
	if err := c.Register("seq", (*seq)(nil), seqCodec{}); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCodecsRegister(t *testing.T) {
	c := NewCodecs()
	for _, tc := range []struct {
		name   string
		sample any
		codec  Codec
		ok     bool
	}{
		{"seq", (*seq)(nil), seqCodec{}, true},
		{"seq2", (*seq)(nil), seqCodec{}, false}, // the type again
		{"seq", seq{}, seqCodec{}, false},        // the name again
		{"", seq{}, seqCodec{}, false},
		{"x", nil, seqCodec{}, false},
		{"y", seq{}, nil, false},
	} {
		err := c.Register(tc.name, tc.sample, tc.codec)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("Register(%q, %T) = %v; want ok %v", tc.name, tc.sample, err, tc.ok)
		}
	}
	if name, _, ok := c.encoder(wrapperspb.String("x")); !ok || name != "google.protobuf.StringValue" {
		t.Errorf("protobuf message encoded as %q, %v; want its full name", name, ok)
	}
	if _, _, ok := c.encoder(struct{}{}); ok {
		t.Error("an unregistered struct has an encoder")
	}
	if _, err := c.decoder([]byte("no.such.Type")); !errors.Is(err, ErrUnknownType) {
		t.Errorf("decode of an unknown name = %v; want ErrUnknownType", err)
	}
}

// Protocol buffer messages need no registration on either side.
func TestProtobufAcrossNodes(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	spawn(t, b.System(), "echo", echo)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := actor.Ask[*wrapperspb.Int64Value](ctx, a.Ref("b", "/echo"), wrapperspb.Int64(42))
	if err != nil || got.GetValue() != 42 {
		t.Fatalf("Ask = %v, %v; want 42", got, err)
	}
}

// A remote Tell allocates nothing beyond its codec: the frame is encoded
// into the destination's batch, which is reused.
func TestRemoteTellAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	ns := startNATS(t)
	a := join(t, ns, "a", WithCodecs(seqCodecs(t)))
	b := join(t, ns, "b", WithCodecs(seqCodecs(t)))
	got := make(chan uint64, 1)
	spawn(t, b.System(), "sink", func(c *actor.Context, msg any) {
		if m, ok := msg.(*seq); ok && m.N == 1 {
			got <- m.N
		}
	})
	ref := a.Ref("b", "/sink")
	ref.Tell(&seq{N: 1})
	recv(t, got)
	// c is a member whose batches nobody reads: only the sending side's
	// allocations are counted.
	c := join(t, ns, "c", WithCodecs(seqCodecs(t)))
	waitMembers(t, a, "b", "c")
	if err := c.subs[0].Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	other := a.Ref("c", "/sink")
	msg := &seq{N: 2}
	for range 1000 {
		other.Tell(msg) // grow the batch buffers
	}
	allocs := testing.AllocsPerRun(20000, func() { other.Tell(msg) })
	if allocs >= 0.01 {
		t.Errorf("%.3f allocations per remote Tell; want 0", allocs)
	}
}

func TestCodecsEncodeDecode(t *testing.T) {
	c := NewCodecs()
	name, data, err := c.Encode([]byte("x"), "hello")
	if err != nil || name != "string" || string(data) != "xhello" {
		t.Fatalf("Encode: %q %q %v", name, data, err)
	}
	v, err := c.Decode(name, data[1:])
	if err != nil || v != "hello" {
		t.Fatalf("Decode: %v %v", v, err)
	}
	if _, _, err := c.Encode(nil, struct{ A int }{}); !errors.Is(err, ErrUnknownType) {
		t.Errorf("Encode of an unregistered type: %v; want ErrUnknownType", err)
	}
	if _, err := c.Decode("no.such.Type", nil); !errors.Is(err, ErrUnknownType) {
		t.Errorf("Decode of an unknown name: %v; want ErrUnknownType", err)
	}
}

// A remote Ask's reply address on the receiving node is a light Ref: an
// Ask costs both nodes together under 1,800 bytes (a reply address the
// size of a local actor's cell took it past 2,000).
func TestRemoteAskBytes(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	ns := startNATSProcess(t) // the server's allocations are not the nodes'
	a := join(t, ns, "a", WithCodecs(seqCodecs(t)))
	b := join(t, ns, "b", WithCodecs(seqCodecs(t)))
	spawn(t, b.System(), "echo", func(c *actor.Context, msg any) {
		if _, ok := msg.(*seq); ok {
			c.Respond(msg)
		}
	})
	waitMembers(t, a, "b")
	ref := a.Ref("b", "/echo")
	msg := &seq{N: 1}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ask := func(k int) {
		for range k {
			if _, err := ref.Ask(ctx, msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	ask(100) // warm the caches and buffers
	const asks = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ask(asks)
	runtime.ReadMemStats(&after)
	perAsk := (after.TotalAlloc - before.TotalAlloc) / asks
	t.Logf("%d bytes per Ask, both nodes", perAsk)
	if perAsk >= 1800 {
		t.Errorf("%d bytes per remote Ask, both nodes; want under 1,800", perAsk)
	}
}
