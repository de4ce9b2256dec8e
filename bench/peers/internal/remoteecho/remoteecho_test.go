package remoteecho

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if child, err := Child(); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Each library's remote echo moves messages between the two processes,
// counts the CPU of every process, and answers every Ask.
func TestRunEveryLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	cfg := Config{Pairs: 2, Warmup: 200 * time.Millisecond, Duration: 500 * time.Millisecond, AskRate: 100, AskFor: 300 * time.Millisecond}
	for _, lib := range Libraries {
		t.Run(lib, func(t *testing.T) {
			r, err := Run(context.Background(), lib, cfg)
			if err != nil {
				t.Fatal(err)
			}
			wantProcs := 2
			if lib == "loom" {
				wantProcs = 3 // and the NATS server
			}
			if r.Messages <= 0 || r.CPU <= 0 || len(r.Processes) != wantProcs {
				t.Errorf("result %+v; want messages, CPU and %d processes", r, wantProcs)
			}
			if r.Asks != 30 || r.AskFailures != 0 || r.AskP50 <= 0 {
				t.Errorf("%d asks, %d failed, p50 %v; want 30, 0, > 0", r.Asks, r.AskFailures, r.AskP50)
			}
		})
	}
	if _, err := Run(context.Background(), "akka", cfg); err == nil {
		t.Error("Run of an unknown library succeeded")
	}
}
