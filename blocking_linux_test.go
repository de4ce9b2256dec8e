package loom

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
)

func TestBlockingKeepsThreadsUnderTheLimit(t *testing.T) {
	switch os.Getenv(childEnv) {
	case "blocking":
		blockingChild(true)
		return
	case "unguarded":
		blockingChild(false)
		return
	}
	if testing.Short() {
		t.Skip("starts child processes with a thousand blocked threads")
	}
	out, errOut, err := runChild(t, t.Name(), "blocking")
	if err != nil || !strings.Contains(out, "calls=1000 ") {
		t.Fatalf("guarded child: %v; want every call made and exit 0\nstdout: %s\nstderr: %s", err, out, lastLines(errOut, 5))
	}
	t.Logf("guarded child: %s", lineWith(out, "calls="))
	// The control: the same calls without Blocking exhaust the threads. If
	// it survived, the guarded run above would prove nothing.
	_, errOut, err = runChild(t, t.Name(), "unguarded")
	if err == nil || !diedOfThreads(errOut) {
		t.Errorf("unguarded child: %v; want it to die of thread exhaustion\nstderr: %s", err, lastLines(errOut, 5))
	}
}

// blockingChild makes a thousand calls that each hold a thread for 200 ms,
// at once, under a thread limit of 300: through Blocking (bound 150, half
// the limit) or directly. Directly, each holds its thread for 2 s, so that
// 300 of them overlap however slowly a busy machine starts the goroutines.
func blockingChild(guarded bool) {
	hold := 200 * time.Millisecond
	if !guarded {
		hold = 2 * time.Second
	}
	debug.SetMaxThreads(300)
	SetBlockingLimit(0, FullWait)
	bound, _ := BlockingLimit()
	var inside, peak, calls atomic.Int64
	call := func() {
		n := inside.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		sleepThread(hold)
		inside.Add(-1)
		calls.Add(1)
	}
	var wg sync.WaitGroup
	for range 1000 {
		wg.Go(func() {
			if !guarded {
				call()
				return
			}
			if err := Blocking(context.Background(), call); err != nil {
				fmt.Println("Blocking:", err)
			}
		})
	}
	wg.Wait()
	samples := osthreads.NewSampler()
	threads := samples.Read().Total
	fmt.Printf("calls=%d peak=%d bound=%d threads=%d\n", calls.Load(), peak.Load(), bound, threads)
	if peak.Load() > int64(bound) {
		fmt.Println("peak above the bound")
		os.Exit(2)
	}
}
