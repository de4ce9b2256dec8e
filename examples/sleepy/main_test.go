package main

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/harness/cmdtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// serve starts the app on a free loopback port; cmdtest.Serve stops it at cleanup.
func serve(t *testing.T, sleep time.Duration) string {
	t.Helper()
	app, err := newApp(sleep)
	if err != nil {
		t.Fatal(err)
	}
	return cmdtest.Serve(t, app)
}

func TestSleepy(t *testing.T) {
	for _, spec := range []string{"virtual", "pool:4", "limit:8"} {
		t.Run(spec, func(t *testing.T) {
			t.Setenv("LOOM_EXECUTOR", spec)
			url := serve(t, 50*time.Millisecond)
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()

			const requests = 8
			var wg sync.WaitGroup
			errs := make(chan error, requests)
			start := time.Now()
			for range requests {
				wg.Go(func() {
					resp, err := client.Get(url + "/")
					if err != nil {
						errs <- err
						return
					}
					defer resp.Body.Close()
					body, _ := io.ReadAll(resp.Body)
					if resp.StatusCode != http.StatusOK || string(body) != "Hello World! Hello World! Hello World!" {
						t.Errorf("got %d %q; want 200 and three greetings", resp.StatusCode, body)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			// Every request sleeps, so the batch cannot be faster than one sleep.
			if elapsed := time.Since(start); elapsed < 50*time.Millisecond {
				t.Errorf("8 requests took %v; want at least the 50ms sleep", elapsed)
			}
		})
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{{"-sleep", "soon"}, {"-sleep", "-1s"}, {"-nope"}} {
		if err := run(t.Context(), args); err == nil {
			t.Errorf("run(%q): got nil error; want one", args)
		}
	}
}

func TestRunStopsCleanly(t *testing.T) {
	cmdtest.StopsCleanly(t, run, "-addr", "127.0.0.1:0")
}

func TestRunRejectsArguments(t *testing.T) {
	cmdtest.RejectsStrayArgument(t, run, "-addr", "127.0.0.1:0")
}
