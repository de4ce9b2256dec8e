package actor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

type hopsKey struct{}

// hopTracer records, in the context a message carries, each send and
// receive it went through, and counts what Done saw.
type hopTracer struct {
	mu       sync.Mutex
	sends    int
	asks     int
	done     int
	failures []any
}

func hops(ctx context.Context) []string {
	h, _ := ctx.Value(hopsKey{}).([]string)
	return h
}

func withHop(ctx context.Context, hop string) context.Context {
	return context.WithValue(ctx, hopsKey{}, append(slices.Clip(hops(ctx)), hop))
}

func (h *hopTracer) Send(ctx context.Context, e Envelope) context.Context {
	h.mu.Lock()
	h.sends++
	if e.Ask {
		h.asks++
	}
	h.mu.Unlock()
	return withHop(ctx, "send "+e.To.Path())
}

func (h *hopTracer) Receive(ctx context.Context, e Envelope) context.Context {
	return withHop(ctx, "receive "+e.To.Path())
}

func (h *hopTracer) Done(ctx context.Context, e Envelope, failure any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done++
	if failure != nil {
		h.failures = append(h.failures, failure)
	}
}

func (h *hopTracer) Inject(ctx context.Context, c Carrier) {
	c.Set("hops", strings.Join(hops(ctx), ","))
}

func (h *hopTracer) Extract(ctx context.Context, c Carrier) context.Context {
	return context.WithValue(ctx, hopsKey{}, strings.Split(c.Get("hops"), ","))
}

func (h *hopTracer) counts() (sends, asks, done int, failures []any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sends, h.asks, h.done, slices.Clone(h.failures)
}

type mapCarrier map[string]string

func (m mapCarrier) Get(k string) string { return m[k] }
func (m mapCarrier) Set(k, v string)     { m[k] = v }
func (m mapCarrier) Keys() []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

type valueKey struct{}

// TestContextRidesWithMessage: the receiver sees the context of Send and
// Ask, a message sent from a Receive carries the receive's context, and
// Ref.Tell carries context.Background; with a Tracer or none.
func TestContextRidesWithMessage(t *testing.T) {
	for _, traced := range []bool{false, true} {
		var opts []Option
		var tr *hopTracer
		if traced {
			tr = &hopTracer{}
			opts = append(opts, WithTracer(tr))
		}
		sys := newTestSystem(t, opts...)
		type seen struct {
			value any
			hops  []string
		}
		got := make(chan seen, 4)
		b := spawn(t, sys, Props{Name: "b", New: behaviour(func(c *Context, msg any) {
			if _, ok := msg.(string); ok {
				got <- seen{c.Context().Value(valueKey{}), hops(c.Context())}
			}
		})})
		a := spawn(t, sys, Props{Name: "a", New: behaviour(func(c *Context, msg any) {
			if s, ok := msg.(string); ok {
				c.Tell(b, s)
				c.Respond(s)
			}
		})})

		ctx := context.WithValue(context.Background(), valueKey{}, "v")
		if _, err := a.Ask(ctx, "ask"); err != nil {
			t.Fatal(err)
		}
		g := recv(t, got)
		if g.value != "v" {
			t.Errorf("traced %v: Ask then Tell from a Receive: got value %v; want v", traced, g.value)
		}
		var want []string
		if traced {
			want = []string{"send /a", "receive /a", "send /b", "receive /b"}
		}
		if !slices.Equal(g.hops, want) {
			t.Errorf("traced %v: got hops %q; want %q", traced, g.hops, want)
		}

		if err := b.Send(ctx, "send"); err != nil {
			t.Fatal(err)
		}
		if g := recv(t, got); g.value != "v" {
			t.Errorf("traced %v: Send: got value %v; want v", traced, g.value)
		}
		b.Tell("tell")
		if g := recv(t, got); g.value != nil {
			t.Errorf("traced %v: Tell: got value %v; want none", traced, g.value)
		}
		if traced {
			// Sends: the Ask, a's Tell to b, the Send, the Tell; the reply
			// to the Ask is not a message to an actor.
			sends, asks, _, _ := tr.counts()
			if sends != 4 || asks != 1 {
				t.Errorf("got %d sends, %d asks; want 4, 1", sends, asks)
			}
		}
	}
}

// TestTracerDoneOncePerSend: each message the Tracer saw sent meets one
// Done: received, panicked (with the panic's value) or left undelivered
// when its actor stopped (ErrStopped).
func TestTracerDoneOncePerSend(t *testing.T) {
	tr := &hopTracer{}
	sys := newTestSystem(t, WithTracer(tr))
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	boom := errors.New("boom")
	r := spawn(t, sys, Props{New: behaviour(func(c *Context, msg any) {
		switch msg {
		case "block":
			entered <- struct{}{}
			<-release
		case "panic":
			panic(boom)
		}
	})})
	r.Tell("ok")
	r.Tell("block")
	recv(t, entered)
	r.Tell("panic") // the default supervisor stops the actor
	r.Tell("queued 1")
	r.Tell("queued 2")
	close(release)
	waitDone(t, r)

	sends, _, done, failures := tr.counts()
	if sends != 5 || done != 5 {
		t.Errorf("got %d sends, %d done; want 5, 5", sends, done)
	}
	want := []any{boom, ErrStopped, ErrStopped}
	if len(failures) != len(want) {
		t.Fatalf("got failures %v; want %v", failures, want)
	}
	for i := range want {
		if failures[i] != want[i] {
			t.Errorf("failure %d: got %v; want %v", i, failures[i], want[i])
		}
	}
}

// TestInjectExtract: a transport's carrier takes the context through the
// System's Tracer, and without one nothing is written and ctx comes back.
func TestInjectExtract(t *testing.T) {
	ctx := withHop(context.Background(), "send /remote")

	sys := newTestSystem(t, WithTracer(&hopTracer{}))
	c := mapCarrier{}
	sys.InjectContext(ctx, c)
	got := hops(sys.ExtractContext(context.Background(), c))
	if want := []string{"send /remote"}; !slices.Equal(got, want) {
		t.Errorf("got hops %q; want %q", got, want)
	}

	bare := newTestSystem(t)
	c = mapCarrier{}
	bare.InjectContext(ctx, c)
	if len(c) != 0 {
		t.Errorf("no tracer: got carrier %v; want empty", c)
	}
	if got := bare.ExtractContext(ctx, c); got != ctx {
		t.Errorf("no tracer: Extract returned another context")
	}
	if bare.Tracer() != nil {
		t.Errorf("no tracer: Tracer() is not nil")
	}
}
