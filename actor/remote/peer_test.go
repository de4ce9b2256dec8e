package remote

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loomrt/loom/actor"
)

// A receiving node starved of CPU (stopped outright) does not make its
// sender's memory grow: the sender publishes at its own pace, the NATS
// server buffers up to its per-client bound and then cuts the slow
// consumer, and whatever the sender cannot publish past WithMaxPending goes
// to dead letters. Once the receiver runs again it reconnects and answers.
func TestSlowConsumerBoundsSender(t *testing.T) {
	if testing.Short() {
		t.Skip("sends for 2 s")
	}
	ns := startNATSProcess(t)
	const maxPending = 4 << 20
	a := join(t, ns, "a", WithMaxPending(maxPending), WithFailureDetector(250*time.Millisecond, 30*time.Second))
	c := startChild(t, ns, "", "slow")
	waitMembers(t, a, "slow")
	ref := a.Ref("slow", "/echo")
	ask := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := ref.Ask(ctx, "ping")
		return err
	}
	if err := ask(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	var backpressure atomic.Int64
	t.Cleanup(a.System().SubscribeDeadLetters(func(d actor.DeadLetter) {
		if errors.Is(d.Reason, ErrBackpressure) {
			backpressure.Add(1)
		}
	}))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	baseline := ms.HeapInuse

	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 1024)
	stop := make(chan struct{})
	var sent atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for range 100 {
					ref.Tell(payload)
				}
				sent.Add(100)
			}
		}()
	}
	peak := baseline
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	close(stop)
	wg.Wait()
	if err := c.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	growth := int64(peak) - int64(baseline)
	t.Logf("sent %d KiB messages in 2 s to a stopped node; heap grew %d MiB at most; %d dead letters for backpressure; stats %+v",
		sent.Load(), growth>>20, backpressure.Load(), a.Stats())
	if growth > 64<<20 {
		t.Errorf("heap grew %d MiB while the receiver was stopped; want bounded (< 64 MiB)", growth>>20)
	}
	deadline := time.Now().Add(30 * time.Second)
	for ask(time.Second) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the receiver did not answer 30 s after it resumed")
		}
	}
}
