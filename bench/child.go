package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// stopGrace is how long a server under test has to exit after SIGTERM
// before it is killed.
const stopGrace = 5 * time.Second

// child is a server under test running as its own process group.
type child struct {
	cmd         *exec.Cmd
	httpAddr    string
	metricsAddr string
	stderr      *stderrLog
	stopped     chan struct{} // closed when the process has been waited for
	waitErr     error         // valid after stopped is closed
	cancel      context.CancelFunc

	mu          sync.Mutex
	stopRequest bool // Stop was called: an exit after it is not a crash
}

// startChild starts path with args and env and waits until it prints its
// listening line, exits, or startTimeout passes. Cancelling ctx stops it.
func startChild(ctx context.Context, path string, args, env []string, startTimeout time.Duration) (*child, error) {
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	ownProcessGroup(cmd)
	cmd.WaitDelay = stopGrace // then exec kills it
	lines := &lineWatcher{found: make(chan [2]string, 1)}
	cmd.Stdout = lines
	c := &child{cmd: cmd, stderr: newStderrLog(), stopped: make(chan struct{}), cancel: cancel}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("%w: %w", ErrServerStart, err)
	}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.stopped)
	}()

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case addrs := <-lines.found:
		c.httpAddr, c.metricsAddr = addrs[0], addrs[1]
		return c, nil
	case <-c.stopped:
		cancel()
		return nil, fmt.Errorf("%w: %s exited: %v%s", ErrServerStart, path, c.waitErr, c.stderr.excerpt())
	case <-timer.C:
		c.Stop()
		return nil, fmt.Errorf("%w: no listening line after %s%s", ErrServerStart, startTimeout, c.stderr.excerpt())
	case <-ctx.Done():
		c.Stop()
		return nil, ctx.Err()
	}
}

// Exited reports, without blocking, whether the process has ended.
func (c *child) Exited() bool {
	select {
	case <-c.stopped:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM to the child's process group, waits up to stopGrace,
// kills it after that, and returns how it exited. It is idempotent.
func (c *child) Stop() error {
	c.mu.Lock()
	c.stopRequest = true
	c.mu.Unlock()
	c.cancel()
	<-c.stopped
	return c.waitErr
}

// crashed reports whether the child ended on its own, not because Stop
// asked it to, and if so how.
func (c *child) crashed() (bool, string) {
	if !c.Exited() {
		return false, ""
	}
	c.mu.Lock()
	asked := c.stopRequest
	c.mu.Unlock()
	if asked {
		return false, ""
	}
	return true, exitDescription(c.waitErr)
}

// exitDescription says how a process ended: "exit status 2", "signal: killed".
func exitDescription(err error) string {
	if err == nil {
		return "exit status 0"
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ProcessState.String()
	}
	return err.Error()
}

// lineWatcher is the child's stdout: it looks for the listening line and
// drops everything else.
type lineWatcher struct {
	found chan [2]string
	buf   []byte
	done  bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	if w.done {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if httpAddr, metricsAddr, ok := parseListening(line); ok {
			w.found <- [2]string{httpAddr, metricsAddr}
			w.done, w.buf = true, nil
			break
		}
	}
	if len(w.buf) > 64<<10 { // no line in sight: not a server that talks our protocol
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

// stderrLog keeps what a report needs of a child's stderr, however much it
// writes (a crash with 10,000 goroutines prints megabytes of stacks): the
// first lines that say why it died, and the last lines.
type stderrLog struct {
	mu      sync.Mutex
	partial []byte
	fatal   []string // lines starting "fatal error:", "panic:", "runtime: …"
	tail    []string // the last tailLines lines, oldest first
}

const (
	tailLines  = 15
	fatalLines = 6
	lineLimit  = 300 // longer lines are cut
)

func newStderrLog() *stderrLog { return &stderrLog{} }

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.add(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > lineLimit {
		l.add(string(l.partial))
		l.partial = l.partial[:0]
	}
	return len(p), nil
}

func (l *stderrLog) add(line string) {
	line = strings.TrimRight(line, "\r")
	if len(line) > lineLimit {
		line = line[:lineLimit] + "…"
	}
	if len(l.fatal) < fatalLines && isFatalLine(line) {
		l.fatal = append(l.fatal, line)
	}
	l.tail = append(l.tail, line)
	if len(l.tail) > tailLines {
		l.tail = l.tail[1:]
	}
}

func isFatalLine(line string) bool {
	for _, prefix := range []string{"fatal error:", "panic:", "runtime: ", "SIGSEGV", "SIGABRT"} {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

// Died reports whether the process wrote a "fatal error:" or "panic:"
// line: the Go runtime's last words.
func (l *stderrLog) Died() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.fatal {
		if strings.HasPrefix(line, "fatal error:") || strings.HasPrefix(line, "panic:") {
			return true
		}
	}
	return false
}

// Fatal returns the lines that say why the process died, if any.
func (l *stderrLog) Fatal() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.fatal...)
}

// Tail returns the last lines written, including an unterminated one.
func (l *stderrLog) Tail() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	tail := append([]string(nil), l.tail...)
	if len(l.partial) > 0 {
		tail = append(tail, string(l.partial))
	}
	return tail
}

// excerpt formats the fatal and last lines for an error message.
func (l *stderrLog) excerpt() string {
	lines := l.Fatal()
	if len(lines) == 0 {
		lines = l.Tail()
	}
	if len(lines) == 0 {
		return ""
	}
	return "\n\t" + strings.Join(lines, "\n\t")
}
