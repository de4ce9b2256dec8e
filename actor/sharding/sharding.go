package sharding

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/remote"
)

// Defaults of the options.
const (
	DefaultShards         = 128
	DefaultLeaseTTL       = 6 * time.Second
	DefaultBufferSize     = 10000
	DefaultBufferTimeout  = 30 * time.Second
	DefaultHandoffTimeout = 10 * time.Second
)

// maxHops bounds how many times one message is forwarded between nodes
// while its shard moves.
const maxHops = 4

// maxWrites bounds the bucket writes (renewals, takes) under way at once.
const maxWrites = 16

// maxRegions bounds the region Refs a node keeps.
const maxRegions = 1024

// regionName is the name of the actor that receives a node's envelopes.
const regionName = "loom-sharding"

// A Kind is an entity kind a node hosts: how to make the behaviour of the
// entity with a given id, and how to run and supervise it.
type Kind struct {
	// Name is the kind's name: letters, digits, '-' and '_'.
	Name string
	// New returns a fresh behaviour for the entity id: called at each
	// activation and at each restart. A panic here, or in the behaviour's
	// Started (and a Persistent's Load error), is a failure that
	// Supervisor decides about.
	New func(id string) actor.Actor
	// Dispatcher names the node's dispatcher that runs the entities; ""
	// is actor.DefaultDispatcher.
	Dispatcher string
	// Supervisor decides what happens when an entity fails; the zero value
	// stops it, and the next message once it has stopped activates it
	// afresh (messages that reach it while it stops are dead letters).
	Supervisor actor.Supervisor
	// PassivateAfter stops an entity idle that long (no message delivered
	// to it), checked every quarter of it (at least every control tick):
	// an idle entity stops within 1.25 times PassivateAfter plus a tick.
	// The next message activates it again. 0 never passivates.
	PassivateAfter time.Duration
}

// Persistent is implemented by an entity behaviour that keeps its state
// outside the process: Load runs at activation, before the behaviour
// receives actor.Started, and Save once the behaviour has handled
// actor.Stopping on a stop while the shard's lease is held (passivation,
// handoff, Close, a supervisor's stop). Save's context ends when the lease
// is lost or its deadline passes, 10 s at most. On a fence (the lease
// lapsed or another node wrote it) the behaviour hears neither Stopping
// nor Save, only actor.Stopped: another node may have loaded the entity.
// FencingToken, read from the context Load and Save receive, lets a store
// refuse a late Save of an activation whose shard has moved since.
// A Load error is a failure the kind's Supervisor decides about; a Save
// error is logged.
type Persistent interface {
	Load(ctx context.Context, id string) error
	Save(ctx context.Context, id string) error
}

// An Option configures Start.
type Option func(*config)

type config struct {
	kinds         []Kind
	shards        int
	ttl           time.Duration
	bufferSize    int
	bufferTimeout time.Duration
	handoff       time.Duration
	bucket        string
}

// WithKind makes the node host entities of k. A node with no kind hosts no
// shard: it only sends to entities.
func WithKind(k Kind) Option { return func(c *config) { c.kinds = append(c.kinds, k) } }

// WithShards sets the number of shards each kind's ids are hashed into
// (DefaultShards). Every node of the cluster must use the same number.
func WithShards(n int) Option { return func(c *config) { c.shards = n } }

// WithLeaseTTL sets how long a shard lease lasts unrenewed (DefaultLeaseTTL).
// An owner renews every TTL/6; once TTL/2 has passed since its last
// successful renewal was sent, the shard's entities handle no more
// messages and are killed without Save; another node takes
// the shard once it has seen the lease unrenewed for the whole TTL. Every
// node of the cluster must use the same TTL. At least 300 ms.
func WithLeaseTTL(ttl time.Duration) Option { return func(c *config) { c.ttl = ttl } }

// WithBuffer bounds the messages a node holds for one shard that has no
// owner it can reach (a shard moving or being taken over), for one shard of
// its own while the shard's entities stop, and for one entity while it
// passivates, and how long each message waits there (checked every control
// tick): past either, a message goes to dead letters with ErrBufferFull or
// ErrUnavailable, and its Ask fails. Defaults: DefaultBufferSize,
// DefaultBufferTimeout.
func WithBuffer(size int, timeout time.Duration) Option {
	return func(c *config) { c.bufferSize, c.bufferTimeout = size, timeout }
}

// WithHandoffTimeout bounds how long a shard's entities may take to stop
// for a handoff or Close (DefaultHandoffTimeout): past it, the shard is
// fenced (its entities hear neither Stopping nor Save, and are killed after
// their current message, what is queued to them a dead letter with
// ErrLeaseLapsed) and its lease released once they have stopped; the
// messages waiting for the shard go on to its next owner. An entity whose
// current message never ends keeps the lease from being released: it
// lapses, and another node takes the shard a TTL later. At least 100 ms.
func WithHandoffTimeout(d time.Duration) Option { return func(c *config) { c.handoff = d } }

// WithBucket names the JetStream key-value bucket of the leases; the
// default is "loom-shards-<cluster>".
func WithBucket(name string) Option { return func(c *config) { c.bucket = name } }

// Sharding places the entities of a cluster's kinds on its hosting nodes,
// one activation per entity at a time. It is safe for concurrent use. Its
// goroutines are gone when Close returns.
type Sharding struct {
	node     *remote.Node
	sys      *actor.System
	name     string
	instance string
	kv       jetstream.KeyValue
	shards   int
	ttl      time.Duration
	renew    time.Duration
	valid    time.Duration // how long past a renewal's send the owner trusts its lease
	tick     time.Duration
	bufSize  int
	bufWait  time.Duration
	// handoffWait: how long a stopping shard may take (WithHandoffTimeout)
	handoffWait time.Duration
	kinds       map[string]*Kind
	region      actor.Ref
	done        chan struct{} // closed by Close

	mu     sync.Mutex
	leases map[shardKey]*leaseView
	hosts  map[string]map[string]bool // node → kinds it hosts
	owned  map[shardKey]*shard
	taking map[shardKey]bool // writes under way to take these
	// refreshing: reads under way of these leases
	refreshing map[shardKey]bool
	pending    map[shardKey][]delivery
	changed    chan struct{} // closed and replaced when a lease changes
	synced     time.Time     // when the watcher delivered the bucket's initial values
	members    map[string]bool
	regions    map[string]actor.Ref // node → its region actor (regionOfLocked)
	closed     bool
	demoted    bool // the cluster declared this node down: it hosts no more
	// finished: Close has returned; what is routed now is dead.
	finished bool

	cancelMembers func()

	fences   atomic.Uint64
	handoffs atomic.Uint64

	stop    chan struct{}
	writes  chan struct{} // a token per bucket write under way (async)
	wg      sync.WaitGroup
	watcher jetstream.KeyWatcher
}

type shardKey struct {
	kind  string
	shard int
}

func (k shardKey) key() string { return "lease." + k.kind + "." + strconv.Itoa(k.shard) }

// leaseRecord is a lease's value in the bucket.
type leaseRecord struct {
	Owner    string `json:"owner"`
	Instance string `json:"instance"`
	Released bool   `json:"released,omitempty"`
}

// leaseView is what this node last saw of a lease.
type leaseView struct {
	rev    uint64 // 0: absent
	rec    leaseRecord
	seenAt time.Time // when this node first saw rev
	absent bool      // deleted
}

// Start begins sharding on n: it opens (or creates) the lease bucket,
// registers the node as a host of its kinds (WithKind), and returns once
// it has read the bucket. Close it before the Node leaves. Errors:
// ErrNoJetStream when the server has no JetStream, ErrInvalid for a bad
// option or kind.
func Start(n *remote.Node, opts ...Option) (*Sharding, error) {
	cfg := config{shards: DefaultShards, ttl: DefaultLeaseTTL, bufferSize: DefaultBufferSize, bufferTimeout: DefaultBufferTimeout, handoff: DefaultHandoffTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	if n == nil {
		return nil, fmt.Errorf("start: %w: nil Node", ErrInvalid)
	}
	if cfg.bucket == "" {
		cfg.bucket = "loom-shards-" + n.Cluster()
	}
	switch {
	case cfg.shards < 1 || cfg.shards > 1<<16:
		return nil, fmt.Errorf("start: %w: %d shards, want 1 to 65536", ErrInvalid, cfg.shards)
	case cfg.ttl < 300*time.Millisecond:
		return nil, fmt.Errorf("start: %w: lease TTL %v under 300ms", ErrInvalid, cfg.ttl)
	case cfg.bufferSize < 0 || cfg.bufferTimeout <= 0:
		return nil, fmt.Errorf("start: %w: buffer of %d for %v", ErrInvalid, cfg.bufferSize, cfg.bufferTimeout)
	case cfg.handoff < 100*time.Millisecond:
		return nil, fmt.Errorf("start: %w: handoff timeout %v under 100ms", ErrInvalid, cfg.handoff)
	case !validName(cfg.bucket):
		return nil, fmt.Errorf("start: %w: bucket name %q: letters, digits, '-' and '_'", ErrInvalid, cfg.bucket)
	}
	s := &Sharding{
		node: n, sys: n.System(), name: n.Name(), shards: cfg.shards,
		ttl: cfg.ttl, renew: cfg.ttl / 6, valid: cfg.ttl / 2, tick: min(cfg.ttl/12, 250*time.Millisecond),
		bufSize: cfg.bufferSize, bufWait: cfg.bufferTimeout, handoffWait: cfg.handoff, kinds: make(map[string]*Kind),
		done: make(chan struct{}), leases: make(map[shardKey]*leaseView), hosts: make(map[string]map[string]bool),
		owned: make(map[shardKey]*shard), pending: make(map[shardKey][]delivery), changed: make(chan struct{}),
		stop: make(chan struct{}), writes: make(chan struct{}, maxWrites), taking: make(map[shardKey]bool),
		refreshing: make(map[shardKey]bool), regions: make(map[string]actor.Ref),
	}
	for i := range cfg.kinds {
		k := cfg.kinds[i]
		switch {
		case !validName(k.Name):
			return nil, fmt.Errorf("start: %w: kind name %q: letters, digits, '-' and '_'", ErrInvalid, k.Name)
		case k.New == nil:
			return nil, fmt.Errorf("start: kind %s: %w: New is nil", k.Name, ErrInvalid)
		case k.PassivateAfter < 0:
			return nil, fmt.Errorf("start: kind %s: %w: negative PassivateAfter", k.Name, ErrInvalid)
		case s.kinds[k.Name] != nil:
			return nil, fmt.Errorf("start: %w: kind %s given twice", ErrInvalid, k.Name)
		}
		s.kinds[k.Name] = &k
	}
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	s.instance = hex.EncodeToString(seed[:])
	if err := registerCodec(n.Codecs()); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(n.Conn())
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	s.kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: cfg.bucket, History: 1, Description: "loom shard leases"})
	if err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) ||
			errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) {
			return nil, fmt.Errorf("start on %s: %w: %v", n.Conn().ConnectedUrlRedacted(), ErrNoJetStream, err)
		}
		return nil, fmt.Errorf("start: open bucket %s: %w", cfg.bucket, err)
	}
	if err := s.watch(ctx); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	s.region, err = s.sys.Spawn(actor.Props{Name: regionName, New: func() actor.Actor { return actor.ReceiveFunc(s.receive) }})
	if err != nil {
		s.abort()
		return nil, fmt.Errorf("start: %w", err)
	}
	if len(s.kinds) > 0 {
		names := make([]string, 0, len(s.kinds))
		for k := range s.kinds {
			names = append(names, k)
		}
		rec, _ := json.Marshal(hostRecord{Kinds: names})
		if _, err := s.kv.Put(ctx, "host."+s.name, rec); err != nil {
			s.region.Stop()
			s.abort()
			return nil, fmt.Errorf("start: register host: %w", err)
		}
	}
	s.wg.Add(1)
	go s.control()
	return s, nil
}

// abort stops what watch started, for a Start that fails after it.
func (s *Sharding) abort() {
	close(s.stop)
	s.wg.Wait()
	s.stopWatch()
}

// hostRecord is a hosting node's entry in the bucket.
type hostRecord struct {
	Kinds []string `json:"kinds"`
}

func validName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// ShardOf returns the shard of id among n shards: FNV-1a of id, its bits
// mixed by murmur3's finalizer, modulo n.
func ShardOf(id string, n int) int {
	return int(mix(fnv64a(id)) % uint64(n))
}

// fnv64a is FNV-1a of s, as hash/fnv computes it, without its allocations:
// every message's shard is computed on the sending node and on the owner.
func fnv64a(s string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// Entity returns a Ref to the entity id of kind: Tell, Send, Ask and
// actor.Ask work on it as on any Ref, wherever the entity is active, and
// the first message activates it. Stop, Kill and Watch do nothing: an entity
// stops by itself (passivation, its shard moving). Errors: ErrInvalid for
// an empty id, ErrUnknownKind for a kind no hosting node registered.
func (s *Sharding) Entity(kind, id string) (actor.Ref, error) {
	if err := s.check(kind, id); err != nil {
		return actor.Ref{}, err
	}
	return s.sys.RemoteRef(kind+"/"+id, &entityRemote{s: s, kind: kind, id: id}), nil
}

// Tell sends msg to the entity id of kind. A bad kind or id, like any
// message that cannot be delivered, goes to dead letters with the reason.
func (s *Sharding) Tell(kind, id string, msg any) {
	if err := s.check(kind, id); err != nil {
		s.sys.Undelivered(actor.DeadLetter{Message: msg, Reason: err})
		return
	}
	if err := s.send(context.Background(), &envelope{Kind: kind, ID: id, Msg: msg}, actor.Ref{}); err != nil {
		s.sys.Undelivered(actor.DeadLetter{Message: msg, Reason: err})
	}
}

// Ask sends msg to the entity id of kind and waits for its reply, as
// Ref.Ask does.
func (s *Sharding) Ask(ctx context.Context, kind, id string, msg any) (any, error) {
	if err := s.check(kind, id); err != nil {
		return nil, err
	}
	return s.ask(ctx, &envelope{Kind: kind, ID: id, Msg: msg})
}

func (s *Sharding) check(kind, id string) error {
	if id == "" {
		return fmt.Errorf("entity of kind %q: %w: empty id", kind, ErrInvalid)
	}
	if s.kinds[kind] != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, kinds := range s.hosts {
		if kinds[kind] {
			return nil
		}
	}
	return fmt.Errorf("entity %s/%s: %w %q: no hosting node registered it", kind, id, ErrUnknownKind, kind)
}

// entityRemote is the actor.Remote behind an entity's Ref.
type entityRemote struct {
	s        *Sharding
	kind, id string
}

func (e *entityRemote) Node() string { return "sharding" }

func (e *entityRemote) Send(ctx context.Context, msg any, sender actor.Ref) error {
	return e.s.send(ctx, &envelope{Kind: e.kind, ID: e.id, Msg: msg}, sender)
}

func (e *entityRemote) Ask(ctx context.Context, msg any) (any, error) {
	return e.s.ask(ctx, &envelope{Kind: e.kind, ID: e.id, Msg: msg})
}

func (e *entityRemote) Signal(actor.Signal, actor.Ref) {}

func (e *entityRemote) Done() <-chan struct{} { return e.s.done }

// Close hands this node's shards off: it leaves the hosts, stops the
// shards' entities (each handles what was queued to it first, then saves),
// releases the leases so that other hosts take the shards at once, and
// passes on what waited here once their new owners are seen. What cannot
// be passed on (no other host of its kind, or ctx's end) goes to dead
// letters with ErrClosed. Close it before the Node leaves. Removing the
// host from the bucket gets a lease renewal's time (TTL/6) of ctx. When ctx
// ends first, the shards still stopping are fenced: their entities are
// killed after their current message, a Save under way sees its context
// end, Close returns once those messages end, and the leases not yet
// released expire after the TTL.
func (s *Sharding) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true // no more takes; this node is nobody's desired owner
	s.mu.Unlock()

	var errs []error
	if len(s.kinds) > 0 {
		// Bounded apart: a server that does not answer must not take the
		// whole of ctx from the handoff.
		dctx, dcancel := context.WithTimeout(ctx, s.renew)
		if err := s.kv.Delete(dctx, "host."+s.name); err != nil {
			errs = append(errs, fmt.Errorf("close: remove host: %w", err))
		}
		dcancel()
	}
	t := time.NewTicker(s.tick)
	defer t.Stop()
	for {
		s.mu.Lock()
		for _, sh := range s.owned {
			s.beginStop(sh, false)
		}
		busy := len(s.owned) > 0
		for k := range s.pending {
			if s.desiredLocked(k) != "" {
				busy = true // another host will take it: wait to pass its messages on
			}
		}
		s.mu.Unlock()
		if !busy {
			break
		}
		select {
		case <-t.C:
			continue
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("close: hand off: %w", ctx.Err()))
			s.mu.Lock()
			for _, sh := range s.owned {
				s.beginStop(sh, true) // kill what still runs: its leases will expire
			}
			s.mu.Unlock()
		}
		break
	}
	close(s.stop)
	waited := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(waited)
	}()
	select {
	case <-waited:
	case <-ctx.Done():
		s.mu.Lock()
		for _, sh := range s.owned {
			s.fenceLocked(sh)
		}
		s.mu.Unlock()
		<-waited
	}
	s.stopWatch()
	s.mu.Lock()
	var dead []delivery
	for _, sh := range s.owned {
		dead = append(dead, sh.buffer...)
	}
	for _, q := range s.pending {
		dead = append(dead, q...)
	}
	s.owned, s.pending = map[shardKey]*shard{}, map[shardKey][]delivery{}
	s.finished = true
	s.mu.Unlock()
	for _, d := range dead {
		s.undeliverable(d, ErrClosed)
	}
	s.region.Stop()
	close(s.done)
	return errors.Join(errs...)
}

func (s *Sharding) record(released bool) []byte {
	b, _ := json.Marshal(leaseRecord{Owner: s.name, Instance: s.instance, Released: released})
	return b
}

// Stats is a snapshot of a node's part of the cluster's sharding.
type Stats struct {
	Shards   int // shards this node owns
	Entities int // activations on this node
	Pending  int // messages waiting for their shard to have an owner
	// Fenced counts the shards whose entities this node stopped because
	// it could not renew their leases in time, or found them taken, or
	// whose handoff outlasted the handoff timeout (WithHandoffTimeout).
	Fenced uint64
	// HandedOff counts the shards this node stopped to hand them off.
	HandedOff uint64
}

// Stats returns the node's counts.
func (s *Sharding) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Fenced: s.fences.Load(), HandedOff: s.handoffs.Load()}
	for _, sh := range s.owned {
		if sh.state == active {
			st.Shards++
		}
		st.Entities += len(sh.entities)
	}
	for _, q := range s.pending {
		st.Pending += len(q)
	}
	return st
}

// Owners returns the owner of each shard of kind, as this node sees the
// leases: "" for a shard with no owner.
func (s *Sharding) Owners(kind string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, s.shards)
	for i := range out {
		if v := s.leases[shardKey{kind, i}]; v != nil && v.rev != 0 && !v.rec.Released {
			out[i] = v.rec.Owner
		}
	}
	return out
}
