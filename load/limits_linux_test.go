//go:build linux

package load

import (
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFileDescriptorLimitIsReported(t *testing.T) {
	// A listener that never accepts: the kernel completes connections into
	// its backlog, so each costs the client a descriptor and nothing more.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open descriptors: %v", err)
	}
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	low := saved
	low.Cur = uint64(len(fds) + 20) // room for about 20 connections
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower RLIMIT_NOFILE: %v", err)
	}
	res, err := Run(t.Context(), Config{
		Targets:     []Target{{URL: "http://" + ln.Addr().String() + "/"}},
		Connections: 60,
		Requests:    60,
		Timeout:     300 * time.Millisecond,
	})
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors.Connect == 0 || res.Errors.Total() != 60 {
		t.Errorf("errors %+v; want 60, some of them connect errors", res.Errors)
	}
	found := false
	for _, note := range res.Limits {
		found = found || strings.Contains(note, "out of file descriptors")
	}
	if !found {
		t.Errorf("limits %q; want a note that descriptors ran out", res.Limits)
	}
}

// TestPlanWithoutAPortRange plans a run where the port range cannot be
// read (no descriptor is free to open it): no note on ports, whose count
// is unknown.
func TestPlanWithoutAPortRange(t *testing.T) {
	var m machineLimits
	withoutFreeDescriptors(t, func(uint64) { m.plan(2) })
	if notes := notesWith(&m, "local ports"); len(notes) != 0 {
		t.Errorf("plan(2) without a port range: %q; want no port note", notes)
	}
}
