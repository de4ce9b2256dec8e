package web_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// probesChild makes the test binary the server of
// TestReadyzInAServerProcess.
const probesChild = "LOOM_WEB_PROBES_CHILD"

// serveProbes is the child: an App with probes and a one-second shutdown
// delay, a thread limit of 200 (so the thread watch trips at 160 in use),
// and a decorator that answers /hold?n=N by blocking N OS threads in
// nanosleep(2) for four seconds, as N cgo calls would, before any executor
// could refuse it. It serves until SIGTERM and exits 0 after a clean
// shutdown.
func serveProbes() {
	debug.SetMaxThreads(200)
	hold := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/hold" {
				next.ServeHTTP(w, r)
				return
			}
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			for range n {
				go func() {
					ts := syscall.NsecToTimespec((4 * time.Second).Nanoseconds())
					for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
					}
				}()
			}
		})
	}
	// The readiness check "flag" fails while the file the parent names
	// exists; GET /slow holds the one slot of a critical executor for a
	// second.
	flag := os.Getenv(probesChild)
	app, err := web.New(web.WithProbes(), web.WithShutdownDelay(time.Second), web.WithDecorators(hold),
		web.WithReadyCheck("flag", func(context.Context) error {
			if _, err := os.Stat(flag); err == nil {
				return errors.New("flag file present")
			}
			return nil
		}),
		web.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	if err == nil {
		slot := loom.Limit(1, loom.WithQueue(0), loom.WithName("slot"))
		defer slot.Shutdown(context.Background())
		app.Get("/slow", func(w http.ResponseWriter, r *http.Request) error {
			time.Sleep(time.Second)
			return nil
		}, web.WithExecutor(slot), web.WithCritical())
		err = app.Run("127.0.0.1:0")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestReadyzInAServerProcess probes a real server process
// in a loop: /readyz is 200; it turns 503 naming each cause while that
// holds, and 200 again after: a user check that fails, a critical executor
// that is full, blocked calls holding the process past its thread watch's
// mark; on SIGTERM it turns 503 while the listener still accepts, then
// connections are refused and the process exits cleanly.
func TestReadyzInAServerProcess(t *testing.T) {
	if os.Getenv(probesChild) != "" {
		serveProbes()
	}
	if testing.Short() {
		t.Skip("starts a server process that blocks 160 threads")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	flag := filepath.Join(t.TempDir(), "not-ready")
	cmd.Env = append(os.Environ(), probesChild+"="+flag)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	addr := make(chan string, 1)
	var log strings.Builder
	go func() {
		serving := regexp.MustCompile(`msg=serving addr=(\S+)`)
		scanner := bufio.NewScanner(pipe)
		for scanner.Scan() {
			log.WriteString(scanner.Text() + "\n")
			if m := serving.FindStringSubmatch(scanner.Text()); m != nil {
				addr <- m[1]
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var url string
	select {
	case a := <-addr:
		url = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("the server never said where it serves")
	}

	if status, body, err := probe(url + "/readyz"); status != 200 {
		t.Fatalf("GET /readyz at start: got %d %q %v; want 200", status, body, err)
	}
	waitReadyz := func(wantStatus int, wantText string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			status, body, err := probe(url + "/readyz")
			if status == wantStatus && strings.Contains(body, wantText) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET /readyz: still %d %q %v after 30 s; want %d with %q", status, body, err, wantStatus, wantText)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitReadyz(503, "[-]flag failed: flag file present")
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	waitReadyz(200, "ok")

	slow := make(chan int, 1)
	go func() { status, _, _ := probe(url + "/slow"); slow <- status }()
	waitReadyz(503, "[-]executor slot failed: full: 1 running, 0 queued")
	if status := <-slow; status != 200 {
		t.Errorf("GET /slow: got %d; want 200", status)
	}
	waitReadyz(200, "ok")

	tripped := false
	for held := 0; held < 180 && !tripped; held += 10 {
		if status, _, err := probe(url + "/hold?n=10"); status != 200 {
			t.Fatalf("GET /hold: got %d %v", status, err)
		}
		time.Sleep(50 * time.Millisecond) // let the threads start and the watch read them
		status, body, _ := probe(url + "/readyz")
		tripped = status == 503 && strings.Contains(body, "[-]threads failed: thread watch tripped")
	}
	if !tripped {
		t.Fatal("/readyz never reported the thread watch tripped with 180 threads blocked")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body, err := probe(url + "/readyz")
		if status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d %q %v 30 s after the blocked calls returned", status, body, err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	states := pollReadyz(t, url+"/readyz", func() error { return cmd.Process.Signal(syscall.SIGTERM) })
	if want := []string{"200", "503", "refused"}; !slices.Equal(states, want) {
		t.Errorf("/readyz around SIGTERM went through %v; want %v", states, want)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("server exited with %v; log:\n%s", err, log.String())
		}
	case <-time.After(30 * time.Second):
		t.Error("server still running 30 s after SIGTERM")
	}
}
