package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// markEnv tags the processes a signal test starts, so that it finds the
// server under test that `loom bench` started, and any it left running.
const markEnv = "LOOM_CMD_TEST_MARK"

// markedProcesses returns the pids whose environment holds markEnv=mark,
// with their command lines.
func markedProcesses(t *testing.T, mark string) map[int]string {
	t.Helper()
	want := []byte(markEnv + "=" + mark + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	found := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found[pid] = string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	}
	return found
}

// startSignalledBench starts `loom bench` (this test binary as loom) on a
// sleepy scenario in a temporary directory of its own, through shell, and
// waits until its server under test is serving.
func startSignalledBench(t *testing.T, shell string) (cmd *exec.Cmd, tmp, mark string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp = t.TempDir()
	mark = strconv.FormatInt(time.Now().UnixNano(), 36)
	cmd = exec.Command("/bin/sh", "-c", shell+` exec "$0" "$@"`, exe, "bench", "cask-sleep", "--models", "virtual", "--peers=false")
	cmd.Env = append(os.Environ(), mainEnv+"=1", "TMPDIR="+tmp, markEnv+"="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whatever the outcome, nothing started here outlives the test.
		cmd.Process.Kill()
		cmd.Wait()
		for pid := range markedProcesses(t, mark) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for deadline := time.Now().Add(60 * time.Second); ; {
		serving := false
		for _, line := range markedProcesses(t, mark) {
			serving = serving || strings.Contains(line, "serve-scenario")
		}
		if serving {
			return cmd, tmp, mark
		}
		if time.Now().After(deadline) {
			t.Fatal("no server under test after 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitExit waits up to d for cmd to end.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Fatalf("loom bench still running %s after the signal", d)
		return nil
	}
}

// TestBenchCleansUpOnSighup closes loom bench's terminal, as it were, in the
// middle of a run: it must stop its server and remove its temporary
// directory, as on Ctrl-C, rather than die on the spot and leave both.
func TestBenchCleansUpOnSighup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	cmd, tmp, mark := startSignalledBench(t, "")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	err := waitExit(t, cmd, 30*time.Second)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("loom bench after SIGHUP: %v; want exit status 1 (interrupted), not death by the signal", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in TMPDIR after SIGHUP: %v; want nothing", entries)
	}
	if left := markedProcesses(t, mark); len(left) != 0 {
		t.Errorf("still running after SIGHUP: %v; want the server stopped", left)
	}
}

// TestBenchUnderNohupIgnoresSighup starts loom bench with SIGHUP ignored, as
// nohup does: handling SIGHUP must not undo that.
func TestBenchUnderNohupIgnoresSighup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	cmd, tmp, _ := startSignalledBench(t, `trap "" HUP;`)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// A handled SIGHUP ends the run within milliseconds; an ignored one
	// leaves it running. (On a stalled machine this passes without proving
	// much; it cannot fail for that reason.)
	time.Sleep(time.Second)
	var status syscall.WaitStatus
	if pid, _ := syscall.Wait4(cmd.Process.Pid, &status, syscall.WNOHANG, nil); pid != 0 {
		t.Fatalf("loom bench ended after SIGHUP under nohup (%v); want it running", status)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, 30*time.Second)
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in TMPDIR after SIGTERM: %v; want nothing", entries)
	}
}
