package procstat_test

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/loomrt/loom/internal/harness/procstat"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A real line from a Go server, with a command name holding a space and a
// parenthesis to make the parser find the last ')'.
const sample = "4242 (serve (x) y) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 12 0 9876 1300000000 5000 18446744073709551615 1 1 0 0 0 0 0 0 2143420159 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0"

func TestParseStat(t *testing.T) {
	got, err := procstat.ParseStat(sample, 4096)
	if err != nil {
		t.Fatal(err)
	}
	want := procstat.Stat{RSSBytes: 5000 * 4096, Threads: 12, CPUSeconds: 3.25, State: 'S'}
	if got != want {
		t.Errorf("ParseStat = %+v; want %+v", got, want)
	}
}

func TestParseStatErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
	}{
		{"empty", ""},
		{"no comm", "4242 S 1 2 3"},
		{"short", "4242 (x) S 1 2 3"},
		{"bad utime", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 abc 75 0 0 20 0 12 0 9876 1 5000"},
		{"bad threads", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 250 75 0 0 20 0 -3 0 9876 1 5000"},
		{"bad state", "1 (x) SS 1 1 1 0 -1 0 0 0 0 0 250 75 0 0 20 0 12 0 9876 1 5000"},
	}
	for _, tt := range tests {
		_, err := procstat.ParseStat(tt.line, 4096)
		if !errors.Is(err, procstat.ErrMalformed) {
			t.Errorf("%s: ParseStat(%q) error = %v; want ErrMalformed", tt.name, tt.line, err)
		}
	}
}

func TestReadSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	st, err := procstat.Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.RSSBytes < 1<<20 {
		t.Errorf("RSSBytes = %d; want at least 1 MiB for a Go test binary", st.RSSBytes)
	}
	if st.Threads < 1 {
		t.Errorf("Threads = %d; want at least 1", st.Threads)
	}
	if st.State == 0 {
		t.Errorf("State = 0; want a state letter")
	}
}

func TestReadExitedProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	_, err := procstat.Read(cmd.Process.Pid)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read(reaped pid) error = %v; want os.ErrNotExist", err)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add(sample)
	f.Add("1 (a)b) R 0")
	f.Add("")
	f.Fuzz(func(t *testing.T, line string) {
		st, err := procstat.ParseStat(line, 4096)
		if err != nil {
			return
		}
		if st.Threads < 0 || st.CPUSeconds < 0 {
			t.Errorf("ParseStat(%q) = %+v; want non-negative figures", line, st)
		}
	})
}
