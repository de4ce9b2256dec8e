//go:build unix

package web_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
)

// sigtermChild is the environment variable that makes the test binary the
// server of TestGracefulShutdownUnderLoad: "grace,hold" as durations.
const sigtermChild = "LOOM_WEB_SIGTERM_CHILD"

// serveUntilSIGTERM is the child: an App whose GET /slow holds its handler
// for hold, served by Run (SIGTERM ends it) with the given grace. It exits
// 0 after a clean shutdown and 1, printing the error, otherwise.
func serveUntilSIGTERM(spec string) {
	graceText, holdText, _ := strings.Cut(spec, ",")
	grace, err1 := time.ParseDuration(graceText)
	hold, err2 := time.ParseDuration(holdText)
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	app, err := web.New(web.WithShutdownGrace(grace), web.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	var inFlight atomic.Int64
	app.Get("/slow", func(w http.ResponseWriter, _ *http.Request) error {
		inFlight.Add(1)
		time.Sleep(hold) // ignores cancellation, as a slow query may
		_, err := io.WriteString(w, "done")
		return err
	})
	app.Get("/in-flight", func(w http.ResponseWriter, _ *http.Request) error {
		_, err := io.WriteString(w, strconv.FormatInt(inFlight.Load(), 10))
		return err
	})
	if err := app.Run("127.0.0.1:0"); err != nil {
		fmt.Fprintln(os.Stderr, "child: run:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// server is a child process serving the App above.
type server struct {
	cmd    *exec.Cmd
	addr   string
	stderr *logBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // cmd.Wait's, once done is closed
}

// wait waits up to d for the server to exit and returns its exit error;
// ok is false if it is still running.
func (s *server) wait(d time.Duration) (err error, ok bool) {
	select {
	case <-s.done:
		return s.err, true
	case <-time.After(d):
		return nil, false
	}
}

func startServer(t *testing.T, grace, hold time.Duration) *server {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGracefulShutdownUnderLoad$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%s", sigtermChild, grace, hold))
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: new(logBuffer), done: make(chan struct{})}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.done
	})
	addr := make(chan string, 1)
	serving := regexp.MustCompile(`msg=serving addr=(\S+)`)
	go func() {
		scanner := bufio.NewScanner(pipe)
		for scanner.Scan() {
			line := scanner.Text()
			s.stderr.Write([]byte(line + "\n"))
			if m := serving.FindStringSubmatch(line); m != nil {
				addr <- m[1]
			}
		}
		s.err = cmd.Wait()
		close(s.done)
	}()
	select {
	case s.addr = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatalf("server never said where it serves; stderr:\n%s", s.stderr.String())
	}
	return s
}

// load sends n requests to /slow at once, each on its own connection, and
// waits until the server's handlers hold all of them.
func (s *server) load(t *testing.T, n int) (statuses chan int) {
	t.Helper()
	statuses = make(chan int, n)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := client.Get("http://" + s.addr + "/slow")
			if err != nil {
				statuses <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		})
	}
	t.Cleanup(wg.Wait)
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := client.Get("http://" + s.addr + "/in-flight")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) == strconv.Itoa(n) {
				return statuses
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never held %d requests at once", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestGracefulShutdownUnderLoad(t *testing.T) {
	if spec := os.Getenv(sigtermChild); spec != "" {
		serveUntilSIGTERM(spec)
		return
	}
	if testing.Short() {
		t.Skip("starts server processes with 200 requests in flight")
	}
	const inFlight = 200

	t.Run("grace longer than the handlers", func(t *testing.T) {
		const hold = 2 * time.Second
		s := startServer(t, 20*time.Second, hold)
		statuses := s.load(t, inFlight)
		signalled := time.Now()
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// New connections are refused once the listener is closed.
		for deadline := time.Now().Add(5 * time.Second); ; {
			conn, err := net.DialTimeout("tcp", s.addr, time.Second)
			if errors.Is(err, syscall.ECONNREFUSED) {
				break
			}
			if err == nil {
				conn.Close()
			}
			if time.Now().After(deadline) {
				t.Fatalf("new connections still accepted 5 s after SIGTERM (last: %v)", err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		for i := range inFlight {
			if got := <-statuses; got != http.StatusOK {
				t.Fatalf("in-flight request %d: status %d; want 200 (0: no response)\nstderr:\n%s", i, got, s.stderr.String())
			}
		}
		err, ok := s.wait(30 * time.Second)
		if !ok || err != nil {
			t.Fatalf("server exit: %v (exited: %v); want status 0\nstderr:\n%s", err, ok, s.stderr.String())
		}
		t.Logf("exited %v after SIGTERM (handlers hold %v)", time.Since(signalled).Round(time.Millisecond), hold)
	})

	t.Run("grace shorter than the handlers", func(t *testing.T) {
		const grace, hold = 300 * time.Millisecond, 30 * time.Second
		s := startServer(t, grace, hold)
		statuses := s.load(t, inFlight)
		signalled := time.Now()
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err, ok := s.wait(hold / 2)
		if !ok {
			t.Fatalf("server still running %v after SIGTERM with a %v grace", hold/2, grace)
		}
		took := time.Since(signalled)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("server exit: %v; want status 1, reporting what it abandoned", err)
		}
		log := s.stderr.String()
		if want := fmt.Sprintf("%d running tasks cancelled", inFlight); !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
		for range inFlight {
			if got := <-statuses; got == http.StatusOK {
				t.Fatal("a request abandoned at shutdown was answered 200")
			}
		}
		t.Logf("exited %v after SIGTERM with a %v grace (handlers hold %v)", took.Round(time.Millisecond), grace, hold)
	})
}
