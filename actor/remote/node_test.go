package remote

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/actor"
)

func TestJoinRefusesBadSettings(t *testing.T) {
	ns := startNATS(t)
	sys := newSystem(t)
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"", nil},
		{"a.b", nil},
		{"a", []Option{WithCluster("x y")}},
		{"a", []Option{WithFailureDetector(time.Second, time.Second)}},
		{"a", []Option{WithMaxPending(-1)}},
	} {
		if _, err := Join(sys, tc.name, append([]Option{WithURL(ns.url())}, tc.opts...)...); !errors.Is(err, ErrInvalid) {
			t.Errorf("Join(%q) = %v; want ErrInvalid", tc.name, err)
		}
	}
}

// Two clusters on one NATS server do not see each other, even with the
// same node names.
func TestClustersShareAServer(t *testing.T) {
	ns := startNATS(t)
	x1, x2 := join(t, ns, "n1", WithCluster("x")), join(t, ns, "n2", WithCluster("x"))
	y1, y2 := join(t, ns, "n1", WithCluster("y")), join(t, ns, "n2", WithCluster("y"))
	spawn(t, x2.System(), "who", func(c *actor.Context, msg any) {
		if _, ok := msg.(string); ok {
			c.Respond("x")
		}
	})
	spawn(t, y2.System(), "who", func(c *actor.Context, msg any) {
		if _, ok := msg.(string); ok {
			c.Respond("y")
		}
	})
	waitMembers(t, x1, "n2")
	waitMembers(t, y1, "n2")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		n    *Node
		want string
	}{{x1, "x"}, {y1, "y"}} {
		for range 20 {
			if got, err := actor.Ask[string](ctx, tc.n.Ref("n2", "/who"), "?"); err != nil || got != tc.want {
				t.Fatalf("%s's Ask = %q, %v; want %q", tc.n.cluster, got, err, tc.want)
			}
		}
	}
	if s := x2.Stats(); s.Stale != 0 || s.Malformed != 0 {
		t.Errorf("x2 stats %+v", s)
	}
}

// Bytes on a node's subjects that no node wrote are counted and ignored.
func TestMalformedBytesCounted(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	spawn(t, b.System(), "echo", echo)
	waitMembers(t, a, "b")
	garbage := [][]byte{
		nil,
		[]byte("hello"),
		{magic, version},
		appendHeader(nil, "a", 0),
		append(appendHeader(nil, "x", 9), 1, 2, 3),
		append(appendHeader(nil, "x", 9), 0xff, 0xff, 0xff, 0x7f, 1),
		append(appendHeader(nil, "x", 9), 3, 0, 0, 0, kindTell, 9, 'a'),
		append(appendHeader(nil, "x", 9), 2, 0, 0, 0, 77, 0),
	}
	subject := b.prefix + "n.b"
	for _, g := range garbage {
		if err := a.nc.Publish(subject, g); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range [][]byte{nil, []byte("x"), []byte("0123456789 bad name")} {
		if err := a.nc.Publish(b.prefix+"hb", g); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := actor.Ask[string](ctx, a.Ref("b", "/echo"), "still up"); err != nil || got != "still up" {
		t.Fatalf("Ask after garbage = %q, %v", got, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	want := uint64(len(garbage) + 3)
	for b.Stats().Malformed < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := b.Stats().Malformed; got != want {
		t.Errorf("Malformed = %d; want %d", got, want)
	}
	if got := strings.Join(b.Members(), ","); got != "a" {
		t.Errorf("b's members after the garbage: %q; want a (no member made of bytes no node wrote)", got)
	}
}

// An application that uses local actors links no NATS.
func TestActorLinksNoNATS(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/loomrt/loom/actor").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range []string{"nats-io", "google.golang.org/protobuf"} {
		if strings.Contains(string(out), dep) {
			t.Errorf("package actor depends on %s; want it only in actor/remote", dep)
		}
	}
}

// The NATS server stops and starts again on its port: the nodes reconnect
// without declaring each other down, and traffic resumes. Messages sent
// meanwhile are buffered by the NATS client and sent on reconnection; those
// that reach the server before the receiver has subscribed again are lost:
// the receiver sees a subsequence, in order, with no duplicates.
func TestNATSRestart(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	evA, evB := collectEvents(t, a), collectEvents(t, b)
	got := make(chan int, 10000)
	spawn(t, b.System(), "sink", func(c *actor.Context, msg any) {
		switch msg := msg.(type) {
		case string:
			var i int
			fmt.Sscan(msg, &i)
			got <- i
		case []byte:
			c.Respond(msg)
		}
	})
	ref := a.Ref("b", "/sink")
	ask := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := ref.Ask(ctx, []byte("ping"))
		return err
	}
	if err := ask(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	seq := 0
	tell := func(k int) {
		for range k {
			ref.Tell(fmt.Sprint(seq))
			seq++
		}
	}
	tell(100)
	// Answered after the 100 before it, which have then arrived.
	if err := ask(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	ns.stop()
	tell(100) // during the outage
	time.Sleep(500 * time.Millisecond)
	ns.start()
	deadline := time.Now().Add(20 * time.Second)
	for ask(500*time.Millisecond) != nil {
		if time.Now().After(deadline) {
			t.Fatal("no answer 20 s after the restart")
		}
	}
	tell(100)
	last := seq - 1
	received, prev := 0, -1
	for prev != last {
		i := recv(t, got)
		if i <= prev {
			t.Fatalf("message %d after %d: want increasing, no duplicates", i, prev)
		}
		prev = i
		received++
	}
	if received < 200 {
		t.Errorf("received %d of %d; want at least the 200 sent while connected", received, seq)
	}
	t.Logf("received %d of %d messages; %d sent during the outage", received, seq, 100)
	if n := evA.count(Down) + evB.count(Down); n != 0 {
		t.Errorf("%d Down events across a restart; want 0", n)
	}
}
