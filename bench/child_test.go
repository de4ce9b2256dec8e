package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
)

func TestParseListening(t *testing.T) {
	tests := []struct {
		line          string
		http, metrics string
		ok            bool
	}{
		{"listening http=127.0.0.1:1234 metrics=127.0.0.1:1235", "127.0.0.1:1234", "127.0.0.1:1235", true},
		{"listening http=[::1]:80\n", "[::1]:80", "", true},
		{"listening metrics=127.0.0.1:1", "", "127.0.0.1:1", false},
		{"serving on 127.0.0.1:1234", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		h, m, ok := parseListening(tt.line)
		if h != tt.http || m != tt.metrics || ok != tt.ok {
			t.Errorf("parseListening(%q) = %q, %q, %v; want %q, %q, %v", tt.line, h, m, ok, tt.http, tt.metrics, tt.ok)
		}
	}
}

func FuzzParseListening(f *testing.F) {
	f.Add("listening http=127.0.0.1:1234 metrics=127.0.0.1:1235")
	f.Add("listening http= metrics")
	f.Fuzz(func(t *testing.T, line string) {
		h, _, ok := parseListening(line)
		if ok != (h != "") {
			t.Errorf("parseListening(%q): ok = %v with http %q", line, ok, h)
		}
	})
}

func TestLineWatcherFindsLineAcrossWrites(t *testing.T) {
	w := &lineWatcher{found: make(chan [2]string, 1)}
	for _, chunk := range []string{"starting\nlisten", "ing http=127.0.0.1:9 met", "rics=127.0.0.1:10\nmore\n"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case got := <-w.found:
		if got != [2]string{"127.0.0.1:9", "127.0.0.1:10"} {
			t.Errorf("found %v; want both addresses", got)
		}
	default:
		t.Fatal("listening line not found")
	}
}

func TestStderrLogKeepsCauseAndTail(t *testing.T) {
	l := newStderrLog()
	fmt.Fprintln(l, "runtime: program exceeds 10000-thread limit")
	fmt.Fprintln(l, "fatal error: thread exhaustion")
	for i := range 5000 {
		fmt.Fprintf(l, "goroutine %d [syscall]:\n", i)
	}
	fmt.Fprint(l, "exit without newline")
	fatal := l.Fatal()
	if len(fatal) != 2 || fatal[1] != "fatal error: thread exhaustion" {
		t.Errorf("Fatal() = %q; want the two lines that say why", fatal)
	}
	tail := l.Tail()
	if len(tail) != tailLines+1 || tail[len(tail)-1] != "exit without newline" || tail[0] != "goroutine 4985 [syscall]:" {
		t.Errorf("Tail() = %q; want the last %d lines and the unterminated one", tail, tailLines)
	}
	if !l.Died() {
		t.Errorf("Died() = false after a fatal error line")
	}
	if ex := l.excerpt(); !strings.Contains(ex, "thread exhaustion") {
		t.Errorf("excerpt() = %q; want the fatal lines", ex)
	}
}

func TestStderrLogWithoutFatalLine(t *testing.T) {
	l := newStderrLog()
	fmt.Fprintln(l, "runtime: a warning that is not fatal")
	fmt.Fprintln(l, "level=WARN msg=slow")
	if l.Died() {
		t.Errorf("Died() = true; want false without a fatal error or panic line")
	}
}

func TestStartChildReportsEarlyExit(t *testing.T) {
	_, err := startChild(context.Background(), "/bin/sh", []string{"-c", "echo boom >&2; exit 3"}, nil, DefaultStartTimeout)
	if !errors.Is(err, ErrServerStart) || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("startChild(exiting shell) = %v; want ErrServerStart with its stderr and status", err)
	}
}

func TestServeRejectsBadInput(t *testing.T) {
	var out strings.Builder
	err := Serve(context.Background(), ServeConfig{Scenario: "nope", Scenarios: testCatalogue()}, &out)
	if !errors.Is(err, ErrUnknownScenario) {
		t.Errorf("Serve(nope) = %v; want ErrUnknownScenario", err)
	}
	err = Serve(context.Background(), ServeConfig{Scenario: "test-ok", Model: "pool:zero", Scenarios: testCatalogue()}, &out)
	if err == nil || !strings.Contains(err.Error(), "pool:zero") {
		t.Errorf("Serve(model pool:zero) = %v; want an error naming the spec", err)
	}
	err = Serve(context.Background(), ServeConfig{Scenario: "test-ok", Model: "tomcat/virtual", Scenarios: testCatalogue()}, &out)
	if !errors.Is(err, web.ErrEngine) || !strings.Contains(err.Error(), "tomcat") {
		t.Errorf("Serve(model tomcat/virtual) = %v; want web.ErrEngine naming tomcat", err)
	}
	if out.Len() != 0 {
		t.Errorf("Serve printed %q before failing; want nothing", out.String())
	}
}

func TestStartChildTimesOut(t *testing.T) {
	// A process that never prints its listening line: startChild gives up
	// after the start timeout and stops it (SIGTERM to its process group).
	_, err := startChild(context.Background(), "/bin/sh", []string{"-c", "echo starting >&2; sleep 30"}, nil, 200*time.Millisecond)
	if !errors.Is(err, ErrServerStart) || !strings.Contains(err.Error(), "no listening line after 200ms") || !strings.Contains(err.Error(), "starting") {
		t.Errorf("startChild(silent shell) = %v; want ErrServerStart saying it waited 200ms, with its stderr", err)
	}
}

// TestLineWatcherEdges: an empty line before the listening line does not
// stop the search, and the buffer of a child that never ends a line is
// dropped only past 64 KiB.
func TestLineWatcherEdges(t *testing.T) {
	w := &lineWatcher{found: make(chan [2]string, 1)}
	w.Write([]byte("\n\nlistening http=127.0.0.1:9 metrics=127.0.0.1:10\n"))
	select {
	case got := <-w.found:
		if got != [2]string{"127.0.0.1:9", "127.0.0.1:10"} {
			t.Errorf("found %v; want both addresses", got)
		}
	default:
		t.Error("listening line after empty lines not found")
	}

	w = &lineWatcher{found: make(chan [2]string, 1)}
	w.Write(bytes.Repeat([]byte("x"), 64<<10))
	if len(w.buf) != 64<<10 {
		t.Errorf("buffer of 64 KiB without a newline: %d bytes kept; want all", len(w.buf))
	}
	w.Write([]byte("x"))
	if len(w.buf) != 0 {
		t.Errorf("buffer of 64 KiB + 1 without a newline: %d bytes kept; want none", len(w.buf))
	}
}

// TestStderrLogEdges: empty lines are lines; a line of exactly 300 bytes
// (ModelRun.Stderr's cut) is kept whole, one byte more is cut; an
// unterminated run of bytes becomes a line only past 300; at most
// fatalLines fatal lines are kept.
func TestStderrLogEdges(t *testing.T) {
	l := newStderrLog()
	l.Write([]byte("a\n\nb\n"))
	if got := l.Tail(); !reflect.DeepEqual(got, []string{"a", "", "b"}) {
		t.Errorf("Tail() = %q; want a, empty, b and no empty unterminated line", got)
	}

	const cut = 300 // ModelRun.Stderr's documented cut
	exact := strings.Repeat("x", cut)
	l = newStderrLog()
	l.Write([]byte(exact + "\n" + exact + "y\n"))
	if got := l.Tail(); !reflect.DeepEqual(got, []string{exact, exact + "…"}) {
		t.Errorf("Tail() of lines of %d and %d bytes = %q; want the first whole, the second cut", cut, cut+1, got)
	}

	l = newStderrLog()
	l.Write([]byte(exact))
	l.Write([]byte("yz\n"))
	if got := l.Tail(); !reflect.DeepEqual(got, []string{exact + "…"}) {
		t.Errorf("Tail() of %d bytes then \"yz\\n\" = %q; want one line, cut", cut, got)
	}

	l = newStderrLog()
	for i := range fatalLines + 1 {
		fmt.Fprintf(l, "panic: %d\n", i)
	}
	if got := l.Fatal(); len(got) != fatalLines || got[fatalLines-1] != fmt.Sprintf("panic: %d", fatalLines-1) {
		t.Errorf("Fatal() = %q; want the first %d", got, fatalLines)
	}

	// The runtime's last words are either a fatal error or a panic; its
	// other lines say why but do not mean it died.
	for _, tc := range []struct {
		line string
		died bool
	}{
		{"fatal error: thread exhaustion", true},
		{"panic: boom", true},
		{"runtime: program exceeds 10000-thread limit", false},
		{"SIGSEGV: segmentation violation", false},
	} {
		l = newStderrLog()
		fmt.Fprintln(l, tc.line)
		if got := l.Died(); got != tc.died {
			t.Errorf("Died() after %q = %t; want %t", tc.line, got, tc.died)
		}
	}
}
