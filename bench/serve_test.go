package bench

import (
	"context"
	"io"
	"net/http"
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
		var addrs [2]string
		select {
		case addrs = <-w.found:
		case err := <-done:
			cancel()
			t.Fatalf("Serve returned %v before listening", err)
		case <-time.After(30 * time.Second):
			cancel()
			t.Fatal("Serve not listening after 30 s")
		}
		// The line comes before the App serves; an answer comes after the
		// watch has started, whatever the status.
		client := &http.Client{Timeout: 30 * time.Second}
		resp, err := client.Get("http://" + addrs[0] + "/")
		if err != nil {
			cancel()
			<-done
			t.Fatalf("%s=%q: no answer: %v", NoThreadWatchEnv, tc.env, err)
		}
		resp.Body.Close()
		if got := loom.WatchedThreads().Running; got != tc.running {
			t.Errorf("%s=%q: thread watch running %v while serving; want %v", NoThreadWatchEnv, tc.env, got, tc.running)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}

// TestServeInProcessEndsWithoutError: Serve serves the scenario and its
// metrics, and returns nil once ctx ends: the executor's shutdown and the
// metrics listener's close are not errors.
func TestServeInProcessEndsWithoutError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &lineWatcher{found: make(chan [2]string, 1)}
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeConfig{Scenario: "test-ok", Model: "pool:2", Scenarios: testCatalogue()}, w)
	}()
	var addrs [2]string
	select {
	case addrs = <-w.found:
	case err := <-done:
		t.Fatalf("Serve returned %v before listening", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Serve not listening after 30 s")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for _, url := range []string{"http://" + addrs[0] + "/", "http://" + addrs[1] + "/"} {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s: %s %q; want 200 and a body", url, resp.Status, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v after ctx ended; want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve still serving 30 s after ctx ended")
	}
}

func TestOr(t *testing.T) {
	if or("a", "b") != "a" || or("", "b") != "b" {
		t.Errorf(`or("a", "b") = %q, or("", "b") = %q; want a, b`, or("a", "b"), or("", "b"))
	}
}
