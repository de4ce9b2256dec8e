package bench

import (
	"context"
	"testing"
	"time"

	"github.com/loomrt/loom"
)

// TestServeWithoutThreadWatch serves a scenario in this process with and
// without NoThreadWatchEnv: web's thread watch runs while it serves, unless
// the variable is 1.
func TestServeWithoutThreadWatch(t *testing.T) {
	for _, tc := range []struct {
		env     string
		running bool
	}{
		{"", true},
		{"1", false},
	} {
		t.Setenv(NoThreadWatchEnv, tc.env)
		ctx, cancel := context.WithCancel(context.Background())
		w := &lineWatcher{found: make(chan [2]string, 1)}
		done := make(chan error, 1)
		go func() {
			done <- Serve(ctx, ServeConfig{Scenario: "test-ok", Model: "virtual", Scenarios: testCatalogue()}, w)
		}()
		select {
		case <-w.found:
		case err := <-done:
			cancel()
			t.Fatalf("Serve returned %v before listening", err)
		case <-time.After(30 * time.Second):
			cancel()
			t.Fatal("Serve not listening after 30 s")
		}
		if got := loom.WatchedThreads().Running; got != tc.running {
			t.Errorf("%s=%q: thread watch running %v while serving; want %v", NoThreadWatchEnv, tc.env, got, tc.running)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}
