package load

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
)

// machineLimits collects notes on what the machine limited during a run. It
// is safe for concurrent use.
type machineLimits struct {
	mu    sync.Mutex
	notes []string
	seen  map[string]bool
}

func (m *machineLimits) note(key, text string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen[key] {
		return
	}
	if m.seen == nil {
		m.seen = make(map[string]bool)
	}
	m.seen[key] = true
	m.notes = append(m.notes, text)
}

func (m *machineLimits) list() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.notes...)
}

// dialFailed notes a failed connection attempt that the machine, not the
// server, caused, or a TLS handshake the client refused.
func (m *machineLimits) dialFailed(err error) {
	switch {
	case errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE):
		m.note("fd", fmt.Sprintf("out of file descriptors (%s); raise it with ulimit -n", describeFileLimit()))
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		m.note("ports", fmt.Sprintf("out of local ports (%s); connect to more server addresses or widen the range", describePortRange()))
	}
	var handshake *handshakeError
	if errors.As(err, &handshake) {
		m.note("tls", handshake.Error()+" (counted as connect errors; Config.TLS, loom load's --cacert or --insecure set what to trust)")
	}
}

// plan notes, before a run, limits that the requested connections exceed.
func (m *machineLimits) plan(conns int) {
	if limit, ok := fileLimit(); ok && uint64(conns)+64 > limit {
		m.note("fd-plan", fmt.Sprintf("%d connections asked for but the file descriptor limit is %d", conns, limit))
	}
	if lo, hi, ok := portRange(); ok && conns > hi-lo+1 {
		m.note("ports-plan", fmt.Sprintf("%d connections asked for but only %d local ports (%d-%d) per server address", conns, hi-lo+1, lo, hi))
	}
}

func describeFileLimit() string {
	if limit, ok := fileLimit(); ok {
		return fmt.Sprintf("RLIMIT_NOFILE %d", limit)
	}
	return "RLIMIT_NOFILE"
}

func describePortRange() string {
	if lo, hi, ok := portRange(); ok {
		return fmt.Sprintf("net.ipv4.ip_local_port_range %d-%d", lo, hi)
	}
	return "net.ipv4.ip_local_port_range"
}

// portRange reads Linux's ephemeral port range.
func portRange() (lo, hi int, ok bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, false
	}
	return parsePortRange(b)
}

// parsePortRange parses ip_local_port_range: the first and last port.
func parsePortRange(b []byte) (lo, hi int, ok bool) {
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &lo, &hi); err != nil {
		return 0, 0, false
	}
	return lo, hi, hi >= lo
}
