package todoapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/loomrt/loom/internal/harness/browsertest"
)

// serveLoopback serves the todo App over store with the App's own server
// (web's timeouts and shutdown, as `go run ./examples/todo` does) on a
// loopback listener opened once, and returns its URL. The server stops
// when the test ends.
func serveLoopback(t *testing.T, store *Store) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	app, err := NewApp(store)
	if err != nil {
		ln.Close()
		t.Fatalf("NewApp: %v", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("App.Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// pageState is what the todo page shows, read from its DOM.
type pageState struct {
	// Items are the listed todos, "[x] text" when completed and "[ ] text"
	// when not; "[?] text" when the checkbox and the completed style
	// disagree.
	Items []string `json:"items"`
	// Left is the footer's count ("2 items left"), "" when the footer is
	// hidden.
	Left string `json:"left"`
	// Filter is the selected filter: all, active or completed.
	Filter string `json:"filter"`
	// Clear reports whether "Clear completed" is shown.
	Clear bool `json:"clear"`
	// Error is the error shown, "" when none is.
	Error string `json:"error"`
}

// readState is a JavaScript expression whose value is the page's state as
// JSON, its fields in pageState's order.
const readState = `JSON.stringify({
	items: [...document.querySelectorAll("#todo-list li")].map(li => {
		const box = li.querySelector("input[type=checkbox]");
		const label = li.querySelector("label");
		const mark = !box ? "[?]" : box.checked !== li.classList.contains("completed") ? "[?]" : box.checked ? "[x]" : "[ ]";
		return mark + " " + (label ? label.textContent : "");
	}),
	left: document.getElementById("footer").hidden ? "" : document.getElementById("todo-count").textContent,
	filter: [...document.querySelectorAll(".filters a.selected")].map(a => a.dataset.state).join(","),
	clear: !document.getElementById("footer").hidden && !document.getElementById("clear-completed").hidden,
	error: document.getElementById("error").hidden ? "" : document.getElementById("error").textContent,
})`

// waitState waits until the page shows want, and fails the test with what
// it shows instead if it does not within the poll's timeout.
func waitState(t *testing.T, tab *browsertest.Tab, step string, want pageState) {
	t.Helper()
	if want.Items == nil {
		want.Items = []string{}
	}
	// As JSON.stringify writes it: < > & are not escaped.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(want); err != nil {
		t.Fatal(err)
	}
	wantJSON := strings.TrimSuffix(b.String(), "\n")
	wantLiteral, err := json.Marshal(wantJSON)
	if err != nil {
		t.Fatal(err)
	}
	_, err = chromedp.Run(tab.Context(), chromedp.Poll[chromedp.Void](readState+" === "+string(wantLiteral)))
	if err != nil {
		got := browsertest.Eval[string](t, tab, readState)
		t.Fatalf("%s: the page shows\n%s\nwant\n%s\n(%v)", step, got, wantJSON, err)
	}
}

// hover moves the mouse over the element sel selects, as a user's pointer
// does before clicking a control that shows on hover.
func hover(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		center, err := chromedp.Evaluate[[]float64](fmt.Sprintf(
			`(r => [r.x + r.width/2, r.y + r.height/2])(document.querySelector(%q).getBoundingClientRect())`, sel))(ctx, t)
		if err != nil {
			return err
		}
		if len(center) != 2 {
			return errors.New("no center for " + sel)
		}
		_, err = chromedp.MouseEvent(chromedp.MouseMoved, center[0], center[1])(ctx, t)
		return err
	})
}

// selectAll selects the whole text of the field sel selects, as Ctrl-A
// does, so that what is typed next replaces it.
func selectAll(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).select()`, sel))
}

// item selects the n-th listed todo's element part ("label",
// "input[type=checkbox]", "button.destroy", ".edit"), counting from 1.
func item(n int, part string) string {
	return fmt.Sprintf("#todo-list li:nth-child(%d) %s", n, part)
}

// TestPageInBrowser drives the todo page in a headless Chromium against
// the real server and a real SQLite database: it adds, toggles, filters,
// edits, deletes and clears todos, reloads the page, and sends a text the
// server refuses. The page must show each change, keep everything across
// a reload, show the server's error for a bad input and keep the input,
// and log no console error nor make a request that fails (the favicon
// included) except the one the bad input is meant to cause.
func TestPageInBrowser(t *testing.T) {
	store := openTestSQLite(t)
	base := serveLoopback(t, store)
	tab := browsertest.Start(t)
	type S = pageState

	tab.Do(t, "open the page", chromedp.Navigate(base+"/"))
	waitState(t, tab, "empty list", S{Filter: "all"})

	for i, text := range []string{"write tests", "walk the dog", "read the docs"} {
		tab.Do(t, "add "+text, chromedp.SendKeys(chromedp.ID("new-todo"), text+"\n"))
		want := S{Items: []string{"[ ] write tests", "[ ] walk the dog", "[ ] read the docs"}[:i+1],
			Left: fmt.Sprintf("%d item%s left", i+1, map[bool]string{true: "", false: "s"}[i == 0]), Filter: "all"}
		waitState(t, tab, "add "+text, want)
	}
	if got := browsertest.Eval[string](t, tab, `document.getElementById("new-todo").value`); got != "" {
		t.Errorf("the new-todo field after adding: got %q; want it empty", got)
	}

	tab.Do(t, "toggle walk the dog", chromedp.Click(chromedp.CSS(item(2, "input[type=checkbox]"))))
	all := S{Items: []string{"[ ] write tests", "[x] walk the dog", "[ ] read the docs"}, Left: "2 items left", Filter: "all", Clear: true}
	waitState(t, tab, "toggle walk the dog", all)

	tab.Do(t, "filter active", chromedp.Click(chromedp.CSS(`.filters a[data-state=active]`)))
	waitState(t, tab, "filter active", S{Items: []string{"[ ] write tests", "[ ] read the docs"}, Left: "2 items left", Filter: "active", Clear: true})
	tab.Do(t, "filter completed", chromedp.Click(chromedp.CSS(`.filters a[data-state=completed]`)))
	waitState(t, tab, "filter completed", S{Items: []string{"[x] walk the dog"}, Left: "2 items left", Filter: "completed", Clear: true})
	if got := browsertest.Eval[string](t, tab, "location.hash"); got != "#/completed" {
		t.Errorf("location.hash with the completed filter: got %q; want #/completed", got)
	}
	tab.Do(t, "filter all", chromedp.Click(chromedp.CSS(`.filters a[data-state=all]`)))
	waitState(t, tab, "filter all", all)

	// Edit: a double-click opens the field, with the text; what is typed
	// over it is saved by Enter.
	tab.Do(t, "edit write tests",
		chromedp.DoubleClick(chromedp.CSS(item(1, "label"))),
		selectAll(item(1, ".edit")),
		chromedp.SendKeys(chromedp.CSS(item(1, ".edit")), "write more tests\n"))
	all.Items[0] = "[ ] write more tests"
	waitState(t, tab, "edit write tests", all)
	// Escape drops the edit: nothing is sent.
	tab.Do(t, "edit read the docs, then escape",
		chromedp.DoubleClick(chromedp.CSS(item(3, "label"))),
		chromedp.SendKeys(chromedp.CSS(item(3, ".edit")), " twice"+kb.Escape))
	waitState(t, tab, "escape an edit", all)

	// A todo's text is shown as text, never parsed as HTML: this one would
	// load an image (a failed request) if it were.
	const markup = `<img src="/nothing-here.png"> <b>bold?</b>`
	tab.Do(t, "add markup", chromedp.SendKeys(chromedp.ID("new-todo"), markup+"\n"))
	all.Items = append(all.Items, "[ ] "+markup)
	all.Left = "3 items left"
	waitState(t, tab, "add markup", all)
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll("#todo-list img, #todo-list b").length`); n != 0 {
		t.Errorf("the list has %d img or b elements; want 0 (text is not HTML)", n)
	}
	// The delete button shows when the pointer is over the todo.
	tab.Do(t, "delete the markup todo", hover(item(4, "label")), chromedp.Click(chromedp.CSS(item(4, "button.destroy"))))
	all.Items = all.Items[:3]
	all.Left = "2 items left"
	waitState(t, tab, "delete the markup todo", all)

	tab.Do(t, "clear completed", chromedp.Click(chromedp.ID("clear-completed")))
	all = S{Items: []string{"[ ] write more tests", "[ ] read the docs"}, Left: "2 items left", Filter: "all"}
	waitState(t, tab, "clear completed", all)
	tab.CheckClean(t, "add, toggle, filter, edit, delete, clear")

	// A reload shows what the database holds, under the same filter.
	// One step at a time: the toggle's answer re-renders the list and the
	// footer, and a click aimed before that lands where the link was, not
	// where it is (chromedp clicks at coordinates).
	tab.Do(t, "toggle read the docs", chromedp.Click(chromedp.CSS(item(2, "input[type=checkbox]"))))
	waitState(t, tab, "toggle read the docs",
		S{Items: []string{"[ ] write more tests", "[x] read the docs"}, Left: "1 item left", Filter: "all", Clear: true})
	tab.Do(t, "filter completed", chromedp.Click(chromedp.CSS(`.filters a[data-state=completed]`)))
	completed := S{Items: []string{"[x] read the docs"}, Left: "1 item left", Filter: "completed", Clear: true}
	waitState(t, tab, "toggle read the docs, filter completed", completed)
	tab.Do(t, "reload", chromedp.Reload())
	waitState(t, tab, "after the reload", completed)
	tab.Do(t, "filter all", chromedp.Click(chromedp.CSS(`.filters a[data-state=all]`)))
	all = S{Items: []string{"[ ] write more tests", "[x] read the docs"}, Left: "1 item left", Filter: "all", Clear: true}
	waitState(t, tab, "after the reload, all", all)
	checkStore(t, store, all.Items)
	tab.CheckClean(t, "reload")

	// A text one character over the limit: the page's maxlength stops a
	// user typing it, so take the attribute away, as a client that ignores
	// it would; the server refuses it and the page says why and keeps it.
	over := strings.Repeat("x", MaxTextLength+1)
	tab.Do(t, "add a text over the limit",
		chromedp.RemoveAttribute(chromedp.ID("new-todo"), "maxlength"),
		chromedp.SetValue(chromedp.ID("new-todo"), over),
		chromedp.SendKeys(chromedp.ID("new-todo"), "\n"))
	refused := all
	refused.Error = fmt.Sprintf("text is longer than %d characters", MaxTextLength)
	waitState(t, tab, "add a text over the limit", refused)
	if got := browsertest.Eval[string](t, tab, `document.getElementById("new-todo").value`); got != over {
		t.Errorf("the new-todo field after a refused text: got %d characters; want the %d typed, kept to fix", len(got), len(over))
	}
	problems := tab.TakeProblems(t)
	for _, p := range problems {
		isRefusal := p.Request != nil && p.Request.Method == "POST" && p.Request.URL == base+"/api/todos" && p.Request.Status == 400
		isItsLog := p.Message != nil && p.Message.Source == "network" && p.Message.URL == base+"/api/todos" &&
			strings.Contains(p.Message.Text, "status of 400")
		if !isRefusal && !isItsLog {
			t.Errorf("add a text over the limit: %s; want only the 400 for POST /api/todos", p)
		}
	}
	if len(problems) == 0 {
		t.Errorf("add a text over the limit: no failed request recorded; want the 400 for POST /api/todos")
	}

	// Exactly at the limit is accepted, and the error goes away.
	at := strings.Repeat("y", MaxTextLength)
	tab.Do(t, "add a text at the limit",
		chromedp.SetValue(chromedp.ID("new-todo"), at),
		chromedp.SendKeys(chromedp.ID("new-todo"), "\n"))
	all.Items = append(all.Items, "[ ] "+at)
	all.Left = "2 items left"
	waitState(t, tab, "add a text at the limit", all)
	checkStore(t, store, all.Items)

	// More todos than one page of the API: the page follows the Link
	// header to the end.
	for i := range DefaultPageLimit {
		if _, err := store.Create(t.Context(), fmt.Sprintf("bulk %d", i)); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	tab.Do(t, "reload with two pages of todos", chromedp.Reload())
	for i := range DefaultPageLimit {
		all.Items = append(all.Items, fmt.Sprintf("[ ] bulk %d", i))
	}
	all.Left = fmt.Sprintf("%d items left", DefaultPageLimit+2)
	waitState(t, tab, "reload with two pages of todos", all)
	tab.CheckClean(t, "the last steps")
}

// checkStore checks that the database holds the todos the page shows, in
// pageState's form.
func checkStore(t *testing.T, store *Store, want []string) {
	t.Helper()
	todos, err := store.List(t.Context(), StateAll)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var got []string
	for _, todo := range todos {
		mark := "[ ]"
		if todo.Completed {
			mark = "[x]"
		}
		got = append(got, mark+" "+todo.Text)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the database holds\n%q\nwant what the page shows\n%q", got, want)
	}
}
