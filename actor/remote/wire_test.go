package remote

import (
	"context"
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
	b, start := beginFrame(b, kindTell, "/echo")
	b = appendStr(appendStr(appendStr(b, ""), "/me"), "string")
	b = appendTrace(b, carrier{"traceparent", "00-1-2-01"})
	b = endFrame(append(b, "hi"...), start)
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
