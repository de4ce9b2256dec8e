package otelweb_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/otelactor"
	"github.com/loomrt/loom/actor/remote"
	"github.com/loomrt/loom/task"
	"github.com/loomrt/loom/task/oteltask"
	"github.com/loomrt/loom/web/otelweb"
)

// TestTraceChain follows one request through the whole stack: its server
// span, a task.Go from the handler, an Ask to a local actor, and that
// actor's Ask to an actor on another node over NATS (an embedded server),
// every span in the request's trace, each the child of the one before.
func TestTraceChain(t *testing.T) {
	tel := newTelemetry(t, sdktrace.AlwaysSample())
	ot, err := oteltask.New(oteltask.WithTracerProvider(tel.tp), oteltask.WithMeterProvider(tel.mp))
	if err != nil {
		t.Fatal(err)
	}
	task.SetTracer(ot)
	defer task.SetTracer(nil)

	url := startNATS(t)
	nodeA := joinNode(t, tel, "a", url)
	nodeB := joinNode(t, tel, "b", url)
	back, err := nodeB.System().Spawn(actor.Props{Name: "back", New: func() actor.Actor {
		return actor.ReceiveFunc(func(c *actor.Context, msg any) {
			if s, ok := msg.(string); ok {
				c.Respond(strings.ToUpper(s))
			}
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := nodeB.Register("back", back); err != nil {
		t.Fatal(err)
	}
	// Node a learns of b, and of its registration, within moments.
	var remoteBack actor.Ref
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		remoteBack, err = nodeA.Lookup(ctx, "back")
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lookup from node a: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	front, err := nodeA.System().Spawn(actor.Props{Name: "front", New: func() actor.Actor {
		return actor.ReceiveFunc(func(c *actor.Context, msg any) {
			if s, ok := msg.(string); ok {
				reply, err := remoteBack.Ask(c.Context(), s)
				if err != nil {
					c.Respond(err.Error())
					return
				}
				c.Respond(reply)
			}
		})
	}})
	if err != nil {
		t.Fatal(err)
	}

	exec := loom.Virtual()
	defer exec.Shutdown(context.Background())
	app := newApp(t, exec)
	if _, err := otelweb.Instrument(app, tel.options()...); err != nil {
		t.Fatal(err)
	}
	app.Get("/chain/{word}", func(w http.ResponseWriter, r *http.Request) error {
		reply, err := task.Go(r.Context(), nil, func(ctx context.Context) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			return actor.Ask[string](ctx, front, r.PathValue("word"))
		}).Wait(r.Context())
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, reply)
		return err
	})
	base := serve(t, app)
	resp, err := http.Get(base + "/chain/hello")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "HELLO" {
		t.Fatalf("got %d %q; want 200 HELLO", resp.StatusCode, body)
	}

	// The last span may end just after the reply reached the client.
	var spans tracetest.SpanStubs
	deadline = time.Now().Add(10 * time.Second)
	for {
		spans = tel.spans.GetSpans()
		if hasSpan(spans, "process /back") || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	byID := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID().String()] = s
	}
	var leaf tracetest.SpanStub
	for _, s := range spans {
		if s.Name == "process /back" {
			leaf = s
		}
	}
	if !leaf.SpanContext.IsValid() {
		t.Fatalf("no span process /back among %v", names(spans))
	}
	// Walk from the remote actor's receive up to the root.
	var chain []string
	for s, ok := leaf, true; ok; s, ok = byID[s.Parent.SpanID().String()] {
		chain = append([]string{s.Name}, chain...)
		if s.SpanContext.TraceID() != leaf.SpanContext.TraceID() {
			t.Errorf("%s is in trace %s; want %s", s.Name, s.SpanContext.TraceID(), leaf.SpanContext.TraceID())
		}
	}
	want := []string{"GET /chain/{word}", "task.Go", "send /front", "process /front", "send /back", "process /back"}
	if !slices.Equal(chain, want) {
		t.Errorf("chain from the root: got %q; want %q", chain, want)
	}
}

func hasSpan(spans tracetest.SpanStubs, name string) bool {
	for _, s := range spans {
		if s.Name == name {
			return true
		}
	}
	return false
}

func names(spans tracetest.SpanStubs) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	return n
}

// startNATS runs an embedded NATS server on a loopback port until the test
// ends and returns its URL.
func startNATS(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready in 10 s")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return "nats://127.0.0.1:" + strconv.Itoa(port)
}

// joinNode starts a traced actor System joined to the cluster at url as
// name; the node leaves and the System shuts down when the test ends.
func joinNode(t *testing.T, tel *telemetry, name, url string) *remote.Node {
	t.Helper()
	tr, err := otelactor.New(otelactor.WithTracerProvider(tel.tp), otelactor.WithMeterProvider(tel.mp))
	if err != nil {
		t.Fatal(err)
	}
	sys, err := actor.NewSystem(actor.WithTracer(tr), actor.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	n, err := remote.Join(sys, name, remote.WithURL(url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.Leave(ctx); err != nil {
			t.Errorf("leave %s: %v", name, err)
		}
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown %s: %v", name, err)
		}
	})
	return n
}
