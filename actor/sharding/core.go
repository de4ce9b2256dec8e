package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/remote"
)

type shardState int

const (
	active   shardState = iota
	stopping            // handing off or fencing: its entities stop, messages wait
)

// shard is a shard this node holds the lease of.
type shard struct {
	key      shardKey
	rev      uint64      // the lease's revision this node wrote last
	sentAt   time.Time   // when the write of rev was sent: the lease is trusted until sentAt+valid
	lease    *leaseClock // sentAt+valid for the entities, which check it before each message
	state    shardState
	fenced   bool      // stopping because the lease lapsed or was lost: not released
	overdue  bool      // fenced because its handoff outlasted the handoff timeout: released once stopped
	since    time.Time // when it began stopping
	waiters  int       // messages in its entities' waiting lists
	renewing bool
	swept    time.Time // when passivateLocked last looked at the entities
	entities map[string]*entity
	buffer   []delivery    // messages that came while stopping
	stopped  chan struct{} // closed once a stopping shard's entities have stopped
}

// entity is one activation.
type entity struct {
	ref      actor.Ref
	last     time.Time // last delivery
	stopping bool      // passivating
	waiting  []delivery
}

// delivery is a message on its way to an entity.
type delivery struct {
	env    *envelope
	sender actor.Ref
	ctx    context.Context
	at     time.Time // when this node first held it
}

// dropped is a delivery that goes to dead letters.
type dropped struct {
	d   delivery
	err error
}

// watch opens the bucket's watcher, reads its initial values and starts
// the goroutines that follow it and track members.
func (s *Sharding) watch(ctx context.Context) error {
	w, err := s.kv.WatchAll(context.Background())
	if err != nil {
		return fmt.Errorf("watch bucket: %w", err)
	}
	for initial := true; initial; {
		select {
		case e := <-w.Updates():
			if e == nil {
				initial = false
			} else {
				s.apply(e)
			}
		case <-ctx.Done():
			_ = w.Stop()
			return fmt.Errorf("watch bucket: %w", ctx.Err())
		}
	}
	s.watcher = w
	// The map exists before the subscription: onMember writes to it.
	s.mu.Lock()
	s.members = make(map[string]bool)
	s.mu.Unlock()
	cancel := s.node.SubscribeMembers(s.onMember)
	s.mu.Lock()
	s.synced = time.Now()
	for _, m := range s.node.Members() {
		s.members[m] = true
	}
	s.cancelMembers = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go s.follow()
	return nil
}

// stopWatch stops what watch started, once Close has stopped follow.
func (s *Sharding) stopWatch() {
	if s.cancelMembers != nil {
		s.cancelMembers()
	}
	if s.watcher != nil {
		_ = s.watcher.Stop()
	}
}

// follow applies the bucket's updates, and opens the watcher again after
// the connection came back: the lease views must not go stale.
func (s *Sharding) follow() {
	defer s.wg.Done()
	nc := s.node.Conn()
	reconnects := nc.Stats().Reconnects
	t := time.NewTicker(s.tick)
	defer t.Stop()
	updates := s.watcher.Updates()
	for {
		select {
		case <-s.stop:
			return
		case e, ok := <-updates:
			if !ok {
				updates = nil
				reconnects = ^uint64(0) // open it again
				continue
			}
			if e != nil {
				s.apply(e)
			}
		case <-t.C:
			r := nc.Stats().Reconnects
			if r == reconnects || nc.Status() != nats.CONNECTED {
				continue
			}
			w, err := s.kv.WatchAll(context.Background())
			if err != nil {
				continue
			}
			_ = s.watcher.Stop()
			s.mu.Lock()
			s.watcher = w
			s.mu.Unlock()
			reconnects, updates = r, w.Updates()
		}
	}
}

func (s *Sharding) onMember(e remote.MemberEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Kind == remote.Joined {
		s.members[e.Node] = true
	} else {
		delete(s.members, e.Node)
	}
	if e.Kind == remote.Down && errors.Is(e.Reason, remote.ErrDeclaredDown) && !s.demoted && !s.closed {
		// The cluster declared this node down and will not route to it
		// again: it hands its shards off and hosts no more, or they
		// would stay here, renewed and unreachable.
		s.demoted = true
		if len(s.kinds) > 0 {
			s.async(func() {
				ctx, cancel := context.WithTimeout(context.Background(), s.renew)
				defer cancel()
				_ = s.kv.Delete(ctx, "host."+s.name)
			})
		}
	}
	s.broadcast()
}

// broadcast wakes the Asks waiting for a route; the caller holds s.mu.
func (s *Sharding) broadcast() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// apply takes in one update of the bucket.
func (s *Sharding) apply(e jetstream.KeyValueEntry) {
	key := e.Key()
	put := e.Operation() == jetstream.KeyValuePut
	if node, ok := strings.CutPrefix(key, "host."); ok {
		var rec hostRecord
		s.mu.Lock()
		defer s.mu.Unlock()
		if put && json.Unmarshal(e.Value(), &rec) == nil {
			kinds := make(map[string]bool, len(rec.Kinds))
			for _, k := range rec.Kinds {
				kinds[k] = true
			}
			s.hosts[node] = kinds
		} else {
			delete(s.hosts, node)
		}
		s.broadcast()
		return
	}
	k, ok := parseLeaseKey(key)
	if !ok {
		return
	}
	var rec leaseRecord
	if put && json.Unmarshal(e.Value(), &rec) != nil {
		rec = leaseRecord{} // not a lease this package wrote: nobody's
	}
	var flush []delivery
	s.mu.Lock()
	v := s.leases[k]
	if v == nil {
		v = &leaseView{}
		s.leases[k] = v
	}
	if e.Revision() <= v.rev {
		s.mu.Unlock()
		return // seen, or older than what was seen
	}
	v.rev, v.rec, v.seenAt, v.absent = e.Revision(), rec, time.Now(), !put
	if sh := s.owned[k]; sh != nil && sh.rev != v.rev && (!put || rec.Instance != s.instance) {
		// Someone else wrote the lease: this node lost it.
		s.fenceLocked(sh)
	}
	if s.owned[k] == nil && s.ownerLocked(k) != "" {
		flush = s.pending[k]
		delete(s.pending, k)
	}
	s.broadcast()
	s.mu.Unlock()
	for _, d := range flush {
		s.route(d)
	}
}

func parseLeaseKey(key string) (shardKey, bool) {
	rest, ok := strings.CutPrefix(key, "lease.")
	if !ok {
		return shardKey{}, false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return shardKey{}, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil {
		return shardKey{}, false
	}
	return shardKey{kind: rest[:i], shard: n}, true
}

// ownerLocked returns the live node other than this one that holds k's
// lease, "" if none; the caller holds s.mu.
func (s *Sharding) ownerLocked(k shardKey) string {
	v := s.leases[k]
	if v == nil || v.absent || v.rev == 0 || v.rec.Released || v.rec.Owner == s.name || !s.members[v.rec.Owner] {
		return ""
	}
	return v.rec.Owner
}

// desiredLocked returns the node that should own k: of the live nodes
// hosting k's kind, the one with the highest hash of (node, kind, shard)
// (rendezvous hashing), so that every node that sees the same members
// agrees, and a node joining or leaving moves only the shards it wins or
// held. The caller holds s.mu.
func (s *Sharding) desiredLocked(k shardKey) string {
	best, bestHash := "", uint64(0)
	consider := func(node string) {
		if v := score(node, k); best == "" || v > bestHash || v == bestHash && node < best {
			best, bestHash = node, v
		}
	}
	if s.kinds[k.kind] != nil && !s.closed && !s.demoted {
		consider(s.name)
	}
	for node, kinds := range s.hosts {
		if node != s.name && kinds[k.kind] && s.members[node] {
			consider(node)
		}
	}
	return best
}

// receive is the region actor's behaviour: envelopes from other nodes,
// and this node's own Asks.
func (s *Sharding) receive(c *actor.Context, msg any) {
	if env, ok := msg.(*envelope); ok {
		s.route(delivery{env: env, sender: c.Sender(), ctx: c.Context(), at: time.Now()})
	}
}

// send routes a message sent on this node.
func (s *Sharding) send(ctx context.Context, env *envelope, sender actor.Ref) error {
	select {
	case <-s.done:
		return ErrClosed
	default:
	}
	s.route(delivery{env: env, sender: sender, ctx: ctx, at: time.Now()})
	return nil
}

// route delivers d to its entity if this node owns the shard, sends it on
// to the owner, or holds it until the shard has one.
func (s *Sharding) route(d delivery) {
	k := shardKey{d.env.Kind, ShardOf(d.env.ID, s.shards)}
	var drop []dropped
	s.mu.Lock()
	if sh := s.owned[k]; sh != nil {
		drop = s.deliverLocked(sh, d, drop)
		s.mu.Unlock()
		s.undeliverableAll(drop)
		return
	}
	owner := s.ownerLocked(k)
	if owner == "" {
		if s.finished {
			s.mu.Unlock()
			s.undeliverable(d, ErrClosed)
			return
		}
		if len(s.pending[k]) >= s.bufSize {
			s.mu.Unlock()
			s.undeliverable(d, fmt.Errorf("%w: shard %s holds %d", ErrBufferFull, k.key(), s.bufSize))
			return
		}
		s.pending[k] = append(s.pending[k], d)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if !d.sender.IsZero() && d.sender.Remote() == nil && strings.HasSuffix(d.sender.Path(), "/$ask") {
		// An Ask made on this node through its region, whose shard moved
		// meanwhile: no reply could find its way back from another node.
		s.undeliverable(d, fmt.Errorf("%w: shard %s moved to %s while the Ask was queued", ErrMoved, k.key(), owner))
		return
	}
	s.forward(owner, d)
}

// forward sends d to owner's region.
func (s *Sharding) forward(owner string, d delivery) {
	d.env.Hops++
	if d.env.Hops > maxHops {
		s.undeliverable(d, fmt.Errorf("%w: %d", ErrTooManyHops, maxHops))
		return
	}
	s.regionOf(owner).TellFrom(d.ctx, d.env, d.sender)
}

// regionOf returns the Ref of node's region actor.
func (s *Sharding) regionOf(node string) actor.Ref {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.regionOfLocked(node)
}

// regionOfLocked returns the Ref of node's region actor, kept while it
// lives: a new incarnation of the node gets a new one. The caller holds
// s.mu.
func (s *Sharding) regionOfLocked(node string) actor.Ref {
	if r, ok := s.regions[node]; ok && !isDone(r) {
		return r
	}
	r := s.node.Ref(node, "/"+regionName)
	if r.IsZero() {
		return r
	}
	if len(s.regions) >= maxRegions {
		clear(s.regions)
	}
	s.regions[node] = r
	return r
}

// deliverLocked hands d to its entity on shard sh, activating it, or
// keeps it while the entity or the shard stops. The caller holds s.mu.
func (s *Sharding) deliverLocked(sh *shard, d delivery, drop []dropped) []dropped {
	now := time.Now()
	if sh.state != active || now.Sub(sh.sentAt) >= s.valid {
		if len(sh.buffer) >= s.bufSize {
			return append(drop, dropped{d, fmt.Errorf("%w: shard %s holds %d", ErrBufferFull, sh.key.key(), s.bufSize)})
		}
		sh.buffer = append(sh.buffer, d)
		return drop
	}
	e := sh.entities[d.env.ID]
	if e != nil && !e.stopping && isDone(e.ref) {
		e = nil // stopped by its supervisor: activate afresh
	}
	if e == nil {
		k := s.kinds[sh.key.kind]
		id := d.env.ID
		ref, err := s.sys.Spawn(actor.Props{
			New:        func() actor.Actor { return newEntity(k, id, sh.lease) },
			Dispatcher: k.Dispatcher, Supervisor: k.Supervisor,
		})
		if err != nil {
			return append(drop, dropped{d, fmt.Errorf("activate %s/%s: %w", k.Name, id, err)})
		}
		e = &entity{ref: ref}
		sh.entities[id] = e
	}
	if e.stopping {
		if len(e.waiting) >= s.bufSize {
			return append(drop, dropped{d, fmt.Errorf("%w: entity %s/%s holds %d", ErrBufferFull, d.env.Kind, d.env.ID, s.bufSize)})
		}
		e.waiting = append(e.waiting, d)
		sh.waiters++
		return drop
	}
	e.last = now
	e.ref.TellFrom(d.ctx, d.env.Msg, d.sender)
	return drop
}

// score is node's rendezvous hash for k: of the nodes that may own k, the
// one with the highest score should.
func score(node string, k shardKey) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(node))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(k.kind))
	_, _ = h.Write([]byte{0, byte(k.shard >> 8), byte(k.shard)})
	return mix(h.Sum64())
}

// mix spreads the bits of an FNV hash, whose high bits barely depend on
// the first bytes hashed (murmur3's finalizer).
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func isDone(r actor.Ref) bool {
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}

func (s *Sharding) undeliverableAll(drop []dropped) {
	for _, x := range drop {
		s.undeliverable(x.d, x.err)
	}
}

// undeliverable sends d to dead letters; an Ask's sender learns why.
func (s *Sharding) undeliverable(d delivery, err error) {
	s.sys.Undelivered(actor.DeadLetter{Sender: d.sender, Message: d.env.Msg, Reason: fmt.Errorf("entity %s/%s: %w", d.env.Kind, d.env.ID, err)})
}

// fenceLocked stops sh's entities because its lease lapsed or another node
// wrote it: they handle no more messages and neither hear Stopping nor
// Save. The caller holds s.mu.
func (s *Sharding) fenceLocked(sh *shard) {
	sh.lease.lose()
	s.beginStop(sh, true)
}

// beginStop stops sh's entities: a handoff lets each handle what is queued
// to it (Stop), a fence kills them after their current message. Once all
// have stopped, shardStopped lets the shard go. The caller holds s.mu.
func (s *Sharding) beginStop(sh *shard, fence bool) {
	if sh.state == stopping {
		if fence && !sh.fenced {
			sh.fenced = true
			for _, e := range sh.entities {
				e.ref.Kill()
			}
		}
		return
	}
	sh.state, sh.fenced, sh.stopped, sh.since = stopping, fence, make(chan struct{}), time.Now()
	if fence {
		s.fences.Add(1)
	} else {
		s.handoffs.Add(1)
	}
	refs := make([]actor.Ref, 0, len(sh.entities))
	for _, e := range sh.entities {
		refs = append(refs, e.ref)
		if fence {
			e.ref.Kill()
		} else if !e.stopping {
			e.ref.Stop()
		}
		e.stopping = true
		sh.buffer = append(sh.buffer, e.waiting...)
		e.waiting = nil
	}
	sh.waiters = 0
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for _, r := range refs {
			<-r.Done()
		}
		s.shardStopped(sh)
	}()
}

// shardStopped lets go of sh once its entities have stopped: a handoff
// releases the lease, so that the next owner takes it at once.
func (s *Sharding) shardStopped(sh *shard) {
	s.mu.Lock()
	close(sh.stopped)
	if s.owned[sh.key] != sh {
		s.mu.Unlock()
		return
	}
	delete(s.owned, sh.key)
	// An overdue handoff's entities have stopped now: the lease, if still
	// this node's (the release is a compare-and-set), goes at once.
	release := !sh.fenced && sh.lease.held() || sh.overdue
	rev := sh.rev
	held := append(sh.buffer, s.pending[sh.key]...)
	sh.buffer = nil
	delete(s.pending, sh.key)
	s.mu.Unlock()
	if release {
		s.release(sh.key, rev)
	}
	for _, d := range held {
		s.route(d)
	}
}

// maxReleases bounds the writes of one release that a renewal in flight
// keeps moving the revision of.
const maxReleases = 3

// release writes k's lease released, on revision rev. A renewal sent
// before the shard stopped may land first and move the revision: while the
// lease's latest write is still this node's incarnation's, it writes again
// on that revision; once another node's write is there, the lease is not
// this node's to release.
func (s *Sharding) release(k shardKey, rev uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), s.renew)
	defer cancel()
	for range maxReleases {
		_, err := s.kv.Update(ctx, k.key(), s.record(true), rev)
		if !conflict(err) {
			return
		}
		e, err := s.kv.Get(ctx, k.key())
		if err != nil {
			return
		}
		var rec leaseRecord
		if json.Unmarshal(e.Value(), &rec) != nil || rec.Instance != s.instance || rec.Released {
			return
		}
		rev = e.Revision()
	}
}

// conflict reports whether err is a compare-and-set write's failure
// because the key's revision moved: Update's ErrKeyRevisionMismatch
// (whatever code the stream reports it with, replicated or not), or
// Create's ErrKeyExists.
func conflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)
}

// entityStopped ends a passivated activation, and activates the entity
// again for what came meanwhile.
func (s *Sharding) entityStopped(k shardKey, id string, e *entity) {
	s.mu.Lock()
	sh := s.owned[k]
	if sh == nil || sh.entities[id] != e || sh.state != active {
		s.mu.Unlock()
		return // the shard's stop took it over
	}
	delete(sh.entities, id)
	waiting := e.waiting
	e.waiting = nil
	sh.waiters -= len(waiting)
	s.mu.Unlock()
	for _, d := range waiting {
		s.route(d)
	}
}

// control renews, takes, hands off and fences leases, passivates idle
// entities and expires what waits too long, every tick.
func (s *Sharding) control() {
	defer s.wg.Done()
	t := time.NewTicker(s.tick)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.step()
	}
}

type take struct {
	k      shardKey
	rev    uint64
	create bool
}

func (s *Sharding) step() {
	now := time.Now()
	var renew []*shard
	var takes []take
	var drop []dropped
	var flush []delivery
	var stale []shardKey
	s.mu.Lock()
	for k, sh := range s.owned {
		if now.Sub(sh.sentAt) >= s.valid {
			s.fenceLocked(sh) // self-fence: the lease may be taken soon
			continue
		}
		if !sh.renewing && !sh.fenced && now.Sub(sh.sentAt) >= s.renew {
			// Renewed while its entities stop for a handoff too: a slow
			// stop must not turn the release into an expiry.
			sh.renewing = true
			renew = append(renew, sh)
		}
		drop = s.expireLocked(sh, now, drop)
		if sh.state != active {
			if !sh.fenced && now.Sub(sh.since) >= s.handoffWait {
				// A handoff pinned by an entity that does not stop (a
				// blocked handler or Save, a deep mailbox): fence the
				// shard, so that no Save runs and the rest is killed
				// after its current message, and release it once its
				// entities have stopped.
				s.fences.Add(1)
				sh.overdue = true
				sh.lease.lose()
				s.beginStop(sh, true)
			}
			continue
		}
		if d := s.desiredLocked(k); s.demoted || d != s.name && d != "" && s.hosts[d][k.kind] {
			s.beginStop(sh, false) // hand off
			continue
		}
		s.passivateLocked(sh, now)
	}
	for name := range s.kinds {
		for i := range s.shards {
			k := shardKey{name, i}
			if s.owned[k] != nil || s.taking[k] || s.desiredLocked(k) != s.name {
				continue
			}
			v := s.leases[k]
			switch {
			case v == nil || v.rev == 0:
				if now.Sub(s.synced) >= s.ttl {
					takes = append(takes, take{k: k, create: true})
				}
			case v.absent:
				if now.Sub(v.seenAt) >= s.ttl {
					takes = append(takes, take{k: k, create: true})
				}
			case v.rec.Released, v.rec.Instance == s.instance, now.Sub(v.seenAt) >= s.ttl:
				takes = append(takes, take{k: k, rev: v.rev})
			}
		}
	}
	for _, t := range takes {
		s.taking[t.k] = true
	}
	for k, q := range s.pending {
		keep := q[:0]
		routable := s.owned[k] != nil || s.ownerLocked(k) != ""
		if !routable {
			stale = append(stale, k)
		}
		for _, d := range q {
			switch {
			case routable:
				flush = append(flush, d)
			case now.Sub(d.at) >= s.bufWait:
				drop = append(drop, dropped{d, fmt.Errorf("%w: shard %s for %v", ErrUnavailable, k.key(), s.bufWait)})
			default:
				keep = append(keep, d)
			}
		}
		if len(keep) == 0 {
			delete(s.pending, k)
		} else {
			s.pending[k] = keep
		}
	}
	s.mu.Unlock()

	s.undeliverableAll(drop)
	for _, k := range stale {
		s.refresh(k)
	}
	// Writes run on their own goroutines: a server that does not answer
	// must not hold up the next tick's fencing.
	for _, sh := range renew {
		s.async(func() { s.renewOne(sh) })
	}
	for _, t := range takes {
		s.async(func() { s.take(t) })
	}
	for _, d := range flush {
		s.route(d)
	}
}

// expireLocked moves to drop the messages that have waited on sh (while
// it stops) or on one of its entities (while it passivates) for the
// buffer timeout. The caller holds s.mu.
func (s *Sharding) expireLocked(sh *shard, now time.Time, drop []dropped) []dropped {
	if len(sh.buffer) > 0 {
		keep := sh.buffer[:0]
		for _, d := range sh.buffer {
			if now.Sub(d.at) >= s.bufWait {
				drop = append(drop, dropped{d, fmt.Errorf("%w: shard %s stopping for %v", ErrUnavailable, sh.key.key(), s.bufWait)})
			} else {
				keep = append(keep, d)
			}
		}
		clear(sh.buffer[len(keep):])
		sh.buffer = keep
	}
	if sh.waiters == 0 {
		return drop
	}
	for _, e := range sh.entities {
		if len(e.waiting) == 0 {
			continue
		}
		keep := e.waiting[:0]
		for _, d := range e.waiting {
			if now.Sub(d.at) >= s.bufWait {
				drop = append(drop, dropped{d, fmt.Errorf("%w: entity stopping for %v", ErrUnavailable, s.bufWait)})
				sh.waiters--
			} else {
				keep = append(keep, d)
			}
		}
		clear(e.waiting[len(keep):])
		e.waiting = keep
	}
	return drop
}

// passivateLocked stops sh's entities idle past their kind's
// PassivateAfter, and forgets those their supervisor stopped. It looks at
// each entity every quarter of PassivateAfter (every TTL for a kind that
// never passivates), at least a tick apart: a shard may hold tens of
// thousands. The caller holds s.mu.
func (s *Sharding) passivateLocked(sh *shard, now time.Time) {
	after := s.kinds[sh.key.kind].PassivateAfter
	every := s.ttl
	if after > 0 {
		every = after / 4
	}
	if now.Sub(sh.swept) < max(every, s.tick) {
		return
	}
	sh.swept = now
	for id, e := range sh.entities {
		if e.stopping {
			continue
		}
		if isDone(e.ref) {
			delete(sh.entities, id)
			continue
		}
		if after > 0 && now.Sub(e.last) >= after {
			e.stopping = true
			e.ref.Stop()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				<-e.ref.Done()
				s.entityStopped(sh.key, id, e)
			}()
		}
	}
}

// async runs a write to the bucket on a goroutine of its own, at most
// maxWrites at once; Close waits for those under way, and those still
// waiting for their turn when it stops the node's goroutines are dropped.
func (s *Sharding) async(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case s.writes <- struct{}{}:
		case <-s.stop:
			return
		}
		defer func() { <-s.writes }()
		f()
	}()
}

func (s *Sharding) renewOne(sh *shard) {
	s.mu.Lock()
	rev := sh.rev
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.renew)
	defer cancel()
	sent := time.Now()
	next, err := s.kv.Update(ctx, sh.key.key(), s.record(false), rev)
	s.mu.Lock()
	defer s.mu.Unlock()
	sh.renewing = false
	switch {
	case err == nil:
		if sh.rev == rev && !sh.lease.lost.Load() {
			sh.rev, sh.sentAt = next, sent
			sh.lease.extend(sent, s.valid)
		}
	case conflict(err):
		// The revision moved: another node holds the lease now.
		if s.owned[sh.key] == sh {
			s.fenceLocked(sh)
		}
	}
}

// take writes this node's lease on t.k, on the revision it saw, and
// owns the shard if that write wins.
func (s *Sharding) take(t take) {
	defer func() {
		s.mu.Lock()
		delete(s.taking, t.k)
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), s.renew)
	defer cancel()
	sent := time.Now()
	var rev uint64
	var err error
	if t.create {
		rev, err = s.kv.Create(ctx, t.k.key(), s.record(false))
	} else {
		rev, err = s.kv.Update(ctx, t.k.key(), s.record(false), t.rev)
	}
	if err != nil {
		if conflict(err) {
			// The revision moved: read the lease rather than wait for the
			// watcher, whose news may lag, or be lost with its consumer.
			s.refresh(t.k)
		}
		return // another node was first, or the server is away: the next tick looks again
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), s.renew)
		defer cancel()
		_, _ = s.kv.Update(ctx, t.k.key(), s.record(true), rev)
		return
	}
	sh := &shard{key: t.k, rev: rev, sentAt: sent, lease: newLeaseClock(rev, sent, s.valid), entities: make(map[string]*entity)}
	s.owned[t.k] = sh
	held := s.pending[t.k]
	delete(s.pending, t.k)
	s.broadcast()
	s.mu.Unlock()
	for _, d := range held {
		s.route(d)
	}
}

// refresh reads k's lease from the bucket and applies it, unless a read
// of it is under way.
func (s *Sharding) refresh(k shardKey) {
	s.mu.Lock()
	if s.refreshing[k] || s.closed {
		s.mu.Unlock()
		return
	}
	s.refreshing[k] = true
	defer s.mu.Unlock() // async's wg.Add under the lock: Close, having set closed, may be in wg.Wait
	s.async(func() {
		defer func() {
			s.mu.Lock()
			delete(s.refreshing, k)
			s.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), s.renew)
		defer cancel()
		if e, err := s.kv.Get(ctx, k.key()); err == nil {
			s.apply(e)
		}
	})
}

// ask sends env and waits for the reply. It waits for the shard to have
// an owner, up to the buffer timeout.
func (s *Sharding) ask(ctx context.Context, env *envelope) (any, error) {
	k := shardKey{env.Kind, ShardOf(env.ID, s.shards)}
	var deadline <-chan time.Time
	var tick *time.Ticker
	for {
		s.mu.Lock()
		sh := s.owned[k]
		local := sh != nil && sh.state == active
		owner := ""
		if sh == nil {
			owner = s.ownerLocked(k)
		}
		var region actor.Ref
		if owner != "" {
			region = s.regionOfLocked(owner)
		}
		changed := s.changed
		s.mu.Unlock()
		switch {
		case local:
			return s.region.Ask(ctx, env)
		case owner != "":
			env.Hops = 1
			return region.Ask(ctx, env)
		}
		if tick == nil { // the first wait: most Asks find a route at once
			timer := time.NewTimer(s.bufWait)
			defer timer.Stop()
			deadline = timer.C
			tick = time.NewTicker(s.tick)
			defer tick.Stop()
		}
		select {
		case <-changed:
		case <-tick.C:
			s.refresh(k) // no route yet: the view of the lease may be stale
		case <-ctx.Done():
			return nil, fmt.Errorf("entity %s/%s: %w", env.Kind, env.ID, ctx.Err())
		case <-deadline:
			return nil, fmt.Errorf("entity %s/%s: %w: shard %s for %v", env.Kind, env.ID, ErrUnavailable, k.key(), s.bufWait)
		case <-s.done:
			return nil, ErrClosed
		}
	}
}
