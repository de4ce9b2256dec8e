//go:build unix

package web_test

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunStopsOnSIGTERM(t *testing.T) {
	var logs logBuffer
	app := newApp(t, logs.logger())
	app.Get("/", text("hi"))
	done := make(chan error, 1)
	go func() { done <- app.Run("127.0.0.1:0") }()
	// "serving" is logged after Run has taken over SIGINT and SIGTERM, so
	// the signal below cannot reach the default handler and end the test binary.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "serving"); {
		if time.Now().After(deadline) {
			t.Fatal("Run never started serving")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after SIGTERM: got %v; want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after SIGTERM")
	}
}
