// Package remoteecho runs the echo workload across two processes: the
// senders in this one, their echoes in a child, through each library's own
// remote transport: loom's over a NATS server (a third process), protoactor-
// go's over gRPC, hollywood's over DRPC. Pairs of a sender and its echo;
// the sender sends a batch of Batch messages and the next once the whole
// batch is back; every message counts, both ways. It reports messages per
// second, CPU per message summed over every process involved, and the
// latency of an Ask (a request and its reply) at a fixed rate below
// saturation.
package remoteecho

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/loomrt/loom/bench/peers/internal/protowarn" // before protoactor-go and hollywood register their protobuf files
)

// Batch is how many messages a sender sends before it waits for them all.
const Batch = 50

// Libraries are the transports Run knows.
var Libraries = []string{"loom", "protoactor", "hollywood"}

// Config is one run's plan.
type Config struct {
	Pairs    int           // sender–echo pairs; 64 when 0
	Warmup   time.Duration // before counting; 1 s when 0
	Duration time.Duration // counted; 4 s when 0
	AskRate  int           // Asks per second in the latency phase; 1,000 when 0
	AskFor   time.Duration // the latency phase; 3 s when 0
}

func (c Config) withDefaults() Config {
	if c.Pairs == 0 {
		c.Pairs = 64
	}
	if c.Warmup == 0 {
		c.Warmup = time.Second
	}
	if c.Duration == 0 {
		c.Duration = 4 * time.Second
	}
	if c.AskRate == 0 {
		c.AskRate = 1000
	}
	if c.AskFor == 0 {
		c.AskFor = 3 * time.Second
	}
	return c
}

// Result is what one library did.
type Result struct {
	Library     string
	Messages    int64         // counted, both ways
	Elapsed     time.Duration // the counted time
	CPU         time.Duration // user and system time of every process in it
	Processes   []string      // which, with each one's share
	Asks        int
	AskFailures int
	AskP50      time.Duration
	AskP99      time.Duration
}

// Rate returns messages per second.
func (r Result) Rate() float64 { return float64(r.Messages) / r.Elapsed.Seconds() }

// CPUPerMessage returns the CPU time per message, all processes summed.
func (r Result) CPUPerMessage() time.Duration {
	if r.Messages == 0 {
		return 0
	}
	return time.Duration(int64(r.CPU) / r.Messages)
}

// driver is a library's sending side in this process.
type driver struct {
	// ask sends one request to the echo process's asker and waits for
	// the reply.
	ask   func(ctx context.Context) error
	close func() error
}

// counters are what the senders share.
type counters struct {
	messages atomic.Int64 // both ways
	stop     atomic.Bool  // senders send no new batch once set
}

// The environment of a child process.
const (
	roleEnv    = "LOOM_REMOTE_ECHO_ROLE"    // "echo" or "nats"
	libraryEnv = "LOOM_REMOTE_ECHO_LIBRARY" // the echo's library
	addrEnv    = "LOOM_REMOTE_ECHO_ADDR"    // where the echo listens, or NATS's port
	pairsEnv   = "LOOM_REMOTE_ECHO_PAIRS"
	// ProfileEnv names a path prefix: each process of a run writes its CPU
	// profile to <prefix>.<role> (senders, echo, nats) while it lives.
	ProfileEnv = "LOOM_REMOTE_ECHO_CPUPROFILE"
)

// Profile starts a CPU profile of this process, in role, to the path
// ProfileEnv names, and returns what stops it; it does nothing when
// ProfileEnv is unset.
func Profile(role string) (stop func() error, err error) {
	prefix := os.Getenv(ProfileEnv)
	if prefix == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(prefix + "." + role)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// Child runs this process as a child that Run started, and reports
// whether it was one: main calls it first and exits with its error if so.
func Child() (bool, error) {
	role := os.Getenv(roleEnv)
	if role == "" {
		return false, nil
	}
	stop, err := Profile(role)
	if err != nil {
		return true, err
	}
	return true, errors.Join(child(role), stop())
}

func child(role string) error {
	addr := os.Getenv(addrEnv)
	ready := func() { fmt.Println("ready") }
	switch role {
	case "nats":
		return serveNATS(addr, ready, os.Stdin)
	case "echo":
		pairs, err := strconv.Atoi(os.Getenv(pairsEnv))
		if err != nil {
			return fmt.Errorf("%s: %w", pairsEnv, err)
		}
		return serveEcho(os.Getenv(libraryEnv), addr, pairs, ready, os.Stdin)
	}
	return fmt.Errorf("%s=%q: want echo or nats", roleEnv, role)
}

// process is a child process of the run.
type process struct {
	name  string
	cmd   *exec.Cmd
	stdin io.Closer
}

// start runs this program as a child with env and waits for it to print
// "ready".
func start(name string, env ...string) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	// The protobuf runtime's warning about protoactor-go's and hollywood's
	// clashing file names, printed by this process already, once is enough.
	cmd.Env = append(append(os.Environ(), "GOLANG_PROTOBUF_REGISTRATION_CONFLICT=ignore"), env...)
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
	p := &process{name: name, cmd: cmd, stdin: stdin}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		return nil, errors.Join(fmt.Errorf("%s: %q, %v", name, line, err), p.stop())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return p, nil
}

// stop closes the child's stdin, which ends it, and waits.
func (p *process) stop() error {
	p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("%s did not stop in 15 s", p.name)
	}
}

// waitStdin returns when r ends: the parent has gone or closed it.
func waitStdin(r io.Reader) { _, _ = io.Copy(io.Discard, r) }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Run runs library's remote echo with cfg and returns its figures.
func Run(ctx context.Context, library string, cfg Config) (Result, error) {
	cfg = cfg.withDefaults()
	res := Result{Library: library}
	if !slices.Contains(Libraries, library) {
		return res, fmt.Errorf("remote echo: unknown library %q (want one of %v)", library, Libraries)
	}
	var procs []*process
	defer func() {
		for i := len(procs) - 1; i >= 0; i-- {
			_ = procs[i].stop()
		}
	}()
	port, err := freePort()
	if err != nil {
		return res, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if library == "loom" {
		nats, err := start("nats", roleEnv+"=nats", addrEnv+"="+strconv.Itoa(port))
		if err != nil {
			return res, err
		}
		procs = append(procs, nats)
		addr = "nats://" + addr
	}
	echo, err := start("echo", roleEnv+"=echo", libraryEnv+"="+library, addrEnv+"="+addr, pairsEnv+"="+strconv.Itoa(cfg.Pairs))
	if err != nil {
		return res, err
	}
	procs = append(procs, echo)

	var c counters
	d, err := newDriver(library, addr, cfg.Pairs, &c)
	if err != nil {
		return res, err
	}
	closed := false
	defer func() {
		if !closed {
			_ = d.close()
		}
	}()
	pids := []int{os.Getpid()}
	names := []string{"senders"}
	for _, p := range procs {
		pids = append(pids, p.cmd.Process.Pid)
		names = append(names, p.name)
	}

	if err := sleep(ctx, cfg.Warmup); err != nil {
		return res, err
	}
	m0, cpu0, t0 := c.messages.Load(), cpuTimes(pids), time.Now()
	if err := sleep(ctx, cfg.Duration); err != nil {
		return res, err
	}
	m1, cpu1, t1 := c.messages.Load(), cpuTimes(pids), time.Now()
	c.stop.Store(true)
	res.Messages, res.Elapsed = m1-m0, t1.Sub(t0)
	for i := range pids {
		used := cpu1[i] - cpu0[i]
		res.CPU += used
		res.Processes = append(res.Processes, fmt.Sprintf("%s %.0f%%", names[i], 100*used.Seconds()/res.Elapsed.Seconds()))
	}
	if res.Messages == 0 {
		return res, fmt.Errorf("remote echo %s: no message came back in %v", library, cfg.Duration)
	}
	// Let the batches in flight come back before the latency phase.
	if err := sleep(ctx, 500*time.Millisecond); err != nil {
		return res, err
	}
	lat, failures := askAtRate(ctx, d.ask, cfg.AskRate, cfg.AskFor)
	res.Asks, res.AskFailures = len(lat)+failures, failures
	if len(lat) > 0 {
		slices.Sort(lat)
		res.AskP50, res.AskP99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	closed = true
	return res, d.close()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// askAtRate starts an Ask every 1/rate for d, each on its own goroutine so
// that a slow one delays no other, and times each from its planned start.
func askAtRate(ctx context.Context, ask func(context.Context) error, rate int, d time.Duration) ([]time.Duration, int) {
	interval := time.Second / time.Duration(rate)
	n := int(d / interval)
	lat := make([]time.Duration, n)
	failed := make([]bool, n)
	var wg sync.WaitGroup
	begin := time.Now()
	for i := range n {
		planned := begin.Add(time.Duration(i) * interval)
		if wait := time.Until(planned); wait > 0 {
			time.Sleep(wait)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := ask(actx); err != nil {
				failed[i] = true
				return
			}
			lat[i] = time.Since(planned)
		}()
	}
	wg.Wait()
	var ok []time.Duration
	failures := 0
	for i := range n {
		if failed[i] {
			failures++
			continue
		}
		ok = append(ok, lat[i])
	}
	return ok, failures
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
