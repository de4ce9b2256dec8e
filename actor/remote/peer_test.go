package remote

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loomrt/loom/actor"
)

// A slow consumer does not make its sender's memory grow. A receiving node
// starved of CPU (stopped outright): the sender publishes at its own pace,
// and the NATS server buffers up to its per-client bound, then cuts the
// slow consumer. A NATS server that stops reading: publishing blocks, the
// messages waiting for the node reach WithMaxPending, and what comes past
// it goes to dead letters. Once the stopped process runs again, the
// receiver answers.
func TestSlowConsumerBoundsSender(t *testing.T) {
	if testing.Short() {
		t.Skip("sends for 2 s, twice")
	}
	for _, stopped := range []string{"receiver", "nats"} {
		t.Run(stopped, func(t *testing.T) {
			ns := startNATSProcess(t)
			const maxPending = 4096 // messages of 1 KiB
			a := join(t, ns, "a", WithMaxPending(maxPending), WithFailureDetector(250*time.Millisecond, 30*time.Second))
			// Both nodes allow a silence longer than the stop: a stalled
			// server or a stopped process past the bound is a death.
			c := startChild(t, ns, "", "slow", failAfterEnv+"=30s")
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

			victim := c.cmd.Process
			if stopped == "nats" {
				victim = ns.proc.cmd.Process
			}
			if err := victim.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
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
							ref.Tell(make([]byte, 1024)) // each its own, as real messages are
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
			if err := victim.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			growth := int64(peak) - int64(baseline)
			t.Logf("%s stopped: sent %d KiB messages in 2 s; heap grew %d MiB at most; %d dead letters for backpressure",
				stopped, sent.Load(), growth>>20, backpressure.Load())
			if growth > 64<<20 {
				t.Errorf("heap grew %d MiB while the %s was stopped; want bounded (< 64 MiB)", growth>>20, stopped)
			}
			deadline := time.Now().Add(30 * time.Second)
			for ask(time.Second) != nil {
				if time.Now().After(deadline) {
					t.Fatalf("the receiver did not answer 30 s after the %s resumed", stopped)
				}
			}
		})
	}
}

// What is sent to a node never heard from is held, not published to a
// subject nobody reads: when the node is declared down, each message is a
// dead letter with the reason, and an Ask to it fails with it.
func TestUnheardNodeMessagesAreDeadLetters(t *testing.T) {
	ns := startNATS(t)
	a := join(t, ns, "a", WithFailureDetector(250*time.Millisecond, time.Second))
	dead := collectDeadLetters(t, a.System())
	ref := a.Ref("ghost", "/sink")
	ref.Tell("lost")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := ref.Ask(ctx, "asked"); !errors.Is(err, ErrNodeDown) {
		t.Errorf("Ask to a node never heard from = %v; want ErrNodeDown", err)
	}
	d := dead.wait(t, func(d actor.DeadLetter) bool { return d.Message == "lost" })
	if !errors.Is(d.Reason, ErrNodeDown) || !strings.Contains(d.Reason.Error(), "ghost not heard from") {
		t.Errorf("dead letter's reason %v; want ErrNodeDown naming ghost, not heard from", d.Reason)
	}
	if d.Recipient != ref {
		t.Errorf("dead letter to %v; want %v", d.Recipient, ref)
	}
}

// What is sent to a node before it joins is delivered once it is heard
// from, within the failure bound.
func TestMessagesBeforeJoinAreHeld(t *testing.T) {
	ns := startNATS(t)
	a := join(t, ns, "a")
	ref := a.Ref("late", "/sink")
	ref.Tell("early")
	got := make(chan string, 1)
	sys := newSystem(t)
	spawn(t, sys, "sink", func(_ *actor.Context, msg any) {
		if s, ok := msg.(string); ok {
			got <- s
		}
	})
	late, err := Join(sys, "late", WithURL(ns.url()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := late.Leave(ctx); err != nil {
			t.Error(err)
		}
	}()
	if s := recv(t, got); s != "early" {
		t.Errorf("received %q; want the message sent before the node joined", s)
	}
}
