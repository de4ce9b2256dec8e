// Package browsertest runs end-to-end tests in a real browser: it starts a
// headless Chromium through the DevTools protocol (chromedp) and records
// what a page does there — console messages, uncaught exceptions, network
// requests and their outcome — so that a test can drive a page and then
// say that it loaded nothing it should not and logged no error.
//
// It is imported by tests only:
//
//	tab := browsertest.Start(t) // a fresh headless browser, closed when t ends
//	tab.Do(t, "open the page", chromedp.Navigate(url), chromedp.Click(chromedp.ID("add")))
//	tab.CheckClean(t, "open the page") // no console error, no failed request
//
// Chromium is found on PATH as chromium or chromium-browser; `.ci/run`
// installs Debian's chromium package. Without it a test fails when the
// environment variable CI is set, and is skipped otherwise with a message
// saying how to install it.
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Timeout bounds a tab's whole life: at its end the browser is killed and
// every action still running fails. It is generous, for a busy 2-core
// machine under the race detector; a page that hangs fails the test rather
// than the test binary.
const Timeout = 3 * time.Minute

// StepTimeout bounds one call of Tab.Do or Eval: an element that never
// shows fails its step with the step's name, instead of the whole test at
// Timeout.
const StepTimeout = 30 * time.Second

// binaries are the names looked up on PATH, in order.
var binaries = []string{"chromium", "chromium-browser"}

// installHint says how to get a browser, for the skip or failure message.
const installHint = "install Chromium (Debian or Ubuntu: apt-get install -y chromium; .ci/run does it), " +
	"or put a chromium or chromium-browser binary on PATH"

// Find returns the path of the Chromium binary. When there is none the
// test fails if CI is set, so that CI cannot pass without having run the
// browser tests, and is skipped otherwise.
func Find(t testing.TB) string {
	t.Helper()
	for _, name := range binaries {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("no Chromium on PATH (looked for %s) and CI is set: %s", strings.Join(binaries, ", "), installHint)
	}
	t.Skipf("no Chromium on PATH (looked for %s): %s", strings.Join(binaries, ", "), installHint)
	return ""
}

// A Tab is one page of a headless Chromium started for one test. Its
// recording starts before the first navigation, so it holds every request
// and message of the page. Its methods are meant for the test's goroutine;
// the recording itself is safe alongside the browser's event loop.
type Tab struct {
	ctx    context.Context
	output *syncBuffer // the browser's own stdout and stderr

	mu       sync.Mutex
	requests []*Request
	byID     map[network.RequestID]*Request
	messages []Message
	problems []Problem
}

// Start launches a headless Chromium with a fresh profile (a new
// user-data-dir, removed afterwards) and no background networking, and
// returns its first tab. The browser is closed, and its goroutines end,
// when the test ends; it is killed after Timeout. Start skips or fails
// the test as Find does when there is no Chromium, and fails it when
// Chromium does not start.
func Start(t testing.TB) *Tab {
	t.Helper()
	path := Find(t)
	tab := &Tab{output: &syncBuffer{}, byID: map[network.RequestID]*Request{}}

	deadline, cancelDeadline := context.WithTimeout(context.Background(), Timeout)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // root in a container has no sandbox to drop into
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		// The machine has no network: every connection Chromium makes on its
		// own (updates, sync, metrics) would be refused and logged.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.CombinedOutput(tab.output),
	)
	// Without UserDataDir, chromedp makes a fresh profile directory for
	// this browser and removes it when the browser has exited.
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(deadline, opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithListener(tab.record))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		cancelDeadline()
		if out := tab.browserLog(); t.Failed() && out != "" {
			t.Logf("the browser's last output:\n%s", out)
		}
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v\nits output:\n%s", path, err, tab.browserLog())
	}
	tab.ctx = ctx
	return tab
}

// Context returns the context that runs actions in the tab. It ends when
// the test ends or after Timeout.
func (tab *Tab) Context() context.Context { return tab.ctx }

// Do runs the actions in the tab, in order, within StepTimeout, and fails
// the test at the first error, naming step.
func (tab *Tab) Do(t testing.TB, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab.ctx, StepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// Eval evaluates a JavaScript expression in the page within StepTimeout
// and decodes its value into T, failing the test on an error.
func Eval[T any](t testing.TB, tab *Tab, expression string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab.ctx, StepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expression, err)
	}
	return v
}

// Request is a network request the page made, as the browser saw it.
type Request struct {
	Method string
	URL    string
	Type   string // "Document", "Script", "Fetch", "Image", "Other", …
	Status int64  // the response's status, 0 until it comes
	// Failure is the browser's error text when the request failed
	// ("net::ERR_CONNECTION_REFUSED", "net::ERR_ABORTED", …).
	Failure string
	// Done reports whether the request ended, by finishing or failing.
	Done bool
}

func (r Request) String() string {
	s := r.Method + " " + r.URL
	switch {
	case r.Failure != "":
		s += ": " + r.Failure
	case r.Status != 0:
		s += fmt.Sprintf(": %d", r.Status)
	}
	return s
}

// Message is a console message: a console API call ("log", "warning",
// "error", …), an uncaught exception ("exception"), or an entry of the
// browser's own log ("verbose", "info", "warning", "error"; Source says
// which part wrote it, "network" for a failed resource).
type Message struct {
	Level  string
	Source string
	Text   string
	URL    string
}

func (m Message) String() string {
	s := m.Level
	if m.Source != "" {
		s += " (" + m.Source + ")"
	}
	s += ": " + m.Text
	if m.URL != "" {
		s += " [" + m.URL + "]"
	}
	return s
}

// A Problem is what a clean page never causes: a console message at error
// level, an uncaught exception, or a request that failed or was answered
// with a status of 400 or more. A request cancelled (by a navigation, or by
// the page itself) is not one.
type Problem struct {
	Message *Message // set for a console error or an exception
	Request *Request // set for a failed request
}

func (p Problem) String() string {
	if p.Message != nil {
		return "console " + p.Message.String()
	}
	return "request " + p.Request.String()
}

// record is the tab's listener: it runs on the tab's event loop, in the
// order the browser sent the events, so that once an action has returned
// every event sent before its reply is recorded.
func (tab *Tab) record(ev any) {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if r, ok := tab.byID[ev.RequestID]; ok && ev.RedirectResponse != nil {
			// A redirect reuses the request id: the hop ends here.
			r.Status, r.Done = ev.RedirectResponse.Status, true
		}
		r := &Request{Method: ev.Request.Method, URL: ev.Request.URL, Type: string(ev.Type)}
		tab.requests = append(tab.requests, r)
		tab.byID[ev.RequestID] = r
	case *network.EventResponseReceived:
		if r, ok := tab.byID[ev.RequestID]; ok {
			r.Status = ev.Response.Status
			if r.Status >= 400 {
				tab.problems = append(tab.problems, Problem{Request: r})
			}
		}
	case *network.EventLoadingFinished:
		if r, ok := tab.byID[ev.RequestID]; ok {
			r.Done = true
		}
	case *network.EventLoadingFailed:
		if r, ok := tab.byID[ev.RequestID]; ok {
			r.Failure, r.Done = ev.ErrorText, true
			// A 4xx or 5xx is a problem already; a request cancelled, by a
			// navigation or by the page, did not fail.
			if r.Status < 400 && !ev.Canceled {
				tab.problems = append(tab.problems, Problem{Request: r})
			}
		}
	case *runtime.EventConsoleAPICalled:
		m := Message{Level: string(ev.Type), Text: argsText(ev.Args)}
		if st := ev.StackTrace; st != nil && len(st.CallFrames) > 0 {
			m.URL = st.CallFrames[0].URL
		}
		tab.addMessage(m, ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert)
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text += " " + d.Exception.Description
		}
		tab.addMessage(Message{Level: "exception", Text: text, URL: d.URL}, true)
	case *log.EventEntryAdded:
		e := ev.Entry
		tab.addMessage(Message{Level: string(e.Level), Source: string(e.Source), Text: e.Text, URL: e.URL},
			e.Level == log.EntryLevelError)
	}
}

func (tab *Tab) addMessage(m Message, problem bool) {
	tab.messages = append(tab.messages, m)
	if problem {
		tab.problems = append(tab.problems, Problem{Message: &m})
	}
}

// argsText renders a console call's arguments: strings as they are, other
// values as JSON or as the browser describes them.
func argsText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		var s string
		switch {
		case a.Type == runtime.RemoteObjectTypeString && json.Unmarshal(a.Value, &s) == nil:
			parts = append(parts, s)
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		default:
			parts = append(parts, a.Description)
		}
	}
	return strings.Join(parts, " ")
}

// Requests returns a copy of every request the page has made so far, in
// the order they were sent.
func (tab *Tab) Requests() []Request {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	out := make([]Request, len(tab.requests))
	for i, r := range tab.requests {
		out[i] = *r
	}
	return out
}

// Messages returns a copy of every console message so far.
func (tab *Tab) Messages() []Message {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return append([]Message(nil), tab.messages...)
}

// TakeProblems waits until no request of the page is in flight (at most
// until Timeout), then returns the problems recorded since the last call
// and forgets them, so that a test can check a step that is meant to fail
// apart from the steps that are not.
func (tab *Tab) TakeProblems(t testing.TB) []Problem {
	t.Helper()
	tab.settle(t)
	tab.mu.Lock()
	defer tab.mu.Unlock()
	out := make([]Problem, len(tab.problems))
	for i, p := range tab.problems {
		out[i] = p
		if p.Request != nil {
			r := *p.Request
			out[i].Request = &r
		}
	}
	tab.problems = nil
	return out
}

// CheckClean fails the test for every problem recorded since the last
// TakeProblems, saying what the test was doing (step).
func (tab *Tab) CheckClean(t testing.TB, step string) {
	t.Helper()
	for _, p := range tab.TakeProblems(t) {
		t.Errorf("%s: %s", step, p)
	}
}

// settle waits until every request sent so far has ended. A round trip to
// the page first makes sure that the events sent before it are recorded.
func (tab *Tab) settle(t testing.TB) {
	t.Helper()
	for {
		Eval[chromedp.Void](t, tab, "0")
		tab.mu.Lock()
		var pending []string
		for _, r := range tab.requests {
			if !r.Done {
				pending = append(pending, r.String())
			}
		}
		tab.mu.Unlock()
		if len(pending) == 0 {
			return
		}
		select {
		case <-tab.ctx.Done():
			t.Fatalf("requests still in flight after %v: %s", Timeout, strings.Join(pending, "; "))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// syncBuffer is a bytes.Buffer that the browser's output copier and the
// test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// browserLog returns the last 20 lines the browser wrote, less its
// complaints about D-Bus, which a container does not run: Chromium logs an
// error for each service it looks for there.
func (tab *Tab) browserLog() string {
	var lines []string
	for line := range strings.Lines(tab.output.String()) {
		if !strings.Contains(line, ":ERROR:dbus/") {
			lines = append(lines, strings.TrimRight(line, "\n"))
		}
	}
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
