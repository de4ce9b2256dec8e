// Command cluster runs a counter service on actors spread over node
// processes joined over NATS. One command starts an embedded NATS server
// with JetStream (unless LOOM_NATS_URL names one, which must have
// JetStream), three counter nodes as child processes, and the front node,
// which serves HTTP: each key's counter lives on the node that rendezvous
// hashing picks among the nodes alive, reached by a remote Ask. The front
// watches every counter actor and logs the members' events: kill a node and
// the front logs it down within the failure bound (2.75 s) and sends its
// keys to the survivors.
//
// The nodes also host bank accounts as sharded entities (package
// actor/sharding): each account is an actor activated on the node that owns
// its shard, one activation at a time across the cluster. With
// LOOM_DATABASE_URL set, an account loads its balance from PostgreSQL when
// it activates and writes each deposit there before answering, so a
// node's death loses no acknowledged deposit: the account activates on a
// survivor once the lease of its shard expires (6 s) and loads its balance.
//
//	LOOM_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test go run ./examples/cluster
//	curl '127.0.0.1:8080/incr?key=apples'
//	curl '127.0.0.1:8080/deposit?account=alice&amount=10'
//	curl 127.0.0.1:8080/events
//	kill -9 <a node's pid, as it printed> ; sleep 7 ; curl '127.0.0.1:8080/deposit?account=alice&amount=1'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/actor/remote"
	"github.com/loomrt/loom/actor/sharding"
	"github.com/loomrt/loom/web"
)

// nodeEnv makes the program a counter node of that name.
const nodeEnv = "LOOM_EXAMPLE_CLUSTER_NODE"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if name := os.Getenv(nodeEnv); name != "" {
		err = runNode(ctx, name, os.Stdin)
	} else {
		err = run(ctx, os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

// run starts NATS if needed, the counter nodes and the front, and serves
// until ctx ends.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("cluster", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8080", "listen address")
	nodes := flags.Int("nodes", 3, "counter node processes")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	if *nodes < 1 {
		return fmt.Errorf("-nodes %d: want at least 1", *nodes)
	}
	url := os.Getenv(remote.EnvURL)
	if url == "" {
		store, err := os.MkdirTemp("", "loom-cluster-nats")
		if err != nil {
			return err
		}
		defer os.RemoveAll(store)
		ns, err := startNATS(store)
		if err != nil {
			return err
		}
		defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
		url = ns.ClientURL()
		fmt.Println("embedded NATS at", url)
	}
	c, err := start(url, *nodes)
	if err != nil {
		return err
	}
	for _, w := range c.workers {
		fmt.Printf("node %s: pid %d\n", w.name, w.cmd.Process.Pid)
	}
	serveErr := c.front.app.ListenAndServe(ctx, *addr)
	return errors.Join(serveErr, c.stop())
}

// startNATS starts an embedded NATS server with JetStream, which keeps
// the shard leases, storing in store.
func startNATS(store string) (*server.Server, error) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: store})
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("nats: not ready in 10 s")
	}
	return ns, nil
}

// Messages, in JSON on the wire.
type (
	// incr adds one to the counter of Key.
	incr struct{ Key string }
	// count is a counter's value after an incr, and the node that holds it.
	count struct {
		Key   string
		Value int
		Node  string
	}
)

func codecs() *remote.Codecs {
	c := remote.NewCodecs()
	for _, err := range []error{
		remote.RegisterJSON[incr](c, "cluster.incr"),
		remote.RegisterJSON[count](c, "cluster.count"),
		remote.RegisterJSON[deposit](c, "cluster.deposit"),
		remote.RegisterJSON[balance](c, "cluster.balance"),
	} {
		if err != nil {
			panic(err)
		}
	}
	return c
}

// runNode is a counter node: it holds the counters of the keys sent to it
// until ctx ends or stdin closes (its launcher has gone).
func runNode(ctx context.Context, name string, stdin io.Reader) error {
	sys, err := actor.NewSystem()
	if err != nil {
		return err
	}
	// The counter before the node joins the cluster: the front asks it as
	// soon as it sees the node.
	_, err = sys.Spawn(actor.Props{Name: "counter", New: func() actor.Actor {
		counts := make(map[string]int)
		return actor.ReceiveFunc(func(c *actor.Context, msg any) {
			if m, ok := msg.(incr); ok {
				counts[m.Key]++
				c.Respond(count{Key: m.Key, Value: counts[m.Key], Node: name})
			}
		})
	}})
	if err != nil {
		return errors.Join(err, sys.Shutdown(context.Background()))
	}
	n, err := remote.Join(sys, name, remote.WithCodecs(codecs()))
	if err != nil {
		return errors.Join(err, sys.Shutdown(context.Background()))
	}
	pool, err := openAccounts(ctx)
	if err != nil {
		return errors.Join(err, sys.Shutdown(context.Background()), n.Leave(context.Background()))
	}
	if pool != nil {
		defer pool.Close()
	}
	sh, err := sharding.Start(n, sharding.WithKind(accountKind(name, pool)))
	if err != nil {
		return errors.Join(err, sys.Shutdown(context.Background()), n.Leave(context.Background()))
	}
	ended := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, stdin); close(ended) }()
	select {
	case <-ctx.Done():
	case <-ended:
	}
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The accounts first, handed off to the other nodes; then the actors,
	// so that remote watchers hear them stop.
	return errors.Join(sh.Close(stop), sys.Shutdown(stop), n.Leave(stop))
}

// cluster is the front node and its counter nodes.
type cluster struct {
	front   *front
	workers []*worker
}

type worker struct {
	name  string
	cmd   *exec.Cmd
	stdin io.Closer
}

// start starts nodes counter nodes on NATS at url and the front, and
// returns once the front sees them all.
func start(url string, nodes int) (*cluster, error) {
	f, err := newFront(url)
	if err != nil {
		return nil, err
	}
	c := &cluster{front: f}
	self, err := os.Executable()
	if err != nil {
		return nil, errors.Join(err, c.stop())
	}
	for i := range nodes {
		name := fmt.Sprintf("counter-%d", i+1)
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), nodeEnv+"="+name, remote.EnvURL+"="+url)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		stdin, err := cmd.StdinPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("start %s: %w", name, err), c.stop())
		}
		c.workers = append(c.workers, &worker{name: name, cmd: cmd, stdin: stdin})
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(f.node.Members()) < nodes {
		if time.Now().After(deadline) {
			return nil, errors.Join(fmt.Errorf("%d of %d nodes joined in 30 s", len(f.node.Members()), nodes), c.stop())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return c, nil
}

// stop ends the counter nodes (closing their stdin; those already gone
// are waited for) and the front.
func (c *cluster) stop() error {
	for _, w := range c.workers {
		w.stdin.Close()
	}
	for _, w := range c.workers {
		_ = w.cmd.Wait() // a node killed on purpose exits with its signal
	}
	return c.front.close()
}

// front is the node that serves HTTP and finds each key's counter.
type front struct {
	node    *remote.Node
	sys     *actor.System
	shards  *sharding.Sharding
	app     *web.App
	watcher actor.Ref
	cancel  func()

	mu     sync.Mutex
	events []string
}

func newFront(url string) (*front, error) {
	sys, err := actor.NewSystem()
	if err != nil {
		return nil, err
	}
	n, err := remote.Join(sys, "front", remote.WithURL(url), remote.WithCodecs(codecs()))
	if err != nil {
		return nil, errors.Join(err, sys.Shutdown(context.Background()))
	}
	app, err := web.New()
	if err != nil {
		return nil, errors.Join(err, sys.Shutdown(context.Background()), n.Leave(context.Background()))
	}
	sh, err := sharding.Start(n) // hosts no account: sends to them
	if err != nil {
		return nil, errors.Join(err, sys.Shutdown(context.Background()), n.Leave(context.Background()))
	}
	f := &front{node: n, sys: sys, app: app, shards: sh}
	// The watcher watches each counter as its node joins, and logs its end.
	f.watcher, err = sys.Spawn(actor.Props{Name: "watcher", New: func() actor.Actor {
		return actor.ReceiveFunc(func(c *actor.Context, msg any) {
			switch msg := msg.(type) {
			case actor.Ref:
				c.Watch(msg)
			case actor.Terminated:
				f.logf("%v terminated: %v", msg.Actor, msg.Reason)
			}
		})
	}})
	if err != nil {
		return nil, errors.Join(err, sh.Close(context.Background()), sys.Shutdown(context.Background()), n.Leave(context.Background()))
	}
	f.cancel = n.SubscribeMembers(func(e remote.MemberEvent) {
		if e.Kind == remote.Joined {
			f.watcher.Tell(n.Ref(e.Node, "/counter"))
			f.logf("%s joined", e.Node)
			return
		}
		f.logf("%s %v: %v", e.Node, e.Kind, e.Reason)
	})
	app.Get("/incr", f.incr)
	app.Get("/deposit", f.deposit)
	app.Get("/events", f.listEvents)
	return f, nil
}

func (f *front) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	fmt.Println(line)
	f.mu.Lock()
	f.events = append(f.events, line)
	f.mu.Unlock()
}

// owner picks key's node among the live ones by rendezvous hashing: when a
// node goes, only its keys move.
func owner(key string, nodes []string) string {
	var best string
	var bestScore uint64
	for _, n := range nodes {
		h := fnv.New64a()
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write([]byte(key))
		if s := h.Sum64(); best == "" || s > bestScore {
			best, bestScore = n, s
		}
	}
	return best
}

func (f *front) incr(w http.ResponseWriter, r *http.Request) error {
	key, err := web.Query(r, "key").Required()
	if err != nil {
		return err
	}
	node := owner(key, f.node.Members())
	if node == "" {
		return web.Errorf(http.StatusServiceUnavailable, "no counter node is up")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	c, err := actor.Ask[count](ctx, f.node.Ref(node, "/counter"), incr{Key: key})
	if err != nil {
		return web.Errorf(http.StatusServiceUnavailable, "%v", err)
	}
	_, err = fmt.Fprintf(w, "%s=%d on %s\n", c.Key, c.Value, c.Node)
	return err
}

func (f *front) listEvents(w http.ResponseWriter, _ *http.Request) error {
	f.mu.Lock()
	text := strings.Join(f.events, "\n")
	f.mu.Unlock()
	_, err := fmt.Fprintln(w, text)
	return err
}

func (f *front) close() error {
	f.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(f.shards.Close(ctx), f.sys.Shutdown(ctx), f.node.Leave(ctx))
}
