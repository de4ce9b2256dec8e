package load

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// notesWith returns the notes of m that contain s.
func notesWith(m *machineLimits, s string) []string {
	var found []string
	for _, note := range m.list() {
		if strings.Contains(note, s) {
			found = append(found, note)
		}
	}
	return found
}

// TestPlanNotesLimitsAtTheirEdge plans runs of exactly as many connections
// as the machine allows and of one more, against this machine's own
// descriptor limit (less the 64 kept for everything else) and port range.
func TestPlanNotesLimitsAtTheirEdge(t *testing.T) {
	t.Run("descriptors", func(t *testing.T) {
		limit, ok := fileLimit()
		if !ok || limit < 65 || limit > math.MaxInt32 {
			t.Skipf("file descriptor limit %d (known: %v) leaves no edge to test", limit, ok)
		}
		edge := int(limit) - 64
		var at, past machineLimits
		at.plan(edge)
		past.plan(edge + 1)
		if notes := notesWith(&at, "file descriptor limit"); len(notes) != 0 {
			t.Errorf("plan(%d) with a limit of %d: %q; want no descriptor note", edge, limit, notes)
		}
		want := fmt.Sprintf("%d connections asked for but the file descriptor limit is %d", edge+1, limit)
		if notes := notesWith(&past, "file descriptor limit"); len(notes) != 1 || notes[0] != want {
			t.Errorf("plan(%d) with a limit of %d: %q; want [%q]", edge+1, limit, notes, want)
		}
	})
	t.Run("ports", func(t *testing.T) {
		lo, hi, ok := portRange()
		if !ok {
			if _, err := os.Stat("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
				t.Fatal("portRange found nothing in ip_local_port_range")
			}
			t.Skip("no local port range to read")
		}
		edge := hi - lo + 1
		var at, past machineLimits
		at.plan(edge)
		past.plan(edge + 1)
		if notes := notesWith(&at, "local ports"); len(notes) != 0 {
			t.Errorf("plan(%d) with ports %d-%d: %q; want no port note", edge, lo, hi, notes)
		}
		want := fmt.Sprintf("%d connections asked for but only %d local ports (%d-%d) per server address", edge+1, edge, lo, hi)
		if notes := notesWith(&past, "local ports"); len(notes) != 1 || notes[0] != want {
			t.Errorf("plan(%d) with ports %d-%d: %q; want [%q]", edge+1, lo, hi, notes, want)
		}
	})
}

func TestParsePortRange(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi int
		ok     bool
	}{
		{"32768\t60999\n", 32768, 60999, true},
		{"5000 5000", 5000, 5000, true}, // one port is a range
		{"5001 5000", 5001, 5000, false},
		{"32768", 0, 0, false},
		{"", 0, 0, false},
		{"a b", 0, 0, false},
	} {
		lo, hi, ok := parsePortRange([]byte(tc.in))
		if ok != tc.ok || (ok && (lo != tc.lo || hi != tc.hi)) {
			t.Errorf("parsePortRange(%q) = %d, %d, %v; want %d, %d, %v", tc.in, lo, hi, ok, tc.lo, tc.hi, tc.ok)
		}
	}
}

// TestMachineLimitsNameTheirCause gives each error a machine limit causes,
// made the way net wraps a socket's errno, to the run's notes and to Hold's
// error: each names the limit to raise. A full system file table (ENFILE)
// cannot be caused by a test.
func TestMachineLimitsNameTheirCause(t *testing.T) {
	for _, tc := range []struct {
		errno      syscall.Errno
		note, hold string
	}{
		{syscall.EMFILE, "out of file descriptors (RLIMIT_NOFILE", "(RLIMIT_NOFILE"},
		{syscall.ENFILE, "out of file descriptors (RLIMIT_NOFILE", "(RLIMIT_NOFILE"},
		{syscall.EADDRNOTAVAIL, "out of local ports (net.ipv4.ip_local_port_range", "(net.ipv4.ip_local_port_range"},
	} {
		err := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", tc.errno)}
		var m machineLimits
		m.dialFailed(err)
		if notes := notesWith(&m, tc.note); len(notes) != 1 {
			t.Errorf("dialFailed(%v): notes %q; want one with %q", err, m.list(), tc.note)
		}
		if got := describeHoldError(err); !errors.Is(got, tc.errno) || !strings.Contains(got.Error(), tc.hold) {
			t.Errorf("describeHoldError(%v) = %v; want it wrapped with %q", err, got, tc.hold)
		}
	}
	var m machineLimits
	m.dialFailed(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
	if notes := m.list(); len(notes) != 0 {
		t.Errorf("dialFailed(ECONNREFUSED): notes %q; want none (the server refused, not the machine)", notes)
	}
}
