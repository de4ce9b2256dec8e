//go:build linux

package load

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// openFiles counts this process's open descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open descriptors: %v", err)
	}
	return len(fds)
}

// withFileLimit runs f with the soft RLIMIT_NOFILE set to cur, and puts
// the limit back before it returns. Above the hard limit it raises the
// hard limit too, which a privileged process (CI runs as root) may do, and
// skips where it may not. Tests that use it do not run in parallel: the
// limit is the whole process's.
func withFileLimit(t *testing.T, cur uint64, f func()) {
	t.Helper()
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	set := saved
	set.Cur = cur
	set.Max = max(saved.Max, cur)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &set); err != nil {
		if cur > saved.Max {
			t.Skipf("RLIMIT_NOFILE %d is above the hard limit %d, which this process may not raise: %v", cur, saved.Max, err)
		}
		t.Skipf("cannot set RLIMIT_NOFILE: %v", err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
			t.Fatal(err)
		}
	}()
	f()
}

// TestConnectionLimitTakesTheLowerLimit sets the descriptor limit on each
// side of the port range, at the edges, and where one of the two cannot be
// read: ConnectionLimit names whichever allows fewer connections, keeps 64
// descriptors for the process, and never returns a count of its own
// descriptors below zero.
func TestConnectionLimitTakesTheLowerLimit(t *testing.T) {
	lo, hi, ok := portRange()
	if !ok {
		t.Skip("no local port range to read")
	}
	ports := hi - lo + 1
	const byFiles, byPorts = "file descriptor limit", "local port range"
	for _, tc := range []struct {
		name  string
		limit uint64
		n     int
		why   string
	}{
		// 64 or fewer descriptors leave none to count: the ports decide.
		{"descriptors below the reserve", 60, ports, byPorts},
		{"descriptors at the reserve", 64, ports, byPorts},
		{"descriptors fewer than ports", 1000, 1000 - 64, byFiles},
		{"descriptors as many as ports", uint64(ports) + 64, ports, byFiles},
		{"descriptors one more than ports", uint64(ports) + 65, ports, byPorts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.limit <= 64 && openFiles(t) > 50 {
				t.Skip("too many descriptors open to read the port range under the limit")
			}
			var n int
			var why string
			withFileLimit(t, tc.limit, func() { n, why = ConnectionLimit() })
			if n != tc.n || !strings.Contains(why, tc.why) {
				t.Errorf("ConnectionLimit() with RLIMIT_NOFILE %d and %d ports = %d, %q; want %d and the %s", tc.limit, ports, n, why, tc.n, tc.why)
			}
		})
	}
	t.Run("port range unreadable", func(t *testing.T) {
		// The port range cannot be opened: the descriptor limit alone sets
		// the count.
		var n int
		var why string
		var limit uint64
		withoutFreeDescriptors(t, func(l uint64) {
			limit = l
			n, why = ConnectionLimit()
		})
		if n != int(limit)-64 || !strings.Contains(why, byFiles) {
			t.Errorf("ConnectionLimit() with no descriptor free = %d, %q; want %d and the %s", n, why, int(limit)-64, byFiles)
		}
	})
}

// withoutFreeDescriptors runs f with every descriptor number below the
// soft RLIMIT_NOFILE in use, and gives it that limit (100 or so). A new
// descriptor takes the lowest free number, so once one is numbered 99 or
// more every number below it is taken, and a limit of one more leaves none.
func withoutFreeDescriptors(t *testing.T, f func(limit uint64)) {
	t.Helper()
	var spare []*os.File
	defer func() {
		for _, f := range spare {
			f.Close()
		}
	}()
	for len(spare) == 0 || spare[len(spare)-1].Fd() < 99 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		spare = append(spare, f)
	}
	limit := uint64(spare[len(spare)-1].Fd()) + 1
	withFileLimit(t, limit, func() {
		if f, err := os.Open(os.DevNull); err == nil {
			f.Close()
			t.Fatalf("a descriptor is free under RLIMIT_NOFILE %d", limit)
		}
		f(limit)
	})
}

// TestHoldNamesTheDescriptorLimit runs Hold out of descriptors: its error
// says so and gives the limit, so the user knows what to raise.
func TestHoldNamesTheDescriptorLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	limit := uint64(openFiles(t) + 10) // each held connection costs two: this side and the server's
	var held *Held
	var err error
	withFileLimit(t, limit, func() {
		held, err = Hold(t.Context(), Target{URL: srv.URL}, 20, 5*time.Second)
		if held != nil {
			held.Close()
		}
	})
	want := fmt.Sprintf("RLIMIT_NOFILE %d", limit)
	if !errors.Is(err, ErrHold) || !errors.Is(err, syscall.EMFILE) || !strings.Contains(err.Error(), want) {
		t.Errorf("Hold out of descriptors = %v; want ErrHold, EMFILE and %q", err, want)
	}
}
