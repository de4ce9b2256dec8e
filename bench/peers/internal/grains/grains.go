// Package grains runs Workload W, the sharded-entities workload, on
// protoactor-go's cluster grains (virtual actors), as the peer that loom's
// sharded entities are measured against.
//
// Workload W: Hosts member processes host the grains (one kind, "counter");
// a driver in a process of its own joins the cluster as a client and hosts
// none. Grain ids are "e0" … "e<Grains-1>". The driver first activates every
// grain with one request each, then for Duration keeps InFlight requests in
// flight, ids chosen round-robin. Every request is a request/response whose
// reply carries the grain's own id and its counter after the increment; the
// driver checks both (the n-th request to an id must see n). Messages per
// second are verified replies per second.
//
// Every process is this program re-executed (see Child). Placement uses
// protoactor-go's disthash identity lookup (rendezvous hashing over the
// members) and its gRPC remote, on loopback. Membership is a fixed list of
// the hosting processes (a cluster provider of a few lines here): the run
// neither joins nor loses members, so the provider never touches the
// message path.
//
//	func main() {
//		if child, err := grains.Child(); child { // a host or the driver
//			if err != nil {
//				log.Fatal(err)
//			}
//			return
//		}
//		r, err := grains.Run(context.Background(), grains.Config{}) // or grains.Quick()
//		if err != nil {
//			log.Fatal(err)
//		}
//		fmt.Println(r.Rate(), r.CPUPerMessage(), r.ActivationP99, r.HeapPerActivation())
//	}
package grains

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Kind is the grain kind every host registers.
const Kind = "counter"

// Config is one run's plan. The zero value is Workload W.
type Config struct {
	Hosts    int           // hosting member processes; 3 when 0
	Grains   int           // grain ids e0…; 100,000 when 0
	InFlight int           // requests in flight, in both phases; 2,000 when 0; at most Grains
	Duration time.Duration // the load phase; 10 s when 0
	Timeout  time.Duration // bounds the whole run, processes started to stopped; 2 min when 0
}

// Quick returns a short run's plan: Workload W's shape on 5,000 grains,
// 500 in flight, a 2 s load phase.
func Quick() Config {
	return Config{Hosts: 3, Grains: 5000, InFlight: 500, Duration: 2 * time.Second, Timeout: time.Minute}
}

func (c Config) withDefaults() (Config, error) {
	for _, f := range []struct {
		name  string
		value int64
	}{{"hosts", int64(c.Hosts)}, {"grains", int64(c.Grains)}, {"in-flight", int64(c.InFlight)}, {"duration", int64(c.Duration)}, {"timeout", int64(c.Timeout)}} {
		if f.value < 0 {
			return c, fmt.Errorf("grains: %s is %d: want 0 (the default) or more", f.name, f.value)
		}
	}
	if c.Hosts == 0 {
		c.Hosts = 3
	}
	if c.Grains == 0 {
		c.Grains = 100_000
	}
	if c.InFlight == 0 {
		c.InFlight = 2000
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Minute
	}
	// Round-robin with no more in flight than ids keeps one request per id
	// in flight, so the n-th request to an id is the one that sees n.
	if c.InFlight > c.Grains {
		return c, fmt.Errorf("grains: %d in flight over %d grains: want at most one request in flight per grain", c.InFlight, c.Grains)
	}
	return c, nil
}

// Result is what one run measured.
type Result struct {
	Config Config

	// The activation phase: one request to every grain, InFlight at once.
	ActivationTime time.Duration // from the first request to the last reply
	ActivationP50  time.Duration // of a first request, sent to verified reply
	ActivationP99  time.Duration

	// The load phase.
	Replies   int64         // verified replies in the counted time
	Elapsed   time.Duration // the counted time
	CPU       time.Duration // user and system time of the driver and every host in it
	Processes []string      // each process with its share of a core

	// The hosts, summed, before and after the activation phase: the Go
	// heap after a collection, and the resident set.
	HeapBefore, HeapAfter uint64
	RSSBefore, RSSAfter   uint64
}

// Rate returns verified replies per second in the load phase.
func (r Result) Rate() float64 { return float64(r.Replies) / r.Elapsed.Seconds() }

// CPUPerMessage returns the CPU time of every process per verified reply.
func (r Result) CPUPerMessage() time.Duration {
	if r.Replies == 0 {
		return 0
	}
	return time.Duration(int64(r.CPU) / r.Replies)
}

// HeapPerActivation returns the hosts' heap growth per idle activation, in bytes.
func (r Result) HeapPerActivation() float64 {
	return (float64(r.HeapAfter) - float64(r.HeapBefore)) / float64(r.Config.Grains)
}

// RSSPerActivation returns the hosts' resident-set growth per idle activation, in bytes.
func (r Result) RSSPerActivation() float64 {
	return (float64(r.RSSAfter) - float64(r.RSSBefore)) / float64(r.Config.Grains)
}

// The environment of a child process.
const (
	roleEnv     = "LOOM_GRAINS_ROLE"      // "host" or "driver"
	configEnv   = "LOOM_GRAINS_CONFIG"    // the driver's Config, as JSON
	topologyEnv = "LOOM_GRAINS_TOPOLOGY"  // the driver's members: id@host:port,…
	pidsEnv     = "LOOM_GRAINS_HOST_PIDS" // the hosts' process ids, for CPU and RSS
)

// Child runs this process as a child that Run started, and reports whether
// it was one: main (or TestMain) calls it first and exits with its error if
// so.
func Child() (bool, error) {
	switch role := os.Getenv(roleEnv); role {
	case "":
		return false, nil
	case "host":
		return true, host(os.Stdin, os.Stdout)
	case "driver":
		return true, drive(os.Stdout)
	default:
		return true, fmt.Errorf("%s=%q: want host or driver", roleEnv, role)
	}
}

// Run runs Workload W as cfg sets it and returns its figures. It starts
// cfg.Hosts hosting processes and a driver process, all this program
// re-executed, and stops them all before it returns, within cfg.Timeout
// (or when ctx ends). A wrong or missing reply is an error.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	var procs []*process
	defer func() {
		for i := len(procs) - 1; i >= 0; i-- {
			_ = procs[i].stop()
		}
	}()
	for i := range cfg.Hosts {
		p, err := start(fmt.Sprint("host-", i+1), roleEnv+"=host")
		if err != nil {
			return Result{}, err
		}
		procs = append(procs, p)
	}
	var members, pids []string
	for _, p := range procs {
		line, err := p.line(ctx)
		if err != nil {
			return Result{}, err
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "member" {
			return Result{}, fmt.Errorf("%s: %q: want member <id> <address>", p.name, line)
		}
		members = append(members, f[1]+"@"+f[2])
		pids = append(pids, strconv.Itoa(p.cmd.Process.Pid))
	}
	topology := strings.Join(members, ",")
	for _, p := range procs {
		if _, err := fmt.Fprintf(p.stdin, "topology %s\n", topology); err != nil {
			return Result{}, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	for _, p := range procs {
		if line, err := p.line(ctx); err != nil || line != "ready" {
			return Result{}, fmt.Errorf("%s: %q, %v: want ready", p.name, line, err)
		}
	}

	plan, err := json.Marshal(cfg)
	if err != nil {
		return Result{}, err
	}
	driver, err := start("driver", roleEnv+"=driver", configEnv+"="+string(plan), topologyEnv+"="+topology, pidsEnv+"="+strings.Join(pids, ","))
	if err != nil {
		return Result{}, err
	}
	procs = append(procs, driver)
	line, err := driver.line(ctx)
	if err != nil {
		return Result{}, err
	}
	report, ok := strings.CutPrefix(line, "result ")
	if !ok {
		return Result{}, fmt.Errorf("driver: %q: want result <json>", line)
	}
	var out driverReport
	if err := json.Unmarshal([]byte(report), &out); err != nil {
		return Result{}, fmt.Errorf("driver's result: %w", err)
	}
	if out.Failed > 0 || out.Wrong > 0 {
		return out.Result, fmt.Errorf("grains: %d requests failed and %d replies were wrong; the first: %s", out.Failed, out.Wrong, out.First)
	}
	return out.Result, nil
}

// driverReport is the driver's one line of output.
type driverReport struct {
	Result
	Failed int64  // requests that got an error, in either phase
	Wrong  int64  // replies with the wrong id or count
	First  string // the first failure or wrong reply
}

// process is a child process of the run.
type process struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
}

// start runs this program as a child with env added to its environment.
func start(name string, env ...string) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &process{name: name, cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout)}, nil
}

// line returns the child's next line of output, without its newline. When
// ctx ends first, it kills the child, which ends the read.
func (p *process) line(ctx context.Context) (string, error) {
	type read struct {
		s   string
		err error
	}
	done := make(chan read, 1)
	go func() {
		s, err := p.stdout.ReadString('\n')
		done <- read{strings.TrimSuffix(s, "\n"), err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return r.s, fmt.Errorf("%s: %w", p.name, r.err)
		}
		return r.s, nil
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		<-done
		return "", fmt.Errorf("%s: %w", p.name, ctx.Err())
	}
}

// stop closes the child's stdin, which ends it, and waits for it; it kills
// a child that has not ended in 15 s.
func (p *process) stop() error {
	p.stdin.Close()
	done := make(chan error, 1)
	go func() {
		// Wait closes the pipe, so it comes after the last read.
		_, _ = io.Copy(io.Discard, p.stdout)
		done <- p.cmd.Wait()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
		return fmt.Errorf("%s did not stop in 15 s", p.name)
	}
}
