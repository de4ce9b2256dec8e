package sharding

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/remote"
)

// natsServer is an embedded NATS server with JetStream on a loopback port,
// which can stop and start again on the same port and store.
type natsServer struct {
	t     testing.TB
	port  int
	store string
	js    bool
	s     *server.Server
}

func startNATS(t testing.TB, jetStream bool) *natsServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ns := &natsServer{t: t, port: port, store: t.TempDir(), js: jetStream}
	ns.start()
	t.Cleanup(ns.stop)
	return ns
}

func (ns *natsServer) start() {
	ns.t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: ns.port, NoLog: true, NoSigs: true,
		JetStream: ns.js, StoreDir: ns.store})
	if err != nil {
		ns.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		ns.t.Fatal("nats server not ready in 10 s")
	}
	ns.s = s
}

func (ns *natsServer) stop() {
	if ns.s != nil {
		ns.s.Shutdown()
		ns.s.WaitForShutdown()
		ns.s = nil
	}
}

func (ns *natsServer) url() string { return "nats://127.0.0.1:" + strconv.Itoa(ns.port) }

func newSystem(t testing.TB) *actor.System {
	t.Helper()
	sys, err := actor.NewSystem(actor.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return sys
}

// testTTL is the lease TTL of the tests: long enough that a loaded machine
// renews in time, short enough for takeovers within a test.
const testTTL = 3 * time.Second

// member is a node of a test cluster with its Sharding.
type member struct {
	node *remote.Node
	sh   *Sharding
}

// startMember joins a node called name to ns's cluster and starts
// sharding on it with opts; all end with the test (Close, then Leave, then
// the System's shutdown).
func startMember(t *testing.T, ns *natsServer, cluster, name string, opts ...Option) *member {
	t.Helper()
	return startMemberAt(t, ns.url(), nil, cluster, name, opts...)
}

// startMemberAt is startMember with the NATS server at url, and ropts for
// the Node.
func startMemberAt(t testing.TB, url string, ropts []remote.Option, cluster, name string, opts ...Option) *member {
	t.Helper()
	sys := newSystem(t)
	ropts = append([]remote.Option{remote.WithURL(url), remote.WithCluster(cluster), remote.WithCodecs(codecs(t))}, ropts...)
	n, err := remote.Join(sys, name, ropts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = n.Leave(ctx)
	})
	sh, err := Start(n, append([]Option{WithLeaseTTL(testTTL)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := sh.Close(ctx); err != nil {
			t.Logf("close %s: %v", name, err)
		}
	})
	return &member{node: n, sh: sh}
}

// activation is one entity's life on one node.
type activation struct {
	node, id    string
	start, stop time.Time // stop zero: alive
}

// journal records activations.
type journal struct {
	mu   sync.Mutex
	list []*activation
}

func (j *journal) started(node, id string) *activation {
	a := &activation{node: node, id: id, start: time.Now()}
	j.mu.Lock()
	j.list = append(j.list, a)
	j.mu.Unlock()
	return a
}

func (j *journal) stopped(a *activation) {
	j.mu.Lock()
	a.stop = time.Now()
	j.mu.Unlock()
}

func (j *journal) count() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.list)
}

// overlaps returns a description of each pair of activations of one
// entity alive at once.
func (j *journal) overlaps() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	byID := map[string][]*activation{}
	for _, a := range j.list {
		byID[a.id] = append(byID[a.id], a)
	}
	var bad []string
	for id, as := range byID {
		sort.Slice(as, func(i, k int) bool { return as[i].start.Before(as[k].start) })
		for i := 1; i < len(as); i++ {
			prev := as[i-1]
			if prev.stop.IsZero() || prev.stop.After(as[i].start) {
				bad = append(bad, fmt.Sprintf("%s: on %s from %v to %v, on %s from %v", id, prev.node,
					prev.start.Format("15:04:05.000"), prev.stop.Format("15:04:05.000"), as[i].node, as[i].start.Format("15:04:05.000")))
			}
		}
	}
	return bad
}

// Count is what a counter entity is asked; it answers a Counted.
type Count struct{}

// Counted is a counter entity's answer: its node, its id and how many
// Counts it has handled in this activation (or since its saved state).
type Counted struct {
	Node string `json:"node"`
	ID   string `json:"id"`
	N    int    `json:"n"`
}

// counterKind is a kind whose entities count the Counts they get and
// record their activations in j.
func counterKind(node string, j *journal, passivate time.Duration) Kind {
	return Kind{Name: "counter", PassivateAfter: passivate, New: func(id string) actor.Actor {
		var a *activation
		n := 0
		return actor.ReceiveFunc(func(c *actor.Context, msg any) {
			switch msg.(type) {
			case actor.Started:
				if j != nil {
					a = j.started(node, id)
				}
			case actor.Stopped:
				if j != nil {
					j.stopped(a)
				}
			case Count:
				n++
				c.Respond(Counted{Node: node, ID: id, N: n})
			}
		})
	}}
}

func codecs(t testing.TB) *remote.Codecs {
	c, err := newCodecs()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newCodecs() (*remote.Codecs, error) {
	c := remote.NewCodecs()
	if err := c.Register("sharding.test.Count", Count{}, countCodec{}); err != nil {
		return nil, err
	}
	if err := c.Register("sharding.test.Counted", Counted{}, countedCodec{}); err != nil {
		return nil, err
	}
	return c, nil
}

// countCodec encodes a Count as nothing.
type countCodec struct{}

func (countCodec) Append(b []byte, _ any) ([]byte, error) { return b, nil }
func (countCodec) Decode([]byte) (any, error)             { return Count{}, nil }

// countedCodec encodes a Counted as its node and id, uvarint-prefixed, and
// its count as a uvarint.
type countedCodec struct{}

func (countedCodec) Append(b []byte, msg any) ([]byte, error) {
	c := msg.(Counted)
	for _, s := range [...]string{c.Node, c.ID} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return binary.AppendUvarint(b, uint64(c.N)), nil
}

func (countedCodec) Decode(data []byte) (any, error) {
	var f [2]string
	for i := range f {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			return nil, errors.New("bad Counted")
		}
		f[i], data = string(data[k:k+int(n)]), data[k+int(n):]
	}
	n, k := binary.Uvarint(data)
	if k <= 0 {
		return nil, errors.New("bad Counted")
	}
	return Counted{Node: f[0], ID: f[1], N: int(n)}, nil
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// askCount asks entity id for a Count, retrying failures until d passes.
func askCount(t *testing.T, sh *Sharding, id string, d time.Duration) Counted {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		v, err := sh.Ask(ctx, "counter", id, Count{})
		cancel()
		if err == nil {
			return v.(Counted)
		}
		if time.Now().After(deadline) {
			s := sh
			s.mu.Lock()
			k := shardKey{"counter", ShardOf(id, s.shards)}
			v := s.leases[k]
			t.Logf("on %s: members %v, hosts %v, lease of %s: %+v", s.name, s.members, s.hosts, k.key(), v)
			s.mu.Unlock()
			t.Fatalf("ask %s: %v", id, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
