// Package cmdtest checks the run functions of loom's example programs, which
// share one shape: run(ctx, args) parses its flags, serves until ctx ends,
// and returns nil, or an error that names what was wrong with its input.
package cmdtest

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// Run is an example program's entry point, called by its main.
type Run func(ctx context.Context, args []string) error

// StopsCleanly starts run with args (which should listen on 127.0.0.1:0),
// ends its context, and fails t unless run then returns nil.
func StopsCleanly(t *testing.T, run Run, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, args) }()
	time.Sleep(50 * time.Millisecond) // let it start listening; a stop before that is fine too
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run after cancel: got %v; want nil", err)
	}
}

// RejectsStrayArgument calls run with args and a stray positional argument,
// and fails t unless run returns an error naming it.
func RejectsStrayArgument(t *testing.T, run Run, args ...string) {
	t.Helper()
	// A cancelled context: if the argument were ignored, run would serve
	// and stop at once, returning nil, rather than hang.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := run(ctx, append(args, "8080"))
	if err == nil || !strings.Contains(err.Error(), `"8080"`) {
		t.Errorf("run with a stray argument: got %v; want an error naming it", err)
	}
}

// A Server serves on a listener until its context ends: a *web.App.
type Server interface {
	Serve(ctx context.Context, ln net.Listener) error
}

// Serve starts srv on a free loopback port and returns its base URL,
// "http://127.0.0.1:port". At t's cleanup it ends srv's context, waits for
// Serve to return, and fails t unless Serve returned nil; cleanups
// registered before the call (stopping what srv uses) run after that.
func Serve(t *testing.T, srv Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}
