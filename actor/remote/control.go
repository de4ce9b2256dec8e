package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/loomrt/loom/actor"
)

// Register makes ref findable by name from every node of the cluster
// (Lookup) until it stops or Unregister is called. A name taken by a live
// actor on this node is an error wrapping ErrInvalid.
func (n *Node) Register(name string, ref actor.Ref) error {
	if name == "" || ref.IsZero() {
		return fmt.Errorf("register %q: %w: want a name and a Ref", name, ErrInvalid)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if old, ok := n.names[name]; ok && !stopped(old) {
		return fmt.Errorf("register %q: %w: taken by %v", name, ErrInvalid, old)
	}
	n.names[name] = ref
	return nil
}

// Unregister forgets name.
func (n *Node) Unregister(name string) {
	n.mu.Lock()
	delete(n.names, name)
	n.mu.Unlock()
}

func stopped(r actor.Ref) bool {
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}

// registered returns the live actor registered as name here.
func (n *Node) registered(name string) (actor.Ref, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	r, ok := n.names[name]
	if ok && stopped(r) {
		delete(n.names, name)
		return actor.Ref{}, false
	}
	return r, ok
}

type lookupReply struct {
	From string `json:"from"` // the node answering
	Node string `json:"node,omitempty"`
	Path string `json:"path,omitempty"`
}

// Lookup returns the actor registered as name on any node of the cluster:
// this one first, then every node it sees alive, asked at once. It returns
// as soon as one has it, or with an error wrapping ErrNotFound once all
// have answered no; ctx bounds the wait.
func (n *Node) Lookup(ctx context.Context, name string) (actor.Ref, error) {
	if r, ok := n.registered(name); ok {
		return r, nil
	}
	expect := len(n.Members())
	if expect == 0 {
		return actor.Ref{}, fmt.Errorf("lookup %q: %w", name, ErrNotFound)
	}
	inbox := n.nc.NewInbox()
	sub, err := n.nc.SubscribeSync(inbox)
	if err != nil {
		return actor.Ref{}, fmt.Errorf("lookup %q: %w", name, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := n.nc.PublishRequest(n.prefix+"lookup", inbox, []byte(name)); err != nil {
		return actor.Ref{}, fmt.Errorf("lookup %q: %w", name, err)
	}
	for got := 0; got < expect; {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return actor.Ref{}, fmt.Errorf("lookup %q: %w", name, err)
		}
		var rep lookupReply
		if json.Unmarshal(m.Data, &rep) != nil || rep.From == "" || rep.From == n.name {
			continue // this node's own answer, which came first
		}
		got++
		if rep.Path != "" {
			return n.Ref(rep.Node, rep.Path), nil
		}
	}
	return actor.Ref{}, fmt.Errorf("lookup %q: %w", name, ErrNotFound)
}

func (n *Node) onLookup(m *nats.Msg) {
	if m.Reply == "" {
		return
	}
	rep := lookupReply{From: n.name}
	if r, ok := n.registered(string(m.Data)); ok {
		rep.Node, rep.Path = n.name, r.Path()
		if a, isRemote := r.Remote().(*remoteActor); isRemote {
			rep.Node, rep.Path = a.p.name, a.path
		}
	}
	data, _ := json.Marshal(rep)
	_ = n.nc.Publish(m.Reply, data)
}

// RegisterKind lets other nodes spawn actors from p here by kind
// (SpawnOn). p.Name is ignored: the spawner names each actor.
func (n *Node) RegisterKind(kind string, p actor.Props) error {
	if kind == "" || p.New == nil {
		return fmt.Errorf("register kind %q: %w: want a kind and Props.New", kind, ErrInvalid)
	}
	n.mu.Lock()
	n.kinds[kind] = p
	n.mu.Unlock()
	return nil
}

type spawnRequest struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

type spawnReply struct {
	Path  string `json:"path,omitempty"`
	Error string `json:"error,omitempty"`
	Kind  bool   `json:"unknownKind,omitempty"`
}

// SpawnOn spawns a top-level actor called name ("" for a generated one) on
// node, from the Props registered there as kind, and returns its Ref.
// Errors: ErrNotFound when the node is not there or has no such kind;
// otherwise the node's Spawn error, as text; ctx bounds the wait.
func (n *Node) SpawnOn(ctx context.Context, node, kind, name string) (actor.Ref, error) {
	if node == n.name {
		n.mu.Lock()
		p, ok := n.kinds[kind]
		n.mu.Unlock()
		if !ok {
			return actor.Ref{}, fmt.Errorf("spawn %s on %s: %w: kind", kind, node, ErrNotFound)
		}
		p.Name = name
		return n.sys.Spawn(p)
	}
	data, _ := json.Marshal(spawnRequest{Kind: kind, Name: name})
	m, err := n.nc.RequestWithContext(ctx, n.prefix+"ctl."+node, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return actor.Ref{}, fmt.Errorf("spawn %s on %s: %w: node", kind, node, ErrNotFound)
	}
	if err != nil {
		return actor.Ref{}, fmt.Errorf("spawn %s on %s: %w", kind, node, err)
	}
	var rep spawnReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return actor.Ref{}, fmt.Errorf("spawn %s on %s: reply: %w", kind, node, err)
	}
	switch {
	case rep.Kind:
		return actor.Ref{}, fmt.Errorf("spawn %s on %s: %w: kind", kind, node, ErrNotFound)
	case rep.Error != "":
		return actor.Ref{}, fmt.Errorf("spawn %s on %s: %s", kind, node, rep.Error)
	}
	return n.Ref(node, rep.Path), nil
}

func (n *Node) onControl(m *nats.Msg) {
	if m.Reply == "" {
		return
	}
	var req spawnRequest
	var rep spawnReply
	if err := json.Unmarshal(m.Data, &req); err != nil {
		n.malformed.Add(1)
		rep.Error = "bad request"
	} else {
		n.mu.Lock()
		p, ok := n.kinds[req.Kind]
		n.mu.Unlock()
		if !ok {
			rep.Kind = true
		} else {
			p.Name = req.Name
			if ref, err := n.sys.Spawn(p); err != nil {
				rep.Error = err.Error()
			} else {
				rep.Path = ref.Path()
			}
		}
	}
	data, _ := json.Marshal(rep)
	_ = n.nc.Publish(m.Reply, data)
}
