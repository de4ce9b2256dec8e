package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/loomrt/loom/actor"
)

// hooks records which hooks a Persistent behaviour ran.
type hooks struct {
	mu     sync.Mutex
	list   []string
	save   chan error // the end of each Save's context, if it blocks
	tokens []string   // "load@node token", "save@node token"
}

func (h *hooks) token(ctx context.Context, what string) {
	tok, ok := FencingToken(ctx)
	h.mu.Lock()
	h.tokens = append(h.tokens, fmt.Sprintf("%s %d %v", what, tok, ok))
	h.mu.Unlock()
}

func (h *hooks) add(s string) {
	h.mu.Lock()
	h.list = append(h.list, s)
	h.mu.Unlock()
}

func (h *hooks) has(s string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, x := range h.list {
		if x == s {
			return true
		}
	}
	return false
}

func (h *hooks) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return fmtList(h.list)
}

func fmtList(l []string) string {
	s := "["
	for i, x := range l {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s + "]"
}

// hooked is a Persistent counter that records its hooks; with block, Save
// waits for its context to end.
type hooked struct {
	h     *hooks
	node  string
	block bool
}

func (p *hooked) Load(ctx context.Context, _ string) error {
	p.h.add("load")
	p.h.token(ctx, "load@"+p.node)
	return nil
}

func (p *hooked) Save(ctx context.Context, _ string) error {
	p.h.add("save")
	p.h.token(ctx, "save@"+p.node)
	if p.block {
		<-ctx.Done()
		p.h.save <- ctx.Err()
		return ctx.Err()
	}
	return nil
}

func (p *hooked) Receive(c *actor.Context, msg any) {
	switch msg.(type) {
	case actor.Stopping:
		p.h.add("stopping")
	case actor.Stopped:
		p.h.add("stopped")
	case Count:
		p.h.add("count")
		c.Respond(Counted{ID: "x"})
	}
}

// spawnEntity runs a hooked entity on sys under lease, as a shard's owner
// does.
func spawnEntity(t *testing.T, sys *actor.System, p *hooked, lease *leaseClock) actor.Ref {
	t.Helper()
	k := &Kind{Name: "store", New: func(string) actor.Actor { return p }}
	ref, err := sys.Spawn(actor.Props{New: func() actor.Actor { return newEntity(k, "x", lease) }})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// An entity checks its shard's lease before each message, not when the
// message was queued: past the lease's deadline the message is a dead
// letter with ErrLeaseLapsed, unhandled, and the stop runs neither
// Stopping nor Save.
func TestEntityHandlesNothingPastTheLeaseDeadline(t *testing.T) {
	sys := newSystem(t)
	dead := make(chan actor.DeadLetter, 16)
	defer sys.SubscribeDeadLetters(func(d actor.DeadLetter) { dead <- d })()
	lease := newLeaseClock(1, time.Now(), time.Hour)
	h := &hooks{}
	ref := spawnEntity(t, sys, &hooked{h: h}, lease)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ref.Ask(ctx, Count{}); err != nil {
		t.Fatalf("ask while the lease is held: %v", err)
	}
	// The deadline passes (a lease sent an hour and a nanosecond ago).
	lease.deadline.Store(0)
	ref.Tell(Count{})
	select {
	case d := <-dead:
		if !errors.Is(d.Reason, ErrLeaseLapsed) {
			t.Fatalf("dead letter's reason %v; want ErrLeaseLapsed", d.Reason)
		}
		if _, ok := d.Message.(Count); !ok {
			t.Fatalf("dead letter %T; want the Count", d.Message)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no dead letter for a message past the lease deadline")
	}
	ref.Stop()
	<-ref.Done()
	if got := h.String(); got != "[load count stopped]" {
		t.Fatalf("hooks %s; want [load count stopped]", got)
	}
}

// A stop while the lease is held (passivation, handoff, Close) runs
// Stopping then Save, and Save's context ends when the lease is lost, not
// after Save's own 10 s.
func TestSaveEndsWhenTheLeaseIsLost(t *testing.T) {
	sys := newSystem(t)
	lease := newLeaseClock(1, time.Now(), time.Hour)
	h := &hooks{save: make(chan error, 1)}
	ref := spawnEntity(t, sys, &hooked{h: h, block: true}, lease)
	ref.Stop()
	waitFor(t, 10*time.Second, "Save begins", func() bool { return h.has("save") })
	start := time.Now()
	lease.lose()
	select {
	case err := <-h.save:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Save's context ended with %v; want context.Canceled", err)
		}
	case <-time.After(maxSave / 2):
		t.Fatalf("Save's context still open %v after the lease was lost", maxSave/2)
	}
	<-ref.Done()
	t.Logf("Save's context ended %v after the loss", time.Since(start))
	if got := h.String(); got != "[load stopping save stopped]" {
		t.Fatalf("hooks %s; want [load stopping save stopped]", got)
	}
}

// Save's context also ends at the lease's deadline, which renewals move
// on: a Save that outlives the deadline it began under, but not the
// renewed one, keeps its context.
func TestSaveContextFollowsTheLeaseDeadline(t *testing.T) {
	lease := newLeaseClock(1, time.Now(), 200*time.Millisecond)
	ctx, cancel := lease.bound(context.Background())
	defer cancel()
	lease.extend(time.Now(), time.Hour)
	// Past the first deadline, the timer has fired and re-armed.
	time.Sleep(400 * time.Millisecond)
	if err := ctx.Err(); err != nil {
		t.Fatalf("context ended (%v) though the lease was renewed", err)
	}
	short := newLeaseClock(1, time.Now(), 200*time.Millisecond)
	ctx2, cancel2 := short.bound(context.Background())
	defer cancel2()
	select {
	case <-ctx2.Done():
	case <-time.After(maxSave / 2):
		t.Fatalf("context open %v past an unrenewed lease's deadline", maxSave/2)
	}
	if short.held() {
		t.Fatal("lease held past its deadline")
	}
}

// A shard whose lease another node wrote is fenced: its entities hear
// neither Stopping nor Save (a Save now could land after the next owner's
// Load), only Stopped.
func TestFencedEntityNeitherStopsNorSaves(t *testing.T) {
	ns := startNATS(t, true)
	h := &hooks{}
	kind := Kind{Name: "counter", New: func(string) actor.Actor { return &hooked{h: h} }}
	m := startMember(t, ns, "fence", "a", WithKind(kind), WithShards(1))
	askCount(t, m.sh, "x", 30*time.Second)
	k := shardKey{"counter", 0}
	m.sh.mu.Lock()
	rev := m.sh.owned[k].rev
	m.sh.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec := []byte(`{"owner":"z","instance":"other"}`)
	if _, err := m.sh.kv.Update(ctx, k.key(), rec, rev); err != nil {
		// A renewal moved the revision: write over whatever is there.
		if _, err := m.sh.kv.Put(ctx, k.key(), rec); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "the entity stopped", func() bool { return h.has("stopped") })
	if m.sh.Stats().Fenced == 0 {
		t.Fatal("not counted as a fence")
	}
	if h.has("stopping") || h.has("save") {
		t.Fatalf("fenced entity's hooks %s; want no stopping, no save", h)
	}
}

// A handoff's release lands even when a renewal sent before the shard
// stopped moved the lease's revision first: the next owner takes the
// shard at once rather than a TTL later.
func TestReleaseAfterARenewalLandedFirst(t *testing.T) {
	ns := startNATS(t, true)
	// A TTL long enough that no renewal of the node's own runs during the
	// test; the lease starts released, so the node takes it at its first
	// tick.
	const ttl = 60 * time.Second
	nc, err := nats.Connect(ns.url())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "loom-shards-release", History: 1})
	if err != nil {
		t.Fatal(err)
	}
	k := shardKey{"counter", 0}
	if _, err := kv.Put(ctx, k.key(), []byte(`{"owner":"z","instance":"old","released":true}`)); err != nil {
		t.Fatal(err)
	}
	m := startMember(t, ns, "release", "a", WithKind(counterKind("a", nil, 0)), WithShards(1), WithLeaseTTL(ttl))
	askCount(t, m.sh, "x", 30*time.Second)
	m.sh.mu.Lock()
	rev := m.sh.owned[k].rev
	m.sh.mu.Unlock()
	// A renewal of the node's lands; its answer has not reached the node.
	if _, err := kv.Update(ctx, k.key(), m.sh.record(false), rev); err != nil {
		t.Fatal(err)
	}
	if err := m.sh.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, k.key())
	if err != nil {
		t.Fatal(err)
	}
	var rec leaseRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		t.Fatal(err)
	}
	if !rec.Released || rec.Instance != m.sh.instance {
		t.Fatalf("lease after Close: %+v; want released by the node", rec)
	}
}

// Load and Save see the fencing token of their activation's lease: the
// revision of the write that took the shard, greater on a later owner.
func TestLoadAndSaveSeeTheFencingToken(t *testing.T) {
	ns := startNATS(t, true)
	h := &hooks{}
	kind := func(node string) Kind {
		return Kind{Name: "counter", New: func(string) actor.Actor { return &hooked{h: h, node: node} }}
	}
	a := startMember(t, ns, "token", "a", WithKind(kind("a")), WithShards(1))
	askCount(t, a.sh, "x", 30*time.Second)
	k := shardKey{"counter", 0}
	a.sh.mu.Lock()
	took := a.sh.owned[k].lease.token
	a.sh.mu.Unlock()
	b := startMember(t, ns, "token", "b", WithKind(kind("b")), WithShards(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.sh.Close(ctx); err != nil {
		t.Fatal(err)
	}
	askCount(t, b.sh, "x", 30*time.Second)
	b.sh.mu.Lock()
	took2 := b.sh.owned[k].lease.token
	b.sh.mu.Unlock()
	if took2 <= took {
		t.Fatalf("b took the lease with token %d, a with %d; want b's greater", took2, took)
	}
	h.mu.Lock()
	got := fmtList(h.tokens)
	h.mu.Unlock()
	want := fmtList([]string{fmt.Sprintf("load@a %d true", took), fmt.Sprintf("save@a %d true", took), fmt.Sprintf("load@b %d true", took2)})
	if got != want {
		t.Fatalf("tokens %s; want %s", got, want)
	}
}
