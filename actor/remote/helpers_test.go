package remote

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/loomrt/loom/actor"
)

// natsServer is an embedded NATS server on a loopback port that can be
// stopped and started again on the same port.
type natsServer struct {
	t    testing.TB
	port int
	s    *server.Server
	proc *child // the server's process, for startNATSProcess
}

func startNATS(t testing.TB) *natsServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ns := &natsServer{t: t, port: port}
	ns.start()
	t.Cleanup(ns.stop)
	return ns
}

func (ns *natsServer) start() {
	ns.t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: ns.port, NoLog: true, NoSigs: true})
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

func newSystem(t *testing.T) *actor.System {
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

// join starts a System joined to ns's cluster as name; both end with the
// test (the node leaves before the system shuts down: cleanups run last
// first).
func join(t *testing.T, ns *natsServer, name string, opts ...Option) *Node {
	t.Helper()
	sys := newSystem(t)
	n, err := Join(sys, name, append([]Option{WithURL(ns.url())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.Leave(ctx); err != nil {
			t.Errorf("leave %s: %v", name, err)
		}
	})
	return n
}

// waitMembers waits until n sees want.
func waitMembers(t *testing.T, n *Node, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := strings.Join(n.Members(), ",")
		if got == strings.Join(want, ",") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s sees members %q; want %q", n.Name(), got, strings.Join(want, ","))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func spawn(t *testing.T, sys *actor.System, name string, f func(c *actor.Context, msg any)) actor.Ref {
	t.Helper()
	r, err := sys.Spawn(actor.Props{Name: name, New: func() actor.Actor { return actor.ReceiveFunc(f) }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// echo replies to every user message with the message.
func echo(c *actor.Context, msg any) {
	switch msg.(type) {
	case actor.Started, actor.Stopping, actor.Stopped:
		return
	}
	c.Respond(msg)
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing received in 10 s")
	}
	panic("unreachable")
}

// deadLetters collects sys's dead letters.
type deadLetters struct {
	mu   sync.Mutex
	list []actor.DeadLetter
}

func collectDeadLetters(t *testing.T, sys *actor.System) *deadLetters {
	d := &deadLetters{}
	t.Cleanup(sys.SubscribeDeadLetters(func(l actor.DeadLetter) {
		d.mu.Lock()
		d.list = append(d.list, l)
		d.mu.Unlock()
	}))
	return d
}

func (d *deadLetters) wait(t *testing.T, match func(actor.DeadLetter) bool) actor.DeadLetter {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		d.mu.Lock()
		for _, l := range d.list {
			if match(l) {
				d.mu.Unlock()
				return l
			}
		}
		d.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no matching dead letter in 10 s")
	return actor.DeadLetter{}
}

// The child process: a node with an echo actor registered as "echo" and a
// "counter" kind, which prints "ready" and runs until its stdin closes or
// it is killed.
const childEnv = "LOOM_REMOTE_TEST_CHILD"

// failAfterEnv sets the child node's failure bound (WithFailureDetector).
const failAfterEnv = "LOOM_REMOTE_TEST_FAIL_AFTER"

// spinEnv makes the child node run that many goroutines that spin on the
// CPU until it ends.
const spinEnv = "LOOM_REMOTE_TEST_SPIN"

// spin starts k goroutines that compute without pause until stop closes.
func spin(k int, stop <-chan struct{}, wg *sync.WaitGroup) {
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := 0; ; x++ {
				if x%1024 == 0 {
					select {
					case <-stop:
						return
					default:
					}
				}
			}
		}()
	}
}

func runChild(name string) int {
	sys, err := actor.NewSystem()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	opts := []Option{WithCluster(os.Getenv("LOOM_REMOTE_TEST_CLUSTER"))}
	if d, err := time.ParseDuration(os.Getenv(failAfterEnv)); err == nil {
		opts = append(opts, WithFailureDetector(0, d))
	}
	n, err := Join(sys, name, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ref, err := sys.Spawn(actor.Props{Name: "echo", New: func() actor.Actor { return actor.ReceiveFunc(echo) }})
	if err == nil {
		err = n.Register("echo", ref)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop := make(chan struct{})
	var spinners sync.WaitGroup
	if k, err := strconv.Atoi(os.Getenv(spinEnv)); err == nil {
		spin(k, stop, &spinners)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	close(stop)
	spinners.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = sys.Shutdown(ctx)
	_ = n.Leave(ctx)
	return 0
}

// natsChildEnv makes the test binary a NATS server on the port it names,
// which runs until its stdin closes.
const natsChildEnv = "LOOM_REMOTE_TEST_NATS"

func runNATSChild(port string) int {
	p, err := strconv.Atoi(port)
	if err != nil {
		return 1
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: p, NoLog: true, NoSigs: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		return 1
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Shutdown()
	s.WaitForShutdown()
	return 0
}

// startNATSProcess starts a NATS server in a child process, so that what it
// buffers is not in this process's heap.
func startNATSProcess(t testing.TB) *natsServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	proc := startProcess(t, natsChildEnv+"="+strconv.Itoa(port))
	return &natsServer{t: t, port: port, proc: proc}
}

// child is a node in another process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startChild starts node name in a child process on ns, in cluster, and
// waits until it is ready.
func startChild(t *testing.T, ns *natsServer, cluster, name string, env ...string) *child {
	t.Helper()
	return startProcess(t, append([]string{childEnv + "=" + name, EnvURL + "=" + ns.url(), "LOOM_REMOTE_TEST_CLUSTER=" + cluster}, env...)...)
}

// startProcess runs the test binary with env added, and waits for it to
// print "ready"; it ends with the test, as its stdin closes.
func startProcess(t testing.TB, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("child %q: %q, %v", env, line, err)
	}
	return c
}
