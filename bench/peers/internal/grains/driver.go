package grains

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/typepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// tally counts the outcome of requests across the driver's workers.
type tally struct {
	replies atomic.Int64 // verified
	failed  atomic.Int64
	wrong   atomic.Int64
	mu      sync.Mutex
	first   string
}

func (t *tally) note(n *atomic.Int64, what string) {
	if n.Add(1) == 1 {
		t.mu.Lock()
		if t.first == "" {
			t.first = what
		}
		t.mu.Unlock()
	}
}

// request sends the seq-th request of the run: to grain seq mod grains,
// which must answer with its id and a count of seq/grains + 1. It reports
// whether the reply was right.
func (t *tally) request(c *cluster.Cluster, seq int64, grains int) bool {
	id := "e" + strconv.FormatInt(seq%int64(grains), 10)
	want := int32(seq/int64(grains)) + 1
	resp, err := c.Request(id, Kind, wrapperspb.String(id))
	if err != nil {
		t.note(&t.failed, fmt.Sprintf("request %d to %s: %v", want, id, err))
		return false
	}
	if err := verify(resp, id, want); err != nil {
		t.note(&t.wrong, err.Error())
		return false
	}
	t.replies.Add(1)
	return true
}

// verify returns an error unless resp is the reply of grain id to its
// want-th request.
func verify(resp any, id string, want int32) error {
	got, ok := resp.(*typepb.EnumValue)
	if !ok {
		return fmt.Errorf("request %d to %s: reply of type %T; want *typepb.EnumValue", want, id, resp)
	}
	if got.Name != id || got.Number != want {
		return fmt.Errorf("request %d to %s: reply from %q counting %d; want %q counting %d", want, id, got.Name, got.Number, id, want)
	}
	return nil
}

// drive runs the driver: a cluster client that hosts no grain. It prints
// one line, "result <json>", then stops.
func drive(out io.Writer) error {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	var cfg Config
	if err := json.Unmarshal([]byte(os.Getenv(configEnv)), &cfg); err != nil {
		return fmt.Errorf("%s: %w", configEnv, err)
	}
	members, err := parseTopology(os.Getenv(topologyEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", topologyEnv, err)
	}
	pids := []int{os.Getpid()}
	for _, s := range strings.Split(os.Getenv(pidsEnv), ",") {
		pid, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%s: %w", pidsEnv, err)
		}
		pids = append(pids, pid)
	}
	p := &staticProvider{members: members}
	c := newCluster(p)
	c.StartClient()
	// Cluster.Shutdown sets gossip state, and a client has no gossiper:
	// stop what a client starts, its remote and its actor system.
	defer c.ActorSystem.Shutdown()
	defer c.Remote.Shutdown(false)

	rep := driverReport{Result: Result{Config: cfg}}
	var t tally
	// The first stats reply opens each host's connection to this driver,
	// which costs memory of its own: measure the baseline after it.
	for range 2 {
		if rep.HeapBefore, rep.RSSBefore, err = hostMemory(c, members, pids[1:]); err != nil {
			return err
		}
	}

	// Activation: every grain once, InFlight at a time, each timed.
	lat := make([]time.Duration, cfg.Grains)
	var next atomic.Int64
	var wg sync.WaitGroup
	begin := time.Now()
	for range cfg.InFlight {
		wg.Go(func() {
			for seq := next.Add(1) - 1; seq < int64(cfg.Grains); seq = next.Add(1) - 1 {
				sent := time.Now()
				if t.request(c, seq, cfg.Grains) {
					lat[seq] = time.Since(sent)
				}
			}
		})
	}
	wg.Wait()
	rep.ActivationTime = time.Since(begin)
	slices.Sort(lat)
	rep.ActivationP50, rep.ActivationP99 = lat[len(lat)/2], lat[len(lat)*99/100]
	if rep.HeapAfter, rep.RSSAfter, err = hostMemory(c, members, pids[1:]); err != nil {
		return err
	}

	// Load: InFlight workers, each sending its next request when the
	// last is answered, until the counted time is over.
	next.Store(int64(cfg.Grains))
	var stop atomic.Bool
	for range cfg.InFlight {
		wg.Go(func() {
			for !stop.Load() {
				t.request(c, next.Add(1)-1, cfg.Grains)
			}
		})
	}
	replies0, cpu0, t0 := t.replies.Load(), cpuTimes(pids), time.Now()
	time.Sleep(cfg.Duration)
	replies1, cpu1, t1 := t.replies.Load(), cpuTimes(pids), time.Now()
	stop.Store(true)
	wg.Wait()
	rep.Replies, rep.Elapsed = replies1-replies0, t1.Sub(t0)
	for i := range pids {
		used := cpu1[i] - cpu0[i]
		rep.CPU += used
		name := "driver"
		if i > 0 {
			name = fmt.Sprint("host-", i)
		}
		rep.Processes = append(rep.Processes, fmt.Sprintf("%s %.0f%%", name, 100*used.Seconds()/rep.Elapsed.Seconds()))
	}
	rep.Failed, rep.Wrong, rep.First = t.failed.Load(), t.wrong.Load(), t.first
	line, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "result %s\n", line)
	return err
}

// hostMemory returns the hosts' heap after a collection, asked of each
// host's stats actor, and their resident sets, summed.
func hostMemory(c *cluster.Cluster, members []*cluster.Member, pids []int) (heap, rss uint64, err error) {
	for _, m := range members {
		pid := actor.NewPID(m.Address(), statsActor)
		resp, err := c.ActorSystem.Root.RequestFuture(pid, &emptypb.Empty{}, 30*time.Second).Result()
		if err != nil {
			return 0, 0, fmt.Errorf("heap of %s: %w", m.Address(), err)
		}
		v, ok := resp.(*wrapperspb.UInt64Value)
		if !ok {
			return 0, 0, fmt.Errorf("heap of %s: reply %T", m.Address(), resp)
		}
		heap += v.Value
	}
	for _, pid := range pids {
		n, err := residentSet(pid)
		if err != nil {
			return 0, 0, err
		}
		rss += n
	}
	return heap, rss, nil
}

// residentSet returns a process's resident set in bytes, from
// /proc/<pid>/status.
func residentSet(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("resident set: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) != 2 || f[1] != "kB" {
				return 0, fmt.Errorf("resident set of %d: %q: want <n> kB", pid, line)
			}
			kb, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("resident set of %d: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("resident set: no VmRSS in /proc/" + strconv.Itoa(pid) + "/status")
}

// cpuTimes returns the user and system time of each process so far, from
// /proc/<pid>/stat (0 where it cannot be read).
func cpuTimes(pids []int) []time.Duration {
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	out := make([]time.Duration, len(pids))
	for i, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(fields) < 13 {
			continue
		}
		user, _ := strconv.ParseInt(fields[11], 10, 64)
		sys, _ := strconv.ParseInt(fields[12], 10, 64)
		out[i] = time.Duration(user+sys) * tick
	}
	return out
}
