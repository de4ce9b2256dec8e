package sharding

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/remote"
)

func TestStartWithoutJetStream(t *testing.T) {
	ns := startNATS(t, false)
	sys := newSystem(t)
	n, err := remote.Join(sys, "a", remote.WithURL(ns.url()))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Leave(context.Background())
	_, err = Start(n)
	if !errors.Is(err, ErrNoJetStream) {
		t.Fatalf("Start without JetStream: %v; want ErrNoJetStream", err)
	}
}

func TestStartRefusesBadOptions(t *testing.T) {
	ns := startNATS(t, true)
	sys := newSystem(t)
	n, err := remote.Join(sys, "a", remote.WithURL(ns.url()))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Leave(context.Background())
	newActor := func(string) actor.Actor { return actor.ReceiveFunc(func(*actor.Context, any) {}) }
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"zero shards", []Option{WithShards(0)}},
		{"too many shards", []Option{WithShards(1<<16 + 1)}},
		{"short TTL", []Option{WithLeaseTTL(299 * time.Millisecond)}},
		{"kind name", []Option{WithKind(Kind{Name: "a.b", New: newActor})}},
		{"no New", []Option{WithKind(Kind{Name: "k"})}},
		{"twice", []Option{WithKind(Kind{Name: "k", New: newActor}), WithKind(Kind{Name: "k", New: newActor})}},
		{"buffer", []Option{WithBuffer(-1, time.Second)}},
		{"bucket", []Option{WithBucket("a.b")}},
		{"short handoff timeout", []Option{WithHandoffTimeout(99 * time.Millisecond)}},
	} {
		if _, err := Start(n, tc.opts...); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v; want ErrInvalid", tc.name, err)
		}
	}
	if _, err := Start(nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil node: %v; want ErrInvalid", err)
	}
}

func TestBadKindAndEmptyID(t *testing.T) {
	ns := startNATS(t, true)
	m := startMember(t, ns, "bad", "a", WithKind(counterKind("a", nil, 0)))
	if _, err := m.sh.Entity("counter", ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty id: %v; want ErrInvalid", err)
	}
	if _, err := m.sh.Entity("nope", "x"); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: %v; want ErrUnknownKind", err)
	}
	if _, err := m.sh.Ask(context.Background(), "nope", "x", Count{}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("Ask of an unknown kind: %v; want ErrUnknownKind", err)
	}
	got := make(chan actor.DeadLetter, 4)
	defer m.node.System().SubscribeDeadLetters(func(d actor.DeadLetter) { got <- d })()
	m.sh.Tell("nope", "x", Count{})
	m.sh.Tell("counter", "", Count{})
	for _, want := range []error{ErrUnknownKind, ErrInvalid} {
		select {
		case d := <-got:
			if !errors.Is(d.Reason, want) {
				t.Errorf("dead letter reason %v; want %v", d.Reason, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no dead letter")
		}
	}
	// A node that hosts nothing knows the kinds the hosts registered.
	d := startMember(t, ns, "bad", "driver", WithBucket("loom-shards-bad"))
	if _, err := d.sh.Entity("counter", "x"); err != nil {
		t.Errorf("a kind another node hosts: %v", err)
	}
}

// cluster starts hosts of the counter kind and a driver that hosts
// nothing, and waits until every shard has an owner the driver sees.
func cluster(t *testing.T, ns *natsServer, name string, j *journal, hosts ...string) (driver *member, members map[string]*member) {
	t.Helper()
	members = map[string]*member{}
	for _, h := range hosts {
		members[h] = startMember(t, ns, name, h, WithKind(counterKind(h, j, 0)), WithShards(32))
	}
	driver = startMember(t, ns, name, "driver", WithShards(32))
	waitFor(t, 30*time.Second, "every shard owned", func() bool {
		for _, o := range driver.sh.Owners("counter") {
			if o == "" {
				return false
			}
		}
		return true
	})
	return driver, members
}

func TestEntitiesActivateOnceAndStay(t *testing.T) {
	ns := startNATS(t, true)
	j := &journal{}
	driver, hosts := cluster(t, ns, "once", j, "a", "b", "c")
	const ids = 300
	base := snapshot(hosts)
	first := map[string]string{}
	for i := range ids {
		id := fmt.Sprintf("e%d", i)
		c := askCount(t, driver.sh, id, 30*time.Second)
		if c.ID != id || c.N != 1 {
			t.Fatalf("first ask of %s: %+v", id, c)
		}
		first[id] = c.Node
	}
	nodes := map[string]int{}
	for i := range ids {
		id := fmt.Sprintf("e%d", i)
		ref, err := driver.sh.Entity("counter", id)
		if err != nil {
			t.Fatal(err)
		}
		c, err := actor.Ask[Counted](context.Background(), ref, Count{})
		if err != nil {
			t.Fatal(err)
		}
		if c.N != 2 || c.Node != first[id] {
			if moved := movesSince(hosts, base); moved != "" {
				// A machine too busy to renew a lease in 2 s: the
				// shard's entities stopped, as they must. Counted from
				// before the first asks: a shard that moved while they
				// ran stopped the entities asked before the move.
				t.Logf("second ask of %s: %+v, after %s", id, c, moved)
				continue
			}
			t.Fatalf("second ask of %s: %+v; want n 2 on %s", id, c, first[id])
		}
		nodes[c.Node]++
	}
	if len(nodes) != 3 {
		t.Errorf("entities on %v; want on all three hosts", nodes)
	}
	if n := j.count(); n != ids && movesSince(hosts, base) == "" {
		t.Errorf("%d activations of %d entities", n, ids)
	}
	if bad := j.overlaps(); len(bad) > 0 {
		t.Errorf("overlapping activations: %v", bad)
	}
}

func TestCrashDuringActivationFollowsSupervision(t *testing.T) {
	ns := startNATS(t, true)
	var news atomic.Int32
	crashy := func(sup actor.Supervisor) Kind {
		return Kind{Name: "crashy", Supervisor: sup, New: func(id string) actor.Actor {
			if news.Add(1) == 1 {
				panic("first activation fails")
			}
			return actor.ReceiveFunc(func(c *actor.Context, msg any) {
				if msg == "ping" {
					c.Respond("pong " + id)
				}
			})
		}}
	}
	// Restart: the failed activation is restarted, the message waits in
	// the mailbox and is answered.
	m := startMember(t, ns, "crash1", "a", WithKind(crashy(actor.Supervisor{Decide: actor.Always(actor.Restart)})), WithShards(4))
	waitOwned(t, m, "crashy", 4)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := m.sh.Ask(ctx, "crashy", "x", "ping")
	if err != nil || v != "pong x" {
		t.Fatalf("ask with restart: %v, %v", v, err)
	}

	// Stop (the default): the Ask fails, the next message activates it
	// afresh.
	news.Store(0)
	m2 := startMember(t, ns, "crash2", "b", WithKind(crashy(actor.Supervisor{})), WithShards(4), WithBucket("crash2"))
	waitOwned(t, m2, "crashy", 4)
	if _, err := m2.sh.Ask(ctx, "crashy", "y", "ping"); !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("ask with stop: %v; want ErrStopped", err)
	}
	// Once it has stopped (messages that reach it while it stops are dead
	// letters), the next message activates it afresh.
	waitFor(t, 10*time.Second, "the failed activation gone", func() bool { return m2.sh.Stats().Entities == 0 })
	v, err = m2.sh.Ask(ctx, "crashy", "y", "ping")
	if err != nil || v != "pong y" {
		t.Fatalf("ask after the failed activation: %v, %v", v, err)
	}
}

func waitOwned(t *testing.T, m *member, kind string, shards int) {
	t.Helper()
	waitFor(t, 30*time.Second, "shards owned", func() bool {
		os := m.sh.Owners(kind)
		for _, o := range os[:shards] {
			if o == "" {
				return false
			}
		}
		return true
	})
}

// store is a Persistent counter's database.
type store struct {
	mu          sync.Mutex
	state       map[string]int
	loads, save int
}

type persistentCounter struct {
	st *store
	n  int
}

func (p *persistentCounter) Load(_ context.Context, id string) error {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.loads++
	p.n = p.st.state[id]
	return nil
}

func (p *persistentCounter) Save(_ context.Context, id string) error {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.save++
	p.st.state[id] = p.n
	return nil
}

func (p *persistentCounter) Receive(c *actor.Context, msg any) {
	if _, ok := msg.(Count); ok {
		p.n++
		c.Respond(p.n)
	}
}

func TestPassivationSavesAndReactivationLoads(t *testing.T) {
	ns := startNATS(t, true)
	st := &store{state: map[string]int{}}
	j := &journal{}
	k := Kind{Name: "pc", PassivateAfter: 300 * time.Millisecond, New: func(id string) actor.Actor {
		return &journaled{inner: &persistentCounter{st: st}, j: j, node: "a", id: id}
	}}
	m := startMember(t, ns, "passivate", "a", WithKind(k), WithShards(2))
	waitOwned(t, m, "pc", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for want := 1; want <= 3; want++ {
		v, err := m.sh.Ask(ctx, "pc", "x", Count{})
		if err != nil || v != want {
			t.Fatalf("ask %d: %v, %v", want, v, err)
		}
	}
	waitFor(t, 10*time.Second, "passivation", func() bool { return m.sh.Stats().Entities == 0 })
	st.mu.Lock()
	saved, loads, saves := st.state["x"], st.loads, st.save
	st.mu.Unlock()
	if saved != 3 || loads != 1 || saves != 1 {
		t.Fatalf("after passivation: state %d, %d loads, %d saves; want 3, 1, 1", saved, loads, saves)
	}
	v, err := m.sh.Ask(ctx, "pc", "x", Count{})
	if err != nil || v != 4 {
		t.Fatalf("ask after reactivation: %v, %v; want 4 from the loaded state", v, err)
	}
	if n := j.count(); n != 2 {
		t.Errorf("%d activations; want 2", n)
	}
	if bad := j.overlaps(); len(bad) > 0 {
		t.Errorf("overlapping activations: %v", bad)
	}
}

// journaled records an inner behaviour's activations, and passes the
// Persistent hooks on.
type journaled struct {
	inner    *persistentCounter
	j        *journal
	a        *activation
	node, id string
}

func (x *journaled) Load(ctx context.Context, id string) error { return x.inner.Load(ctx, id) }
func (x *journaled) Save(ctx context.Context, id string) error { return x.inner.Save(ctx, id) }

func (x *journaled) Receive(c *actor.Context, msg any) {
	switch msg.(type) {
	case actor.Started:
		x.a = x.j.started(x.node, x.id)
	case actor.Stopped:
		x.j.stopped(x.a)
	}
	x.inner.Receive(c, msg)
}

// counts is a snapshot of each host's Stats, taken as a phase of a test
// begins, so that only what the phase did excuses what it finds.
type counts map[string]Stats

// snapshot returns the hosts' Stats now.
func snapshot(hosts map[string]*member) counts {
	c := counts{}
	for name, m := range hosts {
		c[name] = m.sh.Stats()
	}
	return c
}

// movesSince describes the shards the hosts fenced or handed off since
// the snapshot before, "" if none.
func movesSince(hosts map[string]*member, before counts) string {
	var out []string
	for name, m := range hosts {
		st, b := m.sh.Stats(), before[name]
		if f, h := st.Fenced-b.Fenced, st.HandedOff-b.HandedOff; f+h > 0 {
			out = append(out, fmt.Sprintf("%s fenced %d and handed off %d shards", name, f, h))
		}
	}
	return strings.Join(out, ", ")
}

// Placement must not change with the hash's implementation: nodes of two
// builds agree on every shard only if fnv64a is hash/fnv's FNV-1a.
func TestShardHashIsFNV1a(t *testing.T) {
	for _, id := range []string{"", "e0", "e99999", "c-42", "ü", strings.Repeat("x", 300)} {
		h := fnv.New64a()
		_, _ = h.Write([]byte(id))
		if got, want := fnv64a(id), h.Sum64(); got != want {
			t.Errorf("fnv64a(%q) = %#x, want %#x", id, got, want)
		}
		if got, want := ShardOf(id, 128), int(mix(h.Sum64())%128); got != want {
			t.Errorf("ShardOf(%q, 128) = %d, want %d", id, got, want)
		}
	}
}

// A Start that fails after it began to watch the bucket (here: the region
// actor's name is taken by a Sharding already on the node) leaves no
// goroutine behind.
func TestFailedStartLeavesNoGoroutine(t *testing.T) {
	ns := startNATS(t, true)
	// No kinds: the first Sharding makes no writes whose goroutines could
	// come and go during the check.
	m := startMember(t, ns, "leak", "a")
	// What runs now is the first Sharding's and the Node's: the failed
	// Start must add nothing to it.
	before := goleak.IgnoreCurrent()
	_, err := Start(m.node, WithLeaseTTL(testTTL))
	if err == nil {
		t.Fatal("a second Start on one Node succeeded")
	}
	if !strings.Contains(err.Error(), regionName) {
		t.Fatalf("Start failed with %v; want the region name taken", err)
	}
	goleak.VerifyNone(t, before)
}
