package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes where a report was measured.
type Machine struct {
	CPU         string `json:"cpu"`          // model name from /proc/cpuinfo
	Cores       int    `json:"cores"`        // runtime.NumCPU
	MemoryBytes uint64 `json:"memory_bytes"` // MemTotal from /proc/meminfo
	GoVersion   string `json:"go_version"`
	OS          string `json:"os"`     // distribution, from /etc/os-release
	Kernel      string `json:"kernel"` // from /proc/sys/kernel/osrelease
	Arch        string `json:"arch"`
	// LoadAverage is the one-minute load average when the run started:
	// well above Cores, other processes competed for the CPU.
	LoadAverage float64 `json:"load_average"`
}

// DescribeMachine reads this machine's description. Fields it cannot read
// are left empty.
func DescribeMachine() Machine {
	m := Machine{
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
	}
	m.CPU = firstField("/proc/cpuinfo", "model name", ':')
	if kb, err := strconv.ParseUint(strings.TrimSuffix(firstField("/proc/meminfo", "MemTotal", ':'), " kB"), 10, 64); err == nil {
		m.MemoryBytes = kb << 10
	}
	if name := strings.Trim(firstField("/etc/os-release", "PRETTY_NAME", '='), `"`); name != "" {
		m.OS = name
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(raw))
	}
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		first, _, _ := strings.Cut(string(raw), " ")
		m.LoadAverage, _ = strconv.ParseFloat(first, 64)
	}
	return m
}

// String is a one-line description: "Intel Xeon …, 2 cores, 24 GiB, go1.26.8, Debian 12 (linux 6.1, amd64)".
func (m Machine) String() string {
	parts := []string{}
	if m.CPU != "" {
		parts = append(parts, m.CPU)
	}
	parts = append(parts, strconv.Itoa(m.Cores)+" cores")
	if m.MemoryBytes > 0 {
		parts = append(parts, strconv.FormatUint((m.MemoryBytes+1<<29)>>30, 10)+" GiB")
	}
	parts = append(parts, m.GoVersion)
	platform := m.OS
	if m.Kernel != "" {
		platform += " (kernel " + m.Kernel + ", " + m.Arch + ")"
	}
	parts = append(parts, platform)
	if m.LoadAverage > 0 {
		parts = append(parts, fmt.Sprintf("load average %.1f at start", m.LoadAverage))
	}
	return strings.Join(parts, ", ")
}

// firstField returns the value of the first line "key<sep>value" of file.
func firstField(file, key string, sep byte) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), string(sep))
		if ok && strings.TrimSpace(name) == key {
			return strings.TrimSpace(value)
		}
	}
	return ""
}
