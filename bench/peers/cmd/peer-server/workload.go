package main

import (
	"context"
	"fmt"
	"time"
)

// A workload is what GET / does before it answers.
type workload int

const (
	hello workload = iota // answer at once
	sleep                 // wait, then answer with a longer body
)

// Bodies are those of the Cask benchmarks in the seeds, so that the runner
// checks peers and loom's own servers against the same marker.
const (
	helloBody = "Hello World!"
	sleepBody = "Hello World! Hello World! Hello World!"
)

func parseWorkload(s string) (workload, error) {
	switch s {
	case "hello":
		return hello, nil
	case "sleep":
		return sleep, nil
	}
	return 0, fmt.Errorf("unknown workload %q (want hello or sleep)", s)
}

func (w workload) String() string {
	if w == sleep {
		return "sleep"
	}
	return "hello"
}

// respond does the workload's work and returns the body to send. The sleep
// ends early when the request's context does (the client went away), so a
// disconnect does not hold a goroutine for the rest of the sleep; the body is
// then never written.
func (w workload) respond(ctx context.Context, d time.Duration) string {
	if w == hello {
		return helloBody
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return sleepBody
}
