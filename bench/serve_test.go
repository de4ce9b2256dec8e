package bench

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
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

// TestServeUsesItsDir: the scenario's files go in ServeConfig.Dir when it
// is given, and in a directory of their own, empty at the start and gone
// once Serve returns, when it is not (serve.go, dir == "").
func TestServeUsesItsDir(t *testing.T) {
	given := t.TempDir()
	for _, dir := range []string{given, ""} {
		var got string
		var entries int
		sc := *testCatalogue()[0]
		sc.Serve = func(ctx context.Context, app *web.App, p Plan, d string) (func() error, error) {
			got = d
			list, err := os.ReadDir(d)
			entries = len(list)
			return nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // Serve sets the scenario up, prints its line and returns
		if err := Serve(ctx, ServeConfig{Scenario: sc.Name, Model: "virtual", Dir: dir, Scenarios: []*Scenario{&sc}}, io.Discard); err != nil {
			t.Fatalf("Serve(Dir %q): %v", dir, err)
		}
		switch {
		case dir != "" && got != dir:
			t.Errorf("Serve(Dir %q) served from %q; want the given directory", dir, got)
		case dir == "" && (got == "" || entries != 0):
			t.Errorf("Serve(Dir \"\") served from %q, holding %d files; want an empty directory of its own", got, entries)
		case dir == "":
			if _, err := os.Stat(got); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Serve(Dir \"\"): its directory %q after the return: %v; want it removed", got, err)
			}
		}
	}
	if _, err := os.Stat(given); err != nil {
		t.Errorf("the given directory after Serve: %v; want it left in place", err)
	}
}

func TestOr(t *testing.T) {
	if or("a", "b") != "a" || or("", "b") != "b" {
		t.Errorf(`or("a", "b") = %q, or("", "b") = %q; want a, b`, or("a", "b"), or("", "b"))
	}
}
