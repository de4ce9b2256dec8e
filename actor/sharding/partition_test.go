package sharding

import (
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/loomrt/loom/actor/remote"
)

// proxy forwards TCP connections to a NATS server until cut: then it
// closes them, and refuses new ones until healed.
type proxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	cut    bool
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) url() string { return "nats://" + p.l.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		pipe := func(dst, src net.Conn) {
			defer p.wg.Done()
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		go pipe(up, c)
		go pipe(c, up)
	}
}

// setCut cuts (or heals) the proxy: cutting closes every connection.
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func (p *proxy) close() {
	p.l.Close()
	p.setCut(true)
	p.wg.Wait()
}

// A node cut off from NATS stops its entities by its own clock before the
// others take its shards: no two activations overlap, though the cut-off
// node never hears that its shards moved.
func TestNodeCutOffFromNATSFencesItselfBeforeItsShardsMove(t *testing.T) {
	ns := startNATS(t, true)
	j := &journal{}
	px := startProxy(t, "127.0.0.1:"+strconv.Itoa(ns.port))
	// Failure detection well within the lease's TTL/2: the others see c
	// down, and want its shards, long before c stops trusting its leases.
	fast := []remote.Option{remote.WithFailureDetector(100*time.Millisecond, time.Second)}
	startMemberAt(t, ns.url(), fast, "cut", "a", WithKind(counterKind("a", j, 0)), WithShards(32))
	startMemberAt(t, ns.url(), fast, "cut", "b", WithKind(counterKind("b", j, 0)), WithShards(32))
	c := startMemberAt(t, px.url(), fast, "cut", "c", WithKind(counterKind("c", j, 0)), WithShards(32))
	driver := startMemberAt(t, ns.url(), fast, "cut", "driver", WithShards(32))
	waitFor(t, 30*time.Second, "every shard owned, some by c", func() bool {
		owners := driver.sh.Owners("counter")
		onC := false
		for _, o := range owners {
			if o == "" {
				return false
			}
			onC = onC || o == "c"
		}
		return onC
	})
	all := ids(300)
	for _, id := range all {
		askCount(t, driver.sh, id, 30*time.Second)
	}
	if c.sh.Stats().Entities == 0 {
		t.Fatal("no entity on c")
	}
	px.setCut(true)
	waitFor(t, 30*time.Second, "a and b own c's shards", func() bool {
		for _, o := range driver.sh.Owners("counter") {
			if o != "a" && o != "b" {
				return false
			}
		}
		return true
	})
	for _, id := range all {
		askCount(t, driver.sh, id, 30*time.Second)
	}
	if n := c.sh.Stats().Entities; n != 0 {
		t.Errorf("%d entities still active on the cut-off node", n)
	}
	if bad := j.overlaps(); len(bad) > 0 {
		t.Fatalf("overlapping activations: %v", bad)
	}
	px.setCut(false)
	// Back on NATS, c finds its leases taken and takes none back.
	time.Sleep(testTTL) // give c the time it would need to take a lease wrongly
	for _, id := range all {
		askCount(t, driver.sh, id, 30*time.Second)
	}
	if bad := j.overlaps(); len(bad) > 0 {
		t.Fatalf("after healing: overlapping activations: %v", bad)
	}
}

// A node cut off from NATS for longer than the others' failure bound is
// declared down: back on NATS, it is refused, hands its shards off and
// hosts no more; every entity answers again from the others.
func TestNodeDeclaredDownHandsItsShardsOff(t *testing.T) {
	ns := startNATS(t, true)
	j := &journal{}
	px := startProxy(t, "127.0.0.1:"+strconv.Itoa(ns.port))
	fast := []remote.Option{remote.WithFailureDetector(100*time.Millisecond, time.Second)}
	startMemberAt(t, ns.url(), fast, "downed", "a", WithKind(counterKind("a", j, 0)), WithShards(32))
	startMemberAt(t, ns.url(), fast, "downed", "b", WithKind(counterKind("b", j, 0)), WithShards(32))
	c := startMemberAt(t, px.url(), fast, "downed", "c", WithKind(counterKind("c", j, 0)), WithShards(32))
	driver := startMemberAt(t, ns.url(), fast, "downed", "driver", WithShards(32))
	waitFor(t, 30*time.Second, "every shard owned, some by c", func() bool {
		owners := driver.sh.Owners("counter")
		return !slices.Contains(owners, "") && slices.Contains(owners, "c")
	})
	all := ids(300)
	for _, id := range all {
		askCount(t, driver.sh, id, 30*time.Second)
	}
	px.setCut(true)
	waitFor(t, 10*time.Second, "the driver sees c down", func() bool { return !slices.Contains(driver.node.Members(), "c") })
	px.setCut(false)
	waitFor(t, 30*time.Second, "a and b own c's shards", func() bool {
		for _, o := range driver.sh.Owners("counter") {
			if o != "a" && o != "b" {
				return false
			}
		}
		return true
	})
	for _, id := range all {
		askCount(t, driver.sh, id, 30*time.Second)
	}
	if st := c.sh.Stats(); st.Shards != 0 || st.Entities != 0 {
		t.Errorf("the node declared down still hosts: %+v", st)
	}
	if bad := j.overlaps(); len(bad) > 0 {
		t.Fatalf("overlapping activations: %v", bad)
	}
}
