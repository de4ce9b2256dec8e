package remote

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/loomrt/loom/actor"
)

// EnvURL is the variable Join reads the NATS URL from when no WithURL or
// WithConn is given.
const EnvURL = "LOOM_NATS_URL"

// Defaults of the options.
const (
	DefaultCluster    = "default"
	DefaultHeartbeat  = 250 * time.Millisecond
	DefaultFailAfter  = 2500 * time.Millisecond
	DefaultMaxPending = 1 << 16
)

// A Node is an actor.System joined to a cluster over NATS: it gives Refs to
// actors on other nodes (Ref, Lookup, SpawnOn), carries what is sent to them
// in batches per destination node, delivers what arrives into the System's
// mailboxes, and watches the other nodes' heartbeats. It is safe for
// concurrent use. Its goroutines are gone when Leave returns, unless a
// publish stuck on a stalled server outlasts Leave's context (see Leave).
type Node struct {
	sys        *actor.System
	name       string
	cluster    string
	instance   uint64
	prefix     string // "loom.<cluster>."
	nc         *nats.Conn
	ownConn    bool
	codecs     *Codecs
	heartbeat  time.Duration
	failAfter  time.Duration
	maxPending int
	maxBatch   int
	header     []byte // this node's batch header

	mu       sync.Mutex
	peers    map[string]*peer     // the current incarnation of each node known, by name
	downed   map[uint64]struct{}  // incarnations declared down or left: ignored from then on
	names    map[string]actor.Ref // Register
	kinds    map[string]actor.Props
	watchers []*memberSub
	events   []MemberEvent // waiting for the events goroutine
	closed   bool

	askMu  sync.Mutex
	asks   map[uint64]*pendingAsk
	askSeq uint64

	subs     []*nats.Subscription
	wake     chan struct{} // the events goroutine's
	stop     chan struct{}
	wg       sync.WaitGroup
	left     chan struct{} // closed once Leave's teardown has ended
	cancelDL func()

	// local caches the inbound goroutine's lookups of local paths.
	local map[string]actor.Ref

	batchesOut atomic.Uint64
	batchesIn  atomic.Uint64
	framesIn   atomic.Uint64
	malformed  atomic.Uint64
	stale      atomic.Uint64
	slow       atomic.Uint64
	// echoed is when this node last read its own heartbeat (UnixNano).
	echoed atomic.Int64
}

// Stats counts a Node's traffic since Join.
type Stats struct {
	BatchesSent     uint64 // NATS messages published with frames
	BatchesReceived uint64 // NATS messages received on the node's subject
	FramesReceived  uint64 // messages and signals in them
	// Malformed counts batches, or frames, that did not parse and were
	// ignored: bytes on the node's subjects that no node wrote.
	Malformed uint64
	// Stale counts batches from an incarnation declared down or left.
	Stale uint64
	// Dropped counts batches the NATS client dropped because this node
	// read too slowly, and SlowConsumer the times it reported so.
	Dropped      uint64
	SlowConsumer uint64
}

// An Option configures Join.
type Option func(*config)

type config struct {
	url        string
	conn       *nats.Conn
	cluster    string
	codecs     *Codecs
	heartbeat  time.Duration
	failAfter  time.Duration
	maxPending int
}

// WithURL sets the NATS URL (or a comma-separated list). Without it, and
// without WithConn, Join reads LOOM_NATS_URL, then uses nats.DefaultURL.
func WithURL(url string) Option { return func(c *config) { c.url = url } }

// WithConn makes the Node use nc instead of connecting; Leave does not
// close it. The Node reads the connection's status, so the connection's
// own reconnect settings apply. On a connection made with nats.NoEcho the
// node cannot read its own heartbeats back, so it declares nodes down
// without first checking that it has read what they sent.
func WithConn(nc *nats.Conn) Option { return func(c *config) { c.conn = nc } }

// WithCluster sets the cluster's name: nodes see only the nodes of their
// cluster, whatever else shares the NATS server. "" is DefaultCluster. Names are letters, digits, '-' and '_'.
func WithCluster(name string) Option { return func(c *config) { c.cluster = name } }

// WithCodecs sets the codec registry; the default is NewCodecs(): strings,
// byte slices and protocol buffer messages.
func WithCodecs(r *Codecs) Option { return func(c *config) { c.codecs = r } }

// WithFailureDetector sets how often the node sends a heartbeat and how
// long a node may stay silent before it is declared down: its watchers get
// Terminated, Asks to it fail, what is sent to it goes to dead letters.
// Detection takes at most failAfter plus one heartbeat, while the node
// reads its own heartbeats back within two: one that reads them later
// declares no node down until it has caught up. Zero keeps a
// default (DefaultHeartbeat, DefaultFailAfter); failAfter must exceed twice
// the heartbeat.
func WithFailureDetector(heartbeat, failAfter time.Duration) Option {
	return func(c *config) { c.heartbeat, c.failAfter = heartbeat, failAfter }
}

// WithMaxPending bounds the messages waiting to be published to one node;
// a Tell past it goes to dead letters with ErrBackpressure. The default is
// DefaultMaxPending.
func WithMaxPending(messages int) Option { return func(c *config) { c.maxPending = messages } }

// Join connects sys to the cluster as the node called name and returns
// once the node's subjects are subscribed and its first heartbeat sent.
// Names are letters, digits, '-' and '_'; two live nodes of one cluster
// must not share a name. Errors: ErrInvalid for a nil sys, a bad name or
// option, and the connection's.
func Join(sys *actor.System, name string, opts ...Option) (*Node, error) {
	cfg := config{cluster: DefaultCluster, heartbeat: DefaultHeartbeat, failAfter: DefaultFailAfter, maxPending: DefaultMaxPending}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.cluster == "" {
		cfg.cluster = DefaultCluster
	}
	if cfg.heartbeat == 0 {
		cfg.heartbeat = DefaultHeartbeat
	}
	if cfg.failAfter == 0 {
		cfg.failAfter = DefaultFailAfter
	}
	switch {
	case sys == nil:
		return nil, fmt.Errorf("join %q: %w: nil actor system", name, ErrInvalid)
	case !validName(name):
		return nil, fmt.Errorf("join %q: %w: a node name is letters, digits, '-' and '_'", name, ErrInvalid)
	case !validName(cfg.cluster):
		return nil, fmt.Errorf("join %q: %w: cluster name %q: letters, digits, '-' and '_'", name, ErrInvalid, cfg.cluster)
	case cfg.heartbeat < 0 || cfg.failAfter <= 2*cfg.heartbeat:
		return nil, fmt.Errorf("join %q: %w: fail after %v must exceed twice the heartbeat %v", name, ErrInvalid, cfg.failAfter, cfg.heartbeat)
	case cfg.maxPending <= 0:
		return nil, fmt.Errorf("join %q: %w: max pending %d", name, ErrInvalid, cfg.maxPending)
	}
	if cfg.codecs == nil {
		cfg.codecs = NewCodecs()
	}
	n := &Node{
		sys: sys, name: name, cluster: cfg.cluster, prefix: "loom." + cfg.cluster + ".",
		codecs: cfg.codecs, heartbeat: cfg.heartbeat, failAfter: cfg.failAfter, maxPending: cfg.maxPending,
		peers: make(map[string]*peer), downed: make(map[uint64]struct{}), names: make(map[string]actor.Ref),
		kinds: make(map[string]actor.Props), asks: make(map[uint64]*pendingAsk),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), left: make(chan struct{}), local: make(map[string]actor.Ref),
	}
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("join %q: %w", name, err)
	}
	n.instance = binary.LittleEndian.Uint64(seed[:]) | 1 // never 0, which means unknown
	n.header = appendHeader(nil, name, n.instance)

	n.nc = cfg.conn
	if n.nc == nil {
		url := cfg.url
		if url == "" {
			url = os.Getenv(EnvURL)
		}
		if url == "" {
			url = nats.DefaultURL
		}
		nc, err := nats.Connect(url, nats.Name("loom "+cfg.cluster+"/"+name), nats.MaxReconnects(-1),
			nats.ReconnectWait(250*time.Millisecond), nats.ReconnectJitter(100*time.Millisecond, time.Second),
			nats.ErrorHandler(n.onAsyncError))
		if err != nil {
			return nil, fmt.Errorf("join %q: connect %s: %w", name, url, err)
		}
		n.nc, n.ownConn = nc, true
	}
	n.maxBatch = min(int(n.nc.MaxPayload()), 1<<20)
	if err := n.subscribe(); err != nil {
		n.unsubscribe()
		if n.ownConn {
			n.nc.Close()
		}
		return nil, fmt.Errorf("join %q: %w", name, err)
	}
	n.cancelDL = sys.SubscribeDeadLetters(n.onDeadLetter)
	n.echoed.Store(time.Now().UnixNano())
	n.beat(beatHello)
	n.wg.Add(2)
	go n.monitor()
	go n.deliverEvents()
	return n, nil
}

// onAsyncError counts what the NATS client reports on its own: the
// errors of a connection it reconnects are the Node's status, not news.
func (n *Node) onAsyncError(_ *nats.Conn, _ *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrSlowConsumer) {
		n.slow.Add(1)
	}
}

func validName(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func (n *Node) subscribe() error {
	for _, s := range []struct {
		subject string
		handler nats.MsgHandler
	}{
		{n.prefix + "n." + n.name, n.onBatch},
		{n.prefix + "hb", n.onHeartbeat},
		{n.prefix + "ctl." + n.name, n.onControl},
		{n.prefix + "lookup", n.onLookup},
	} {
		sub, err := n.nc.Subscribe(s.subject, s.handler)
		if err != nil {
			return fmt.Errorf("subscribe %s: %w", s.subject, err)
		}
		n.subs = append(n.subs, sub)
	}
	return n.nc.Flush()
}

func (n *Node) unsubscribe() {
	for _, s := range n.subs {
		_ = s.Unsubscribe()
	}
}

// Name returns the node's name.
func (n *Node) Name() string { return n.name }

// System returns the node's actor system.
func (n *Node) System() *actor.System { return n.sys }

// Cluster returns the name of the node's cluster.
func (n *Node) Cluster() string { return n.cluster }

// Codecs returns the node's codec registry (WithCodecs).
func (n *Node) Codecs() *Codecs { return n.codecs }

// Conn returns the node's NATS connection.
func (n *Node) Conn() *nats.Conn { return n.nc }

// Stats returns the node's counters.
func (n *Node) Stats() Stats {
	s := Stats{
		BatchesSent: n.batchesOut.Load(), BatchesReceived: n.batchesIn.Load(), FramesReceived: n.framesIn.Load(),
		Malformed: n.malformed.Load(), Stale: n.stale.Load(), SlowConsumer: n.slow.Load(),
	}
	if len(n.subs) > 0 {
		if d, err := n.subs[0].Dropped(); err == nil {
			s.Dropped = uint64(d)
		}
	}
	return s
}

// Ref returns a Ref to the actor at path on node. It does not check that
// the actor exists: what is sent to a missing actor goes to dead letters on
// its node, and an Ask fails with its reason. For this node's own name it
// returns the local actor, the zero Ref if there is none. What is sent to
// a node not yet heard from is held (within WithMaxPending) until it joins;
// a node that does not join within the failure bound is declared down, and
// what was held goes to dead letters with ErrNodeDown.
func (n *Node) Ref(node, path string) actor.Ref {
	if node == n.name {
		r, _ := n.sys.Lookup(path)
		return r
	}
	p := n.peerNamed(node)
	if p == nil {
		return actor.Ref{}
	}
	return p.proxy(path).ref
}

// Leave announces that the node leaves, publishes what is queued for other
// nodes, stops its goroutines and, unless WithConn gave it, closes its
// connection. Other nodes see it Left at once: their watchers of its actors
// get Terminated with ErrNodeLeft. Stop the System first when its actors'
// own Terminated should reach remote watchers.
//
// Leave returns by ctx's end whatever the connection does, with ctx's
// error when it ends first. A publish stuck on a stalled server holds the
// NATS connection until the connection's write timeout (nats.FlusherTimeout,
// one minute by default) or the server reads again; the node's goroutines
// then end on their own, its own connection closed. A later call to Leave
// waits for that, bounded by its ctx.
func (n *Node) Leave(ctx context.Context) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		select {
		case <-n.left:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("leave: wait for the node's goroutines: %w", ctx.Err())
		}
	}
	n.closed = true
	peers := make([]*peer, 0, len(n.peers))
	for _, p := range n.peers {
		peers = append(peers, p)
	}
	n.mu.Unlock()

	// Every call on the connection may wait for a stuck publish, which
	// holds the connection's lock: the teardown runs on its own goroutine,
	// which n.left reports the end of.
	errc := make(chan error, 1)
	go func() {
		defer close(n.left)
		errc <- n.leave(ctx)
	}()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		err = fmt.Errorf("leave: %w (a publish is stuck; the node's goroutines end when it returns)", ctx.Err())
	}
	for _, p := range peers {
		n.remove(p, ErrClosed, 0)
	}
	return err
}

// leave says goodbye, publishes what is queued, stops the node's goroutines
// and drains its subscriptions (its connection, if its own).
func (n *Node) leave(ctx context.Context) error {
	n.beat(beatLeaving)
	close(n.stop)
	var errs []error
	// The flushers publish what they hold, then return; a publish stuck on
	// a stalled server ends when its own connection closes.
	waited := make(chan struct{})
	go func() { n.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("leave: publish what was queued: %w", ctx.Err()))
		if n.ownConn {
			n.nc.Close()
		}
		<-waited
	}
	// A flush while reconnecting would wait for ctx's end; the drain below
	// reports the state instead.
	if n.nc.IsConnected() {
		if err := n.nc.FlushWithContext(ctx); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, fmt.Errorf("leave: flush: %w", err))
		}
	}
	n.cancelDL()
	if n.ownConn {
		errs = append(errs, n.drainConn(ctx))
	} else {
		errs = append(errs, n.drainSubs(ctx))
	}
	return errors.Join(errs...)
}

// drainConn drains and closes the node's own connection, waiting until its
// subscriptions' handlers have returned.
func (n *Node) drainConn(ctx context.Context) error {
	closed := make(chan struct{})
	n.nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := n.nc.Drain(); err != nil {
		n.nc.Close()
		if errors.Is(err, nats.ErrConnectionClosed) {
			return nil // closed above when ctx ended
		}
		return fmt.Errorf("leave: drain: %w", err)
	}
	select {
	case <-closed:
		return nil
	case <-ctx.Done():
		n.nc.Close()
		return fmt.Errorf("leave: drain: %w", ctx.Err())
	}
}

// drainSubs drains the node's subscriptions on a connection it does not own.
func (n *Node) drainSubs(ctx context.Context) error {
	for _, s := range n.subs {
		_ = s.Drain()
	}
	for _, s := range n.subs {
		for s.IsValid() {
			select {
			case <-ctx.Done():
				n.unsubscribe()
				return fmt.Errorf("leave: drain: %w", ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return nil
}
