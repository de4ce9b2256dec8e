package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/harness/cmdtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(nodeEnv); name != "" {
		if err := runNode(context.Background(), name, os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, name+":", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// Three counter nodes share the keys; one is killed with SIGKILL: the front
// logs it down and its counter terminated within the failure bound, and
// every key is served again by the survivors.
func TestKilledNodeKeysMove(t *testing.T) {
	ns, err := startNATS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	c, err := start(ns.ClientURL(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	base := cmdtest.Serve(t, c.front.app)

	keys := []string{"apples", "pears", "plums", "figs", "dates", "limes", "kiwis", "grapes", "melons", "cherries"}
	holders := map[string]bool{}
	for _, k := range keys {
		status, body := get(t, base+"/incr?key="+k)
		if status != 200 || !strings.HasPrefix(body, k+"=1 on counter-") {
			t.Fatalf("GET /incr?key=%s: %d %q", k, status, body)
		}
		holders[body[strings.LastIndex(body, " ")+1:]] = true
	}
	if len(holders) < 2 {
		t.Errorf("keys held by %v; want spread over the nodes", holders)
	}

	victim := c.workers[1]
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var events string
	for {
		_, events = get(t, base+"/events")
		if strings.Contains(events, victim.name+" down") && strings.Contains(events, "/counter@"+victim.name+" terminated") {
			break
		}
		if time.Since(killed) > 15*time.Second {
			t.Fatalf("15 s after the kill, the front's events are:\n%s", events)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%v after SIGKILL the front had logged:\n%s", time.Since(killed), events)
	if !strings.Contains(events, "remote: node down") {
		t.Errorf("events do not give the reason:\n%s", events)
	}
	for _, k := range keys {
		status, body := get(t, base+"/incr?key="+k)
		if status != 200 || strings.HasSuffix(body, " on "+victim.name) {
			t.Errorf("GET /incr?key=%s after the kill: %d %q; want a survivor's count", k, status, body)
		}
	}
}

func TestRejectsStrayArgument(t *testing.T) {
	cmdtest.RejectsStrayArgument(t, run, "-addr", "127.0.0.1:0")
}
