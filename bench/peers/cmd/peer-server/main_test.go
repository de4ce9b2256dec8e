package main

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// fasthttp keeps a goroutine that refreshes its Date header for the
		// life of the process, and a stopped server's worker pool cleaner
		// sleeps out its 10 s interval before it sees the stop: neither is
		// the peer server's to end.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
	)
}
