// Package echo runs the echo workload after Akka's ActorBenchmark on loom's
// actors and on the libraries they are measured against, each the way its
// users write actors: pairs of a sender and its echo; told to run n rounds,
// the sender sends a batch of Batch messages, its echo sends each back, and
// the next batch goes once the whole batch is back. Every message is one
// pointer, made once per pair, that carries the sender's address, so no
// library pays for a sender envelope or a reply future.
//
// The benchmark in bench/peers runs every pair at once (RunAll); the peer
// server lends one pair to each request (Run), as loom bench's own
// actor-echo server does.
package echo

import (
	"context"
	"errors"
	"fmt"
	"sync"

	_ "github.com/loomrt/loom/bench/peers/internal/protowarn" // before protoactor-go and hollywood register their protobuf files
)

// Batch is how many messages a sender sends before it waits for them all.
const Batch = 50

// Libraries are the names New knows, in the order the benchmark runs them:
// loom's actors on three dispatchers, protoactor-go, hollywood, and bare
// goroutine-and-channel pairs (the baseline).
var Libraries = []string{"loom-pool", "loom-virtual", "loom-pinned", "protoactor", "hollywood", "channels"}

// Pairs are the echo pairs of one library. Run and RunAll may be called
// from many goroutines, each with its own pairs; a pair runs one run at a
// time.
type Pairs struct {
	start []func(rounds int) // tells sender i to run rounds rounds
	done  []chan struct{}    // receives when sender i's last echo is back
	close func() error
}

// New starts n pairs of library (one of Libraries). Close stops them.
func New(library string, n int) (*Pairs, error) {
	if n < 1 {
		return nil, fmt.Errorf("echo: %d pairs: want at least one", n)
	}
	p := &Pairs{start: make([]func(int), n), done: make([]chan struct{}, n)}
	for i := range p.done {
		p.done[i] = make(chan struct{}, 1)
	}
	var err error
	switch library {
	case "loom-pool", "loom-virtual", "loom-pinned":
		err = p.loom(library[len("loom-"):])
	case "protoactor":
		p.protoactor()
	case "hollywood":
		err = p.hollywood()
	case "channels":
		p.channels()
	default:
		return nil, fmt.Errorf("echo: unknown library %q (want one of %v)", library, Libraries)
	}
	if err != nil {
		return nil, fmt.Errorf("echo: %s: %w", library, err)
	}
	return p, nil
}

// Len returns the number of pairs.
func (p *Pairs) Len() int { return len(p.start) }

// Run runs rounds rounds on pair i and returns when its last echo is back,
// or with ctx's error when ctx ends first: the pair may then still be
// echoing, and must not be run again.
func (p *Pairs) Run(ctx context.Context, i, rounds int) error {
	if rounds < 1 {
		return fmt.Errorf("echo: %d rounds: want at least one", rounds)
	}
	p.start[i](rounds)
	select {
	case <-p.done[i]:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("echo: pair %d not done: %w", i, ctx.Err())
	}
}

// RunAll runs rounds rounds on every pair at once and returns when all are
// done, or with ctx's error when ctx ends first.
func (p *Pairs) RunAll(ctx context.Context, rounds int) error {
	if rounds < 1 {
		return fmt.Errorf("echo: %d rounds: want at least one", rounds)
	}
	for _, start := range p.start {
		start(rounds)
	}
	for i, done := range p.done {
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("echo: pair %d of %d not done: %w", i, len(p.done), ctx.Err())
		}
	}
	return nil
}

// Close stops the pairs and waits for them.
func (p *Pairs) Close() error { return p.close() }

// rounds is a sender's count of its batches, the same in every library:
// begin starts n rounds; returned counts one message back and reports
// whether the next batch is due, signalling done after the last.
type rounds struct {
	left, received int
	done           chan struct{}
}

// start tells a sender to run rounds rounds.
type start struct{ rounds int }

func (r *rounds) begin(n int) { r.left, r.received = n, 0 }

func (r *rounds) returned() bool {
	r.received++
	if r.received < Batch {
		return false
	}
	r.received = 0
	if r.left--; r.left == 0 {
		r.done <- struct{}{}
		return false
	}
	return true
}

// waitAll waits for every f to return, or ctx to end.
func waitAll(ctx context.Context, fs []func()) error {
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Go(f)
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return nil
	case <-ctx.Done():
		return errors.New("actors not stopped: " + ctx.Err().Error())
	}
}
