package sharding

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/loomrt/loom/actor/remote"
)

// serveMemory answers requests on loom.bench.mem.<node> with the node's
// heap allocated (HeapAlloc), in bytes, after a garbage collection.
func serveMemory(n *remote.Node) (*nats.Subscription, error) {
	return n.Conn().Subscribe("loom.bench.mem."+n.Name(), func(m *nats.Msg) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = m.Respond(binary.AppendUvarint(nil, ms.HeapAlloc))
	})
}

// profileEnv names a directory: the benchmark then writes CPU and
// allocation profiles of the driver and of each host there, covering the
// throughput window (<node>.cpu.pprof, <node>.allocs.pprof).
const profileEnv = "LOOM_SHARDING_BENCH_PROFILE"

// serveProfile answers requests on loom.bench.prof.<node>: "start <dir>"
// starts a CPU profile and resets nothing else, "stop" writes the CPU
// profile and an allocation profile to dir.
func serveProfile(n *remote.Node) (*nats.Subscription, error) {
	var mu sync.Mutex
	var stop func() error
	return n.Conn().Subscribe("loom.bench.prof."+n.Name(), func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		var err error
		if dir, ok := strings.CutPrefix(string(m.Data), "start "); ok {
			stop, err = startProfile(dir, n.Name())
		} else if stop != nil {
			err, stop = stop(), nil
		}
		reply := "ok"
		if err != nil {
			reply = err.Error()
		}
		_ = m.Respond([]byte(reply))
	})
}

// startProfile starts a CPU profile into dir/<name>.cpu.pprof; the
// function it returns stops it and writes dir/<name>.allocs.pprof.
func startProfile(dir, name string) (func() error, error) {
	f, err := os.Create(filepath.Join(dir, name+".cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return err
		}
		a, err := os.Create(filepath.Join(dir, name+".allocs.pprof"))
		if err != nil {
			return err
		}
		defer a.Close()
		return pprof.Lookup("allocs").WriteTo(a, 0)
	}, nil
}

func profileOf(nc *nats.Conn, node, cmd string) error {
	m, err := nc.Request("loom.bench.prof."+node, []byte(cmd), 30*time.Second)
	if err != nil {
		return fmt.Errorf("profile of %s: %w", node, err)
	}
	if string(m.Data) != "ok" {
		return fmt.Errorf("profile of %s: %s", node, m.Data)
	}
	return nil
}

// cpuTime returns the user and system CPU time process pid has used, read
// from /proc (Linux only; 0 elsewhere).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command, which is in parentheses: utime and
	// stime are the 12th and 13th of them, in clock ticks (100 a second).
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

func heapOf(nc *nats.Conn, node string) (uint64, error) {
	m, err := nc.Request("loom.bench.mem."+node, nil, 30*time.Second)
	if err != nil {
		return 0, fmt.Errorf("memory of %s: %w", node, err)
	}
	v, _ := binary.Uvarint(m.Data)
	return v, nil
}

// natsChildEnv makes the test binary a NATS server with JetStream on the
// port it names, storing in the directory natsStoreEnv names, until its
// stdin closes.
const (
	natsChildEnv = "LOOM_SHARDING_TEST_NATS"
	natsStoreEnv = "LOOM_SHARDING_TEST_NATS_STORE"
)

func runNATSChild(port string) int {
	p, err := strconv.Atoi(port)
	if err != nil {
		return 1
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: p, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: os.Getenv(natsStoreEnv)})
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

// BenchmarkEntities runs workload W: a NATS server with JetStream in one
// process, three hosting nodes in three more, and this process as a driver
// node hosting no shard. It activates 100,000 entities ("e0".."e99999",
// one Ask each, 2,000 in flight: activation latency), then for 10 s keeps
// 2,000 Asks in flight, ids round-robin, each reply checked for its id and
// its count (msg/s: checked replies a second), measures the heap per idle
// activation on the hosts, and kills one host with SIGKILL: recover-s is
// the time from the kill to the last of its entities' first successful
// reply. cpu-µs/msg is the user and system CPU time of all five processes
// over the throughput window per checked reply, nats-cpu-µs/msg the NATS
// server's part of it. It runs once whatever b.N is.
func BenchmarkEntities(b *testing.B) {
	const (
		entities = 100_000
		inFlight = 2_000
		window   = 10 * time.Second
	)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	natsProc := startProcess(b, natsChildEnv+"="+strconv.Itoa(port), natsStoreEnv+"="+b.TempDir())
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	cluster := fmt.Sprintf("bench%d", os.Getpid())
	hosts := map[string]*child{}
	for _, name := range []string{"h1", "h2", "h3"} {
		hosts[name] = startChild(b, url, cluster, "", name, DefaultShards, ttlEnv+"="+DefaultLeaseTTL.String())
	}
	driver := startMemberAt(b, url, nil, cluster, "driver")
	waitForB(b, 60*time.Second, func() bool { return !slices.Contains(driver.sh.Owners("counter"), "") })
	nc := driver.node.Conn()
	heap0 := map[string]uint64{}
	for name := range hosts {
		if heap0[name], err = heapOf(nc, name); err != nil {
			b.Fatal(err)
		}
	}

	all := ids(entities)
	counts := make([]atomic.Int64, entities)
	b.ResetTimer()
	// Activation: one Ask per id.
	lat := make([]time.Duration, entities)
	var next atomic.Int64
	run(inFlight, func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= entities {
				return
			}
			start := time.Now()
			mustAsk(b, driver.sh, all[i], 1)
			lat[i] = time.Since(start)
			counts[i].Store(1)
		}
	})
	slices.Sort(lat)

	// Throughput: 2,000 in flight for the window.
	profDir := os.Getenv(profileEnv)
	var stopProfile func() error
	if profDir != "" {
		for name := range hosts {
			if err := profileOf(nc, name, "start "+profDir); err != nil {
				b.Fatal(err)
			}
		}
		if stopProfile, err = startProfile(profDir, "driver"); err != nil {
			b.Fatal(err)
		}
	}
	pids := []int{os.Getpid(), natsProc.cmd.Process.Pid}
	for _, h := range hosts {
		pids = append(pids, h.cmd.Process.Pid)
	}
	var cpu0 time.Duration
	for _, pid := range pids {
		cpu0 += cpuTime(pid)
	}
	natsCPU0 := cpuTime(natsProc.cmd.Process.Pid)
	var ok, mismatched atomic.Int64
	stop := time.Now().Add(window)
	next.Store(0)
	run(inFlight, func() {
		for time.Now().Before(stop) {
			i := int(next.Add(1)-1) % entities
			want := counts[i].Add(1)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			v, err := driver.sh.Ask(ctx, "counter", all[i], Count{})
			cancel()
			if err != nil {
				b.Errorf("ask %s: %v", all[i], err)
				return
			}
			if c := v.(Counted); c.ID != all[i] || int64(c.N) != want {
				mismatched.Add(1)
				continue
			}
			ok.Add(1)
		}
	})
	elapsed := window + time.Since(stop)
	var cpu time.Duration
	for _, pid := range pids {
		cpu += cpuTime(pid)
	}
	cpu -= cpu0
	natsCPU := cpuTime(natsProc.cmd.Process.Pid) - natsCPU0
	b.StopTimer()
	if profDir != "" {
		if err := stopProfile(); err != nil {
			b.Fatal(err)
		}
		for name := range hosts {
			if err := profileOf(nc, name, "stop"); err != nil {
				b.Fatal(err)
			}
		}
	}

	var heap uint64
	for name := range hosts {
		h, err := heapOf(nc, name)
		if err != nil {
			b.Fatal(err)
		}
		heap += h - min(h, heap0[name])
	}

	// Recovery: kill h2, then ask each of its entities until it answers.
	owners := driver.sh.Owners("counter")
	var victims []int
	for i, id := range all {
		if owners[ShardOf(id, DefaultShards)] == "h2" {
			victims = append(victims, i)
		}
	}
	hosts["h2"].kill(b)
	killed := time.Now()
	var last atomic.Int64
	next.Store(0)
	run(inFlight, func() {
		for {
			k := int(next.Add(1) - 1)
			if k >= len(victims) {
				return
			}
			mustAsk(b, driver.sh, all[victims[k]], 0)
			d := int64(time.Since(killed))
			for {
				old := last.Load()
				if d <= old || last.CompareAndSwap(old, d) {
					break
				}
			}
		}
	})

	b.ReportMetric(float64(ok.Load())/elapsed.Seconds(), "msg/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(ok.Load(), 1)), "cpu-µs/msg")
	b.ReportMetric(float64(natsCPU.Microseconds())/float64(max(ok.Load(), 1)), "nats-cpu-µs/msg")
	b.ReportMetric(float64(mismatched.Load()), "mismatched")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "act-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "act-p99-ms")
	b.ReportMetric(float64(heap)/entities, "B/activation")
	b.ReportMetric(time.Duration(last.Load()).Seconds(), "recover-s")
	b.ReportMetric(float64(len(victims)), "victims")
}

// run runs f on k goroutines and waits for them.
func run(k int, f func()) {
	var wg sync.WaitGroup
	for range k {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	wg.Wait()
}

// mustAsk asks id for a Count until it answers (want: the count expected,
// 0 for any), failing the benchmark after a minute.
func mustAsk(b *testing.B, sh *Sharding, id string, want int) {
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		v, err := sh.Ask(ctx, "counter", id, Count{})
		cancel()
		if err == nil {
			if c := v.(Counted); c.ID != id || want != 0 && c.N != want {
				b.Errorf("ask %s: %+v, want count %d", id, c, want)
			}
			return
		}
		if time.Now().After(deadline) {
			b.Errorf("ask %s: %v", id, err)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitForB(b *testing.B, d time.Duration, cond func() bool) {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatal("not ready in time")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
