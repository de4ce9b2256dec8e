package remote

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/loomrt/loom/actor"
)

// FuzzBatch: no byte string makes reading a batch panic, and a batch this
// node writes reads back frame for frame.
func FuzzBatch(f *testing.F) {
	b := appendHeader(nil, "a", 7)
	b, _ = encode(b, &outFrame{kind: kindTell, to: "/echo", senderPath: "/me", typeName: "string", codec: stringCodec{}, msg: "hi",
		trace: carrier{"traceparent", "00-1-2-01"}}, nil)
	f.Add(b)
	// A second tell to the same actor, from the same sender, of the same
	// type: it carries none of them.
	b, _ = encode(b, &outFrame{kind: kindTell, to: "/echo", senderPath: "/me", typeName: "string", codec: stringCodec{}, msg: "ho"},
		&outFrame{kind: kindTell, to: "/echo", senderPath: "/me", typeName: "string"})
	f.Add(b)
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := reader{b: data}
		if _, _, err := r.header(); err != nil {
			return
		}
		var fr frame
		for r.next(&fr) {
			if fr.kind == kindTell {
				readTrace(fr.trace)
			}
		}
	})
}

func TestTraceCarrierRoundTrip(t *testing.T) {
	for _, c := range []carrier{nil, {"k", "v"}, {"traceparent", "00-abc-def-01", "tracestate", ""}} {
		b := appendTrace(nil, c)
		r := reader{b: b}
		got := readTrace(r.str())
		if r.bad || len(got) != len(c) {
			t.Fatalf("round trip of %q = %q", c, got)
		}
		for i := range c {
			if got[i] != c[i] {
				t.Errorf("round trip of %q = %q", c, got)
			}
		}
	}
}

type traceKey struct{}

// keyTracer carries a context value under "trace-id".
type keyTracer struct{}

func (keyTracer) Send(ctx context.Context, _ actor.Envelope) context.Context    { return ctx }
func (keyTracer) Receive(ctx context.Context, _ actor.Envelope) context.Context { return ctx }
func (keyTracer) Done(context.Context, actor.Envelope, any)                     {}
func (keyTracer) Inject(ctx context.Context, c actor.Carrier) {
	if v, ok := ctx.Value(traceKey{}).(string); ok {
		c.Set("trace-id", v)
	}
}
func (keyTracer) Extract(ctx context.Context, c actor.Carrier) context.Context {
	if v := c.Get("trace-id"); v != "" {
		return context.WithValue(ctx, traceKey{}, v)
	}
	return ctx
}

// The sender's trace context crosses nodes with the message: the receive
// sees it in Context.Context.
func TestTraceContextCrossesNodes(t *testing.T) {
	ns := startNATS(t)
	traced := func(name string) *Node {
		sys, err := actor.NewSystem(actor.WithTracer(keyTracer{}), actor.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
		n, err := Join(sys, name, WithURL(ns.url()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Leave(context.Background()) })
		return n
	}
	a, b := traced("a"), traced("b")
	spawn(t, b.System(), "trace", func(c *actor.Context, msg any) {
		if _, ok := msg.(string); ok {
			v, _ := c.Context().Value(traceKey{}).(string)
			c.Respond(v)
		}
	})
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), traceKey{}, "t-42"), 10*time.Second)
	defer cancel()
	got, err := actor.Ask[string](ctx, a.Ref("b", "/trace"), "which trace?")
	if err != nil || got != "t-42" {
		t.Fatalf("remote receive saw trace %q, %v; want t-42", got, err)
	}
}

// A batch reads back frame for frame, and a tell that shares its
// destination, sender or type with the previous tell carries none of them.
func TestBatchRoundTrip(t *testing.T) {
	tell := func(to, node, path, typ, msg string) outFrame {
		return outFrame{kind: kindTell, to: to, senderNode: node, senderPath: path, typeName: typ, codec: stringCodec{}, msg: msg}
	}
	frames := []outFrame{
		tell("/a", "", "/s", "string", "1"),
		tell("/a", "", "/s", "string", "2"),                       // all the same
		tell("/b", "", "/s", "string", "3"),                       // another destination
		tell("/b", "c", "/s", "string", "4"),                      // another sender node
		{kind: kindSignal, to: "/b", signal: 3, senderPath: "/w"}, // between tells
		tell("/b", "c", "/s", "text", "5"),                        // another type name
		tell("/b", "c", "/t", "text", "6"),                        // another sender path
	}
	wantSame := []byte{0, sameAll, sameSender | sameType, sameTo | sameType, 0, sameTo | sameSender, sameTo | sameType}
	b := appendHeader(nil, "n", 1)
	var prev *outFrame
	sizes := make([]int, len(frames))
	for i := range frames {
		start := len(b)
		var err error
		if b, err = encode(b, &frames[i], prev); err != nil {
			t.Fatal(err)
		}
		sizes[i] = len(b) - start
		if frames[i].kind == kindTell {
			prev = &frames[i]
		}
	}
	if sizes[1] >= sizes[0]-len("/a/sstring") {
		t.Errorf("a repeated tell takes %d bytes, the first %d; want the addresses and type left out", sizes[1], sizes[0])
	}
	r := reader{b: b}
	if _, _, err := r.header(); err != nil {
		t.Fatal(err)
	}
	var f frame
	for i, want := range frames {
		if !r.next(&f) {
			t.Fatalf("frame %d: not read (bad %v)", i, r.bad)
		}
		got := outFrame{kind: f.kind, to: string(f.to), senderNode: string(f.senderNode), senderPath: string(f.senderPath),
			typeName: string(f.typeName), signal: f.signal, codec: want.codec}
		if f.kind == kindTell {
			got.msg = string(f.payload)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || f.same != wantSame[i] {
			t.Errorf("frame %d = %+v, same %b; want %+v, same %b", i, got, f.same, want, wantSame[i])
		}
	}
	if r.next(&f) || r.bad {
		t.Errorf("after the last frame: next read one, or bad %v", r.bad)
	}
}

// A first tell that claims to share fields with a previous one is
// malformed.
func TestSameWithoutPreviousIsMalformed(t *testing.T) {
	b := appendHeader(nil, "n", 1)
	b, start := beginFrame(b, kindTell)
	b = appendTrace(appendStr(appendStr(appendStr(append(b, sameTo), ""), "/s"), "string"), nil)
	b = endFrame(append(b, "x"...), start)
	r := reader{b: b}
	if _, _, err := r.header(); err != nil {
		t.Fatal(err)
	}
	var f frame
	if r.next(&f) || !r.bad {
		t.Errorf("a first tell with sameTo read as %+v; want malformed", f)
	}
}
