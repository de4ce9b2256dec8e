package loom

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/loomrt/loom/internal/osthreads"
)

// threads:N with N at the process's thread limit (10,000 by default) used
// to log "serving" and then die with "fatal error: thread exhaustion". It
// is refused before a thread starts, with the limit and the headroom named.
func TestThreadsPastTheThreadLimitRefused(t *testing.T) {
	limit := osthreads.MaxThreads()
	spec := fmt.Sprintf("threads:%d", limit)
	e, err := Parse(spec)
	if err == nil {
		shutdown(t, e)
		t.Fatalf("Parse(%q) = nil error; want one naming the thread limit", spec)
	}
	for _, want := range []string{
		fmt.Sprintf("build executor spec %q: ", spec),
		fmt.Sprintf("the process's thread limit of %d (debug.SetMaxThreads)", limit),
		fmt.Sprintf("the runtime's headroom of %d (GOMAXPROCS+%d)", runtime.GOMAXPROCS(0)+osthreads.HeadroomFixed, osthreads.HeadroomFixed),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %q; want it to contain %q", spec, err, want)
		}
	}
	if !errors.Is(err, ErrThreadLimit) || !errors.Is(err, ErrBadSpec) {
		t.Errorf("Parse(%q) error %v; want ErrThreadLimit and ErrBadSpec", spec, err)
	}

	defer func() {
		v := recover()
		msg, _ := v.(string)
		if want := fmt.Sprintf("loom: Threads(%d): not enough OS threads: ", limit); !strings.HasPrefix(msg, want) {
			t.Errorf("Threads(%d) panicked with %v; want a message starting %q", limit, v, want)
		}
	}()
	Threads(limit)
}

// The most workers the check lets through really fit: a child process with
// its thread limit lowered to 100 builds threads at that most, keeps every
// worker busy while it serves HTTP on loopback and collects garbage, and
// exits normally; one more worker is refused. It runs at GOMAXPROCS 1, 2
// and 8, as the headroom grows with it.
func TestThreadsAtTheMostFit(t *testing.T) {
	if os.Getenv("LOOM_TEST_THREADS_CHILD") != "" {
		threadsAtTheMostChild()
		return
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, procs := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestThreadsAtTheMostFit$", "-test.count=1")
			cmd.Env = append(os.Environ(), "LOOM_TEST_THREADS_CHILD=1", "GOMAXPROCS="+strconv.Itoa(procs))
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "fit: ") {
				t.Fatalf("child: %v\n%.2000s", err, out)
			}
			line := string(out[strings.Index(string(out), "fit: "):])
			line, _, _ = strings.Cut(line, "\n")
			t.Log(line)
		})
	}
}

// threadsAtTheMostChild is TestThreadsAtTheMostFit's child process. A crash
// (thread exhaustion) fails the parent.
func threadsAtTheMostChild() {
	const limit = 100
	debug.SetMaxThreads(limit)
	most := limit - osthreads.Live() - osthreads.Headroom()
	if err := checkThreads(most + 1); !errors.Is(err, ErrThreadLimit) {
		fmt.Printf("threads:%d (one past the most) = %v; want ErrThreadLimit\n", most+1, err)
		os.Exit(1)
	}
	e, err := (Spec{Kind: KindThreads, Workers: most, Queue: most}).New()
	if err != nil {
		fmt.Printf("threads:%d (the most) = %v; want it built\n", most, err)
		os.Exit(1)
	}
	var busy sync.WaitGroup
	release := make(chan struct{})
	for range most {
		busy.Add(1)
		if err := e.Go(context.Background(), func(context.Context) { busy.Done(); <-release }); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	}
	busy.Wait()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
	go srv.Serve(ln)
	var clients sync.WaitGroup
	for range 32 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			for range 10 {
				resp, err := http.Get("http://" + ln.Addr().String())
				if err != nil {
					fmt.Println(err)
					os.Exit(1)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				runtime.GC()
			}
		}()
	}
	clients.Wait()
	srv.Close()
	close(release)
	if err := e.Shutdown(context.Background()); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Printf("fit: %d workers under a limit of %d at GOMAXPROCS %d\n", most, limit, runtime.GOMAXPROCS(0))
	os.Exit(0)
}
