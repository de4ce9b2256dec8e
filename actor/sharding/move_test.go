package sharding

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// traffic asks ids round-robin from k goroutines until stop is called, and
// counts the Asks that failed.
type traffic struct {
	stop     func()
	wg       sync.WaitGroup
	ok, lost atomic.Int64
	mu       sync.Mutex
	errs     []error
}

func startTraffic(sh *Sharding, ids []string, k int) *traffic {
	tr := &traffic{}
	done := make(chan struct{})
	var once sync.Once
	tr.stop = func() { once.Do(func() { close(done) }); tr.wg.Wait() }
	var next atomic.Int64
	for range k {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				id := ids[int(next.Add(1))%len(ids)]
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				v, err := sh.Ask(ctx, "counter", id, Count{})
				cancel()
				if err == nil && v.(Counted).ID == id {
					tr.ok.Add(1)
					continue
				}
				tr.lost.Add(1)
				tr.mu.Lock()
				if len(tr.errs) < 5 {
					tr.errs = append(tr.errs, fmt.Errorf("%s: %v %v", id, v, err))
				}
				tr.mu.Unlock()
			}
		}()
	}
	return tr
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("e%d", i)
	}
	return out
}

func TestJoiningNodeTakesShardsAndNoAskIsLost(t *testing.T) {
	ns := startNATS(t, true)
	j := &journal{}
	driver, hosts := cluster(t, ns, "join", j, "a", "b")
	all := ids(500)
	for _, id := range all {
		askCount(t, driver.sh, id, 30*time.Second)
	}
	tr := startTraffic(driver.sh, all, 16)
	defer tr.stop()
	waitFor(t, 10*time.Second, "traffic", func() bool { return tr.ok.Load() > 500 })

	c := startMember(t, ns, "join", "c", WithKind(counterKind("c", j, 0)), WithShards(32))
	hosts["c"] = c
	waitFor(t, 30*time.Second, "c owns shards, seen from the driver", func() bool {
		for _, o := range driver.sh.Owners("counter") {
			if o == "c" {
				return true
			}
		}
		return false
	})
	waitFor(t, 30*time.Second, "entities active on c", func() bool { return c.sh.Stats().Entities > 0 })
	before := tr.ok.Load()
	waitFor(t, 30*time.Second, "traffic after the handoff", func() bool { return tr.ok.Load() > before+1000 })
	tr.stop()
	if n := tr.lost.Load(); n != 0 {
		lostOrFenced(t, hosts, fmt.Sprintf("%d Asks lost in the handoff (%d answered); want 0: %v", n, tr.ok.Load(), tr.errs))
	}
	if bad := j.overlaps(); len(bad) > 0 {
		t.Errorf("overlapping activations: %v", bad)
	}
	owners := map[string]int{}
	for _, o := range driver.sh.Owners("counter") {
		owners[o]++
	}
	if owners["c"] == 0 || owners[""] != 0 {
		t.Errorf("owners %v", owners)
	}
}

func TestNATSRestartMakesNoDoubleActivation(t *testing.T) {
	ns := startNATS(t, true)
	j := &journal{}
	driver, _ := cluster(t, ns, "restart", j, "a", "b", "c")
	all := ids(300)
	for _, id := range all {
		askCount(t, driver.sh, id, 30*time.Second)
	}
	for _, outage := range []time.Duration{testTTL / 3, testTTL + time.Second} {
		ns.stop()
		time.Sleep(outage) // the outage itself: what the test is about
		ns.start()
		for _, id := range all {
			askCount(t, driver.sh, id, 60*time.Second)
		}
		if bad := j.overlaps(); len(bad) > 0 {
			t.Fatalf("after an outage of %v: overlapping activations: %v", outage, bad)
		}
	}
}

func TestCloseHandsShardsOffAndNoAskIsLost(t *testing.T) {
	ns := startNATS(t, true)
	j := &journal{}
	driver, members := cluster(t, ns, "close", j, "a", "b")
	all := ids(500)
	for _, id := range all {
		askCount(t, driver.sh, id, 30*time.Second)
	}
	tr := startTraffic(driver.sh, all, 16)
	defer tr.stop()
	waitFor(t, 10*time.Second, "traffic", func() bool { return tr.ok.Load() > 500 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := members["b"].sh.Close(ctx); err != nil {
		t.Fatalf("close b: %v", err)
	}
	waitFor(t, 30*time.Second, "a owns every shard", func() bool {
		for _, o := range driver.sh.Owners("counter") {
			if o != "a" {
				return false
			}
		}
		return true
	})
	before := tr.ok.Load()
	waitFor(t, 30*time.Second, "traffic after the handoff", func() bool { return tr.ok.Load() > before+1000 })
	tr.stop()
	if n := tr.lost.Load(); n != 0 {
		lostOrFenced(t, members, fmt.Sprintf("%d Asks lost when b closed (%d answered); want 0: %v", n, tr.ok.Load(), tr.errs))
	}
	if bad := j.overlaps(); len(bad) > 0 {
		t.Errorf("overlapping activations: %v", bad)
	}
	if st := members["b"].sh.Stats(); st.Shards != 0 || st.Entities != 0 || st.Pending != 0 {
		t.Errorf("b after Close: %+v", st)
	}
}

// lostOrFenced fails the test with what, unless a host fenced a shard: a
// machine too busy to renew a lease in half its TTL makes its owner kill
// the shard's entities, and what was queued to them is lost, as documented.
func lostOrFenced(t *testing.T, hosts map[string]*member, what string) {
	t.Helper()
	for name, m := range hosts {
		if st := m.sh.Stats(); st.Fenced > 0 {
			t.Logf("%s, but %s fenced %d shards: %s", what, name, st.Fenced, "the machine was too busy to renew a lease")
			return
		}
	}
	t.Error(what)
}
