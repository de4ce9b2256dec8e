package grains

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/typepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// statsActor is the name of the actor on every host that answers an
// emptypb.Empty with the host's heap, in bytes, after a collection.
const statsActor = "grains-stats"

// counter is the grain: it counts the requests it has answered. A request
// is a wrapperspb.StringValue naming the grain; the reply is a
// typepb.EnumValue (a protobuf well-known type with a string and an int32)
// whose Name is the grain's own identity, from its activation, and whose
// Number is its count after this request.
type counter struct {
	id string
	n  int32
}

func (g *counter) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *cluster.ClusterInit:
		g.id = msg.Identity.Identity
	case *wrapperspb.StringValue:
		g.n++
		c.Respond(&typepb.EnumValue{Name: g.id, Number: g.n})
	}
}

// staticProvider is a cluster provider whose members are a fixed list,
// given once the hosting processes are up.
type staticProvider struct {
	mu      sync.Mutex
	cluster *cluster.Cluster
	members []*cluster.Member
}

var _ cluster.ClusterProvider = (*staticProvider)(nil)

func (p *staticProvider) StartMember(c *cluster.Cluster) error { return p.started(c) }
func (p *staticProvider) StartClient(c *cluster.Cluster) error { return p.started(c) }
func (p *staticProvider) Shutdown(bool) error                  { return nil }

func (p *staticProvider) started(c *cluster.Cluster) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cluster = c
	if p.members != nil {
		c.MemberList.UpdateClusterTopology(p.members)
	}
	return nil
}

// setMembers publishes the members' topology, now if the cluster has
// started, else when it does.
func (p *staticProvider) setMembers(members []*cluster.Member) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.members = members
	if p.cluster != nil {
		p.cluster.MemberList.UpdateClusterTopology(members)
	}
}

// parseTopology reads id@host:port,… into members hosting Kind.
func parseTopology(s string) ([]*cluster.Member, error) {
	var members []*cluster.Member
	for _, m := range strings.Split(s, ",") {
		id, addr, ok := strings.Cut(m, "@")
		i := strings.LastIndexByte(addr, ':')
		if !ok || id == "" || i < 0 {
			return nil, fmt.Errorf("member %q: want id@host:port", m)
		}
		port, err := strconv.Atoi(addr[i+1:])
		if err != nil {
			return nil, fmt.Errorf("member %q: port: %w", m, err)
		}
		members = append(members, &cluster.Member{Id: id, Host: addr[:i], Port: int32(port), Kinds: []string{Kind}})
	}
	return members, nil
}

// newCluster makes an actor system and its cluster, with protoactor-go's
// logging off, remote on a free loopback port, and the disthash lookup;
// kinds are those this process hosts. The request timeout is long because
// a grain call that times out is retried, which would count twice: on a
// loaded machine a slow reply is better than a wrong one.
func newCluster(p *staticProvider, kinds ...*cluster.Kind) *cluster.Cluster {
	quiet := func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }
	sys := actor.NewActorSystem(actor.WithLoggerFactory(quiet))
	cfg := cluster.Configure("grains", p, disthash.New(), remote.Configure("127.0.0.1", 0),
		cluster.WithKinds(kinds...), cluster.WithRequestTimeout(30*time.Second))
	return cluster.New(sys, cfg)
}

// host runs a hosting member: it prints "member <id> <address>", reads
// "topology <members>", prints "ready", and serves grains until in ends.
func host(in io.Reader, out io.Writer) error {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	var p staticProvider
	kind := cluster.NewKind(Kind, actor.PropsFromProducer(func() actor.Actor { return &counter{} }))
	c := newCluster(&p, kind)
	c.StartMember()
	defer c.Shutdown(false)
	stats := actor.PropsFromFunc(func(ctx actor.Context) {
		if _, ok := ctx.Message().(*emptypb.Empty); ok {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			ctx.Respond(wrapperspb.UInt64(m.HeapAlloc))
		}
	})
	if _, err := c.ActorSystem.Root.SpawnNamed(stats, statsActor); err != nil {
		return fmt.Errorf("spawn %s: %w", statsActor, err)
	}
	fmt.Fprintf(out, "member %s %s\n", c.ActorSystem.ID, c.ActorSystem.Address())

	r := bufio.NewReader(in)
	line, err := r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("read topology: %w", err)
	}
	spec, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "topology ")
	if !ok {
		return fmt.Errorf("%q: want topology <members>", line)
	}
	members, err := parseTopology(spec)
	if err != nil {
		return err
	}
	p.setMembers(members)
	// Open this host's connection to every other before the run, so that
	// the memory measured around the activations does not count the
	// connections' buffers (protoactor-go's remote preallocates each
	// outgoing connection's queue).
	for _, m := range members {
		if m.Address() == c.ActorSystem.Address() {
			continue
		}
		peer := actor.NewPID(m.Address(), statsActor)
		if _, err := c.ActorSystem.Root.RequestFuture(peer, &emptypb.Empty{}, 30*time.Second).Result(); err != nil {
			return fmt.Errorf("reach %s: %w", m.Address(), err)
		}
	}
	fmt.Fprintln(out, "ready")
	_, _ = io.Copy(io.Discard, r)
	return nil
}
