package browsertest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"
)

// TestMain checks that a tab leaves no goroutine behind once its test ends.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// pages serves a clean page, and one that does each thing a Problem is.
func pages(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /clean", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `<!doctype html><title>clean</title><link rel="icon" href="data:,">`+
			`<p id="p">waiting</p><script>console.log("hello", 42); fetch("/data").then(r => r.text()).then(t => { p.textContent = t; })</script>`)
	})
	mux.HandleFunc("GET /data", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "loaded")
	})
	mux.HandleFunc("GET /dirty", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `<!doctype html><title>dirty</title><link rel="icon" href="data:,">`+
			`<script>
console.error("an error logged");
fetch("/missing");
fetch("/hangup").catch(() => {});
setTimeout(() => { throw new Error("thrown and not caught"); }, 0);
</script>`)
	})
	mux.HandleFunc("GET /hangup", func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestCleanPageHasNoProblems(t *testing.T) {
	base := pages(t)
	tab := Start(t)
	tab.Do(t, "load the clean page", chromedp.Navigate(base+"/clean"),
		chromedp.Poll[chromedp.Void](`document.getElementById("p").textContent === "loaded"`))
	tab.CheckClean(t, "load the clean page")

	var got []string
	for _, r := range tab.Requests() {
		got = append(got, r.String())
	}
	want := []string{"GET " + base + "/clean: 200", "GET " + base + "/data: 200"}
	if !slices.Equal(got, want) {
		t.Errorf("requests: got %q; want %q", got, want)
	}
	if !slices.ContainsFunc(tab.Messages(), func(m Message) bool { return m.Level == "log" && m.Text == "hello 42" }) {
		t.Errorf("messages %v; want the console.log call as log: hello 42", tab.Messages())
	}
}

func TestDirtyPageHasEveryProblem(t *testing.T) {
	base := pages(t)
	tab := Start(t)
	tab.Do(t, "load the dirty page", chromedp.Navigate(base+"/dirty"))
	// The exception comes from a timer: wait for it before taking stock.
	tab.Do(t, "wait for the exception", chromedp.Poll[chromedp.Void](`new Promise(r => setTimeout(() => r(true), 50))`))

	var got []string
	for _, p := range tab.TakeProblems(t) {
		got = append(got, p.String())
	}
	for _, want := range []string{
		"console error: an error logged",
		"console exception: Uncaught Error: thrown and not caught",
		"request GET " + base + "/missing: 404",
		"console error (network): Failed to load resource: the server responded with a status of 404 (Not Found)",
		"request GET " + base + "/hangup: net::ERR_EMPTY_RESPONSE",
	} {
		if !slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, want) }) {
			t.Errorf("problems lack %q; got:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if again := tab.TakeProblems(t); len(again) != 0 {
		t.Errorf("TakeProblems a second time: got %v; want none (the first call forgets them)", again)
	}
}

// outcomeTB is a testing.TB that records whether Fatalf or Skipf was
// called, and stops the goroutine as they do.
type outcomeTB struct {
	testing.TB
	fatal, skip string
}

func (o *outcomeTB) Helper() {}

func (o *outcomeTB) Fatalf(format string, args ...any) {
	o.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (o *outcomeTB) Skipf(format string, args ...any) {
	o.skip = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestFindWithoutChromium checks that a machine without Chromium skips the
// browser tests, saying how to install it, except under CI, where they fail.
func TestFindWithoutChromium(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // a PATH with no browser on it
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		o := &outcomeTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Find(o)
		}()
		<-done
		gotFatal, gotSkip := o.fatal != "", o.skip != ""
		if gotFatal != (ci != "") || gotSkip != (ci == "") {
			t.Errorf("CI=%q: got Fatalf %q, Skipf %q; want %s", ci, o.fatal, o.skip,
				map[bool]string{true: "Fatalf", false: "Skipf"}[ci != ""])
		}
		if msg := o.fatal + o.skip; !strings.Contains(msg, "apt-get install -y chromium") {
			t.Errorf("CI=%q: message %q; want it to say how to install Chromium", ci, msg)
		}
	}
}
