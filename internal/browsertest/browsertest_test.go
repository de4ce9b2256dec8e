package browsertest

import (
	"io"
	"net/http"
	"net/http/httptest"
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
