package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/harness/cmdtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// serve starts the service on a free loopback port and stops it, actors
// included, at cleanup.
func serve(t *testing.T) (string, *service) {
	t.Helper()
	svc, err := newService(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Registered first, so it runs after cmdtest.Serve has stopped the app.
	t.Cleanup(func() {
		if err := svc.actors.Shutdown(context.Background()); err != nil {
			t.Errorf("actors: %v", err)
		}
	})
	return cmdtest.Serve(t, svc.app), svc
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

func TestRoutes(t *testing.T) {
	twice := sha256.Sum256([]byte("loom"))
	twice = sha256.Sum256(twice[:])
	for _, env := range []map[string]string{
		{},
		{"LOOM_EXECUTOR_POOL": "virtual", "LOOM_EXECUTOR_BLOCKING": "threads:2"},
	} {
		t.Run(env["LOOM_EXECUTOR_POOL"], func(t *testing.T) {
			for k, v := range env {
				t.Setenv(k, v)
			}
			base, svc := serve(t)
			for _, tc := range []struct {
				path   string
				status int
				body   string
			}{
				{"/hash?text=loom&rounds=2", 200, hex.EncodeToString(twice[:])},
				{"/hash?text=loom&rounds=0", 400, "rounds: 0"},
				{"/hash?text=loom&rounds=1000001", 400, "rounds: 1000001"},
				{"/lookup?key=answer", 200, "value of answer"},
				{"/lookup", 400, "key"},
			} {
				status, body := get(t, base+tc.path)
				if status != tc.status || !strings.Contains(body, tc.body) {
					t.Errorf("GET %s: got %d %q; want %d containing %q", tc.path, status, body, tc.status, tc.body)
				}
			}
			// The dispatchers are the ones the environment says.
			for dispatcher, want := range map[string]string{"pool": "pool", "blocking": "pool"} {
				if env["LOOM_EXECUTOR_POOL"] != "" {
					want = map[string]string{"pool": "virtual", "blocking": "threads"}[dispatcher]
				}
				st, ok := svc.actors.DispatcherStats(dispatcher)
				if !ok || string(st.Kind) != want {
					t.Errorf("dispatcher %s: got %q (%v); want %s", dispatcher, st.Kind, ok, want)
				}
			}
		})
	}
}

func TestRunStopsCleanly(t *testing.T) {
	cmdtest.StopsCleanly(t, run, "-addr", "127.0.0.1:0")
}

func TestRunRejectsStrayArgument(t *testing.T) {
	cmdtest.RejectsStrayArgument(t, run, "-addr", "127.0.0.1:0")
}

func TestRunRejectsNegativeDelay(t *testing.T) {
	err := run(context.Background(), []string{"-delay", "-1s"})
	if err == nil || !strings.Contains(err.Error(), "-delay") {
		t.Errorf("got %v; want an error naming -delay", err)
	}
}
