package main

import (
	"context"
	"fmt"
	"time"
)

// A workload is what GET / does before it answers.
type workload int

const (
	hello     workload = iota // answer at once
	sleep                     // wait, then answer with a longer body
	block                     // hold the OS thread in a system call, then answer (GET /block, nethttp only)
	actorEcho                 // GET /echo runs a pair of actors (actor libraries only; see actorecho.go)
	// TechEmpower's test types, each served at its name (GET /db, ...;
	// see techempower.go).
	teJSON
	tePlaintext
	teDB
	teQueries
	teFortunes
	teUpdates
)

// teNames are the TechEmpower workloads' names, also their paths.
var teNames = map[workload]string{
	teJSON: "json", tePlaintext: "plaintext", teDB: "db", teQueries: "queries", teFortunes: "fortunes", teUpdates: "updates",
}

// techEmpower reports whether w is one of TechEmpower's test types.
func (w workload) techEmpower() bool { return teNames[w] != "" }

// Bodies are those of the Cask benchmarks in the seeds, so that the runner
// checks peers and loom's own servers against the same marker.
const (
	helloBody = "Hello World!"
	sleepBody = "Hello World! Hello World! Hello World!"
	blockBody = "held an OS thread"
)

func parseWorkload(s string) (workload, error) {
	switch s {
	case "hello":
		return hello, nil
	case "sleep":
		return sleep, nil
	case "block":
		return block, nil
	case "actor-echo":
		return actorEcho, nil
	}
	for w, name := range teNames {
		if s == name {
			return w, nil
		}
	}
	return 0, fmt.Errorf("unknown workload %q (want hello, sleep, block, actor-echo, or a TechEmpower test: json, plaintext, db, queries, fortunes, updates)", s)
}

func (w workload) String() string {
	if name := teNames[w]; name != "" {
		return name
	}
	switch w {
	case sleep:
		return "sleep"
	case block:
		return "block"
	case actorEcho:
		return "actor-echo"
	}
	return "hello"
}

// path is where the workload is served: GET /block for block, as loom's own
// pinning server does, so that both take the same load; GET / otherwise.
func (w workload) path() string {
	if w == block {
		return "/block"
	}
	return "/{$}"
}

// respond does the workload's work and returns the body to send. The sleep
// ends early when the request's context does (the client went away), so a
// disconnect does not hold a goroutine for the rest of the sleep; the body is
// then never written.
func (w workload) respond(ctx context.Context, d time.Duration) string {
	switch w {
	case hello:
		return helloBody
	case block:
		// Nothing bounds the threads held: this is the unguarded control
		// of loom bench's pinning scenario.
		blockThread(d)
		return blockBody
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return sleepBody
}
