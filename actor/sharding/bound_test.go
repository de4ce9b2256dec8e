package sharding

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/loomrt/loom/actor"
)

// A handoff pinned by a Save that does not return is fenced at the
// handoff timeout: the Save's context ends (Canceled, by the lost lease,
// not by its own 10 s bound), the shard is released, and an Ask sent to
// the shard while it was stuck is answered by the next owner.
func TestOverdueHandoffIsFencedAndReleased(t *testing.T) {
	ns := startNATS(t, true)
	h := &hooks{save: make(chan error, 4)}
	kind := func(node string) Kind {
		return Kind{Name: "counter", New: func(string) actor.Actor { return &hooked{h: h, node: node, block: node == "a"} }}
	}
	const handoff = time.Second
	a := startMember(t, ns, "overdue", "a", WithKind(kind("a")), WithShards(1), WithHandoffTimeout(handoff))
	askCount(t, a.sh, "x", 30*time.Second)
	startMember(t, ns, "overdue", "b", WithKind(kind("b")), WithShards(1), WithHandoffTimeout(handoff))
	driver := startMember(t, ns, "overdue", "driver", WithShards(1))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- a.sh.Close(ctx) }()
	waitFor(t, 30*time.Second, "a's Save began", func() bool { return h.has("save") })
	asked := make(chan error, 1)
	go func() {
		actx, acancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer acancel()
		_, err := driver.sh.Ask(actx, "counter", "x", Count{})
		asked <- err
	}()
	select {
	case err := <-h.save:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a's Save ended with %v; want context.Canceled (the fence at the handoff timeout)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a's Save still blocked 30s on")
	}
	if err := <-closed; err != nil {
		t.Fatalf("close a: %v", err)
	}
	if err := <-asked; err != nil {
		t.Fatalf("Ask sent while the handoff was stuck: %v", err)
	}
	if f := a.sh.Stats().Fenced; f != 1 {
		t.Fatalf("a fenced %d shards; want 1", f)
	}
	if !hasPrefix(h, "load@b") {
		t.Fatalf("hooks %v: want b to load the entity", h.tokens)
	}
}

func hasPrefix(h *hooks, p string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, x := range h.tokens {
		if len(x) >= len(p) && x[:len(p)] == p {
			return true
		}
	}
	return false
}

// A message waiting for a passivating entity that does not stop is a dead
// letter with ErrUnavailable once it has waited the buffer timeout, not
// before, and its Ask fails; the entity answers again once it stops.
func TestMessageWaitingForAStoppingEntityExpires(t *testing.T) {
	ns := startNATS(t, true)
	release := make(chan struct{})
	stopping := make(chan struct{}, 1)
	kind := Kind{Name: "counter", PassivateAfter: 200 * time.Millisecond, New: func(id string) actor.Actor {
		return actor.ReceiveFunc(func(c *actor.Context, msg any) {
			switch msg.(type) {
			case actor.Stopping:
				select {
				case stopping <- struct{}{}:
				default:
				}
				<-release
			case Count:
				c.Respond(Counted{ID: id})
			}
		})
	}}
	const wait = time.Second
	m := startMember(t, ns, "expire", "a", WithKind(kind), WithShards(1), WithBuffer(100, wait))
	dead := make(chan actor.DeadLetter, 16)
	defer m.node.System().SubscribeDeadLetters(func(d actor.DeadLetter) {
		select {
		case dead <- d:
		default:
		}
	})()
	askCount(t, m.sh, "x", 30*time.Second)
	select {
	case <-stopping:
	case <-time.After(30 * time.Second):
		t.Fatal("x did not passivate")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := m.sh.Ask(ctx, "counter", "x", Count{})
	took := time.Since(start)
	if err == nil || ctx.Err() != nil {
		close(release)
		t.Fatalf("Ask to a stopping entity: %v after %v; want a failure at the %v buffer timeout", err, took, wait)
	}
	if took < wait {
		close(release)
		t.Fatalf("Ask failed after %v, before the %v buffer timeout: %v", took, wait, err)
	}
	var reason error
	for reason == nil {
		select {
		case d := <-dead:
			if errors.Is(d.Reason, ErrUnavailable) {
				reason = d.Reason
			}
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatal("no dead letter with ErrUnavailable")
		}
	}
	close(release)
	askCount(t, m.sh, "x", 30*time.Second)
}

// When Close's context ends while an entity's Save does not return, the
// shard is fenced: the Save's context ends at once (Canceled, not its own
// 10 s bound nor the lease's deadline, 15 s off with this TTL) and Close
// returns with the context's error.
func TestCloseBoundedByItsContextFencesWhatStillRuns(t *testing.T) {
	ns := startNATS(t, true)
	const ttl = 30 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	releasedLease(t, ns, ctx, "closebound", shardKey{"counter", 0})
	h := &hooks{save: make(chan error, 4)}
	kind := Kind{Name: "counter", New: func(string) actor.Actor { return &hooked{h: h, node: "a", block: true} }}
	m := startMember(t, ns, "closebound", "a", WithKind(kind), WithShards(1), WithLeaseTTL(ttl), WithHandoffTimeout(ttl))
	askCount(t, m.sh, "x", 30*time.Second)
	cctx, ccancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer ccancel()
	start := time.Now()
	err := m.sh.Close(cctx)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v; want its context's DeadlineExceeded", err)
	}
	select {
	case err := <-h.save:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Save ended with %v; want context.Canceled (the fence at Close's deadline)", err)
		}
	default:
		t.Fatalf("Close returned after %v with the Save still running", took)
	}
	if !h.has("stopped") {
		t.Fatalf("hooks %s: the entity did not stop before Close returned", h)
	}
}

// releasedLease creates cluster's lease bucket holding k released, so that
// a node with a long TTL takes k at its first tick.
func releasedLease(t *testing.T, ns *natsServer, ctx context.Context, cluster string, k shardKey) {
	t.Helper()
	nc, err := nats.Connect(ns.url())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "loom-shards-" + cluster, History: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, k.key(), []byte(`{"owner":"z","instance":"old","released":true}`)); err != nil {
		t.Fatal(err)
	}
}

// A message that reaches a shard whose entities are stopping for a
// handoff (here: a Save that does not return, the handoff timeout well
// past the buffer timeout) is a dead letter with ErrUnavailable once it
// has waited the buffer timeout, not before.
func TestMessageWaitingForAStoppingShardExpires(t *testing.T) {
	ns := startNATS(t, true)
	h := &hooks{save: make(chan error, 4)}
	kind := func(node string) Kind {
		return Kind{Name: "counter", New: func(string) actor.Actor { return &hooked{h: h, node: node, block: node == "a"} }}
	}
	// A second host that wins shard 0 over a: its joining moves the shard.
	k := shardKey{"counter", 0}
	b := ""
	for i := 0; b == ""; i++ {
		if n := fmt.Sprintf("b%d", i); score(n, k) > score("a", k) {
			b = n
		}
	}
	const wait = time.Second
	opts := []Option{WithShards(1), WithBuffer(100, wait), WithHandoffTimeout(30 * time.Second)}
	a := startMember(t, ns, "shardexpire", "a", append(opts, WithKind(kind("a")))...)
	driver := startMember(t, ns, "shardexpire", "driver", opts...)
	askCount(t, a.sh, "x", 30*time.Second)
	waitFor(t, 30*time.Second, "the driver sees a own the shard", func() bool { return driver.sh.Owners("counter")[0] == "a" })
	dead := make(chan actor.DeadLetter, 16)
	defer a.node.System().SubscribeDeadLetters(func(d actor.DeadLetter) {
		select {
		case dead <- d:
		default:
		}
	})()
	startMember(t, ns, "shardexpire", b, append(opts, WithKind(kind(b)))...)
	waitFor(t, 30*time.Second, "a's Save began", func() bool { return h.has("save") })
	start := time.Now()
	driver.sh.Tell("counter", "x", Count{})
	var reason error
	for reason == nil {
		select {
		case d := <-dead:
			if errors.Is(d.Reason, ErrUnavailable) {
				reason = d.Reason
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no dead letter with ErrUnavailable on a")
		}
	}
	if took := time.Since(start); took < wait {
		t.Fatalf("dead letter %v after %v, before the %v buffer timeout", reason, took, wait)
	}
}

// Close on a node cut off from NATS gives the removal of its host entry a
// renewal's time, not its whole context: it returns long before its
// context ends, with the removal's error.
func TestCloseCutOffFromNATSReturnsBeforeItsContextEnds(t *testing.T) {
	ns := startNATS(t, true)
	px := startProxy(t, "127.0.0.1:"+strconv.Itoa(ns.port))
	m := startMemberAt(t, px.url(), nil, "closecut", "a", WithKind(counterKind("a", nil, 0)), WithShards(1))
	askCount(t, m.sh, "x", 30*time.Second)
	px.setCut(true)
	defer px.setCut(false)
	const limit = 30 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	err := m.sh.Close(ctx)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "remove host") {
		t.Fatalf("Close cut off from NATS: %v; want the host removal's error", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("Close took its whole %v context (%v): %v", limit, took, err)
	}
}
