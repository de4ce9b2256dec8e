package todoapp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
)

// serve starts the todo App over store on a real loopback server and
// returns its URL. The server and the App are shut down when the test ends.
func serve(t testing.TB, store *Store, opts ...web.AppOption) string {
	t.Helper()
	app, err := NewApp(store, opts...)
	if err != nil {
		t.Fatalf("NewApp: %v", err)
	}
	srv := httptest.NewServer(app)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Shutdown(ctx); err != nil {
			t.Errorf("App.Shutdown: %v", err)
		}
	})
	return srv.URL
}

// seed adds three todos, the second completed: ids 1, 2 and 3 in a new store.
func seed(t testing.TB, store *Store) []Todo {
	t.Helper()
	ctx := t.Context()
	var todos []Todo
	for _, text := range []string{"write tests", "walk the dog", "read the docs"} {
		todo, err := store.Create(ctx, text)
		if err != nil {
			t.Fatalf("seed: %v", err)
		}
		todos = append(todos, todo)
	}
	done, err := store.Toggle(ctx, todos[1].ID)
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	todos[1] = done
	return todos
}

// reset deletes every todo and restarts the ids at 1.
func reset(t testing.TB, store *Store) {
	t.Helper()
	query := "TRUNCATE todos RESTART IDENTITY"
	if store.Backend() == "sqlite" {
		query = "DELETE FROM todos; DELETE FROM sqlite_sequence WHERE name = 'todos'"
	}
	if _, err := store.write.ExecContext(t.Context(), query); err != nil {
		t.Fatalf("reset: %v", err)
	}
}

// do sends one request and returns the response with its body read.
func do(t *testing.T, method, url, contentType, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp, string(b)
}

// The seeded todos as JSON, for the expected bodies below.
const (
	todo1 = `{"id":1,"text":"write tests","completed":false}`
	todo2 = `{"id":2,"text":"walk the dog","completed":true}`
	todo3 = `{"id":3,"text":"read the docs","completed":false}`
)

func TestAPI(t *testing.T) {
	long := strings.Repeat("é", MaxTextLength) // the longest text, in 2-byte runes
	tests := []struct {
		name        string
		method      string
		path        string
		contentType string // "" means application/json when there is a body
		body        string

		wantStatus int
		wantBody   string // the exact JSON body of a success, "" for none
		wantLink   string // the Link header of a success, "" for none
		wantError  string // a part of the {"error": …} message of a failure
		// wantList is every todo after the request, as JSON, in order; ""
		// skips the check. Failed writes check that they changed nothing.
		wantList string
	}{
		{name: "list", method: "GET", path: "/api/todos",
			wantStatus: 200, wantBody: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "list all", method: "GET", path: "/api/todos?state=all",
			wantStatus: 200, wantBody: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "list active", method: "GET", path: "/api/todos?state=active",
			wantStatus: 200, wantBody: "[" + todo1 + "," + todo3 + "]"},
		{name: "list completed", method: "GET", path: "/api/todos?state=completed",
			wantStatus: 200, wantBody: "[" + todo2 + "]"},
		{name: "list bad state", method: "GET", path: "/api/todos?state=done",
			wantStatus: 400, wantError: `query parameter "state": bad state "done": want all, active or completed`},

		{name: "list first page", method: "GET", path: "/api/todos?limit=2",
			wantStatus: 200, wantBody: "[" + todo1 + "," + todo2 + "]",
			wantLink: `</api/todos?after=2&limit=2>; rel="next"`},
		{name: "list last page", method: "GET", path: "/api/todos?limit=2&after=2",
			wantStatus: 200, wantBody: "[" + todo3 + "]"},
		{name: "list page exactly full", method: "GET", path: "/api/todos?limit=3",
			wantStatus: 200, wantBody: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "list largest page", method: "GET", path: "/api/todos?limit=500",
			wantStatus: 200, wantBody: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "list after from start", method: "GET", path: "/api/todos?after=0",
			wantStatus: 200, wantBody: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "list after the end", method: "GET", path: "/api/todos?after=3",
			wantStatus: 200, wantBody: "[]"},
		{name: "list after an unknown id", method: "GET", path: "/api/todos?after=1000",
			wantStatus: 200, wantBody: "[]"},
		{name: "list page by state keeps the query", method: "GET", path: "/api/todos?state=active&limit=1",
			wantStatus: 200, wantBody: "[" + todo1 + "]",
			wantLink: `</api/todos?after=1&limit=1&state=active>; rel="next"`},
		{name: "list next page by state", method: "GET", path: "/api/todos?after=1&limit=1&state=active",
			wantStatus: 200, wantBody: "[" + todo3 + "]"},
		{name: "list page starting after a todo of another state", method: "GET", path: "/api/todos?state=completed&after=1&limit=1",
			wantStatus: 200, wantBody: "[" + todo2 + "]"},
		{name: "list limit zero", method: "GET", path: "/api/todos?limit=0",
			wantStatus: 400, wantError: `query parameter "limit": 0 is too small: want an integer from 1 to 500`},
		{name: "list limit negative", method: "GET", path: "/api/todos?limit=-1",
			wantStatus: 400, wantError: `query parameter "limit": -1 is too small: want an integer from 1 to 500`},
		{name: "list limit over the maximum", method: "GET", path: "/api/todos?limit=501",
			wantStatus: 400, wantError: `query parameter "limit": 501 is too large: want an integer from 1 to 500`},
		{name: "list limit beyond int64", method: "GET", path: "/api/todos?limit=99999999999999999999",
			wantStatus: 400, wantError: `query parameter "limit": 99999999999999999999 is too large`},
		{name: "list limit not an integer", method: "GET", path: "/api/todos?limit=abc",
			wantStatus: 400, wantError: `query parameter "limit": "abc" is not an integer: want an integer from 1 to 500`},
		{name: "list limit fractional", method: "GET", path: "/api/todos?limit=1.5",
			wantStatus: 400, wantError: `query parameter "limit": "1.5" is not an integer`},
		{name: "list limit empty", method: "GET", path: "/api/todos?limit=",
			wantStatus: 400, wantError: `query parameter "limit": empty: want an integer from 1 to 500`},
		{name: "list limit repeated", method: "GET", path: "/api/todos?limit=1&limit=2",
			wantStatus: 400, wantError: `query parameter "limit": given 2 times: want it once`},
		{name: "list after not an integer", method: "GET", path: "/api/todos?after=xyz",
			wantStatus: 400, wantError: `query parameter "after": "xyz" is not an integer: want an integer from 0 up`},
		{name: "list after negative", method: "GET", path: "/api/todos?after=-1",
			wantStatus: 400, wantError: `query parameter "after": -1 is too small: want an integer from 0 up`},
		{name: "list after empty", method: "GET", path: "/api/todos?after=",
			wantStatus: 400, wantError: `query parameter "after": empty`},
		{name: "list after repeated", method: "GET", path: "/api/todos?after=1&after=1",
			wantStatus: 400, wantError: `query parameter "after": given 2 times: want it once`},
		{name: "list long bad value is cut short", method: "GET", path: "/api/todos?after=" + strings.Repeat("x", 100),
			wantStatus: 400, wantError: `query parameter "after": "` + strings.Repeat("x", 40) + `" is not an integer`},

		{name: "get", method: "GET", path: "/api/todos/2", wantStatus: 200, wantBody: todo2},
		{name: "get missing", method: "GET", path: "/api/todos/99",
			wantStatus: 404, wantError: "todo 99: todo not found"},
		{name: "get non-integer id", method: "GET", path: "/api/todos/abc",
			wantStatus: 400, wantError: `path parameter "id": "abc" is not an integer`},

		{name: "create", method: "POST", path: "/api/todos", body: `{"text":"buy milk"}`,
			wantStatus: 201, wantBody: `{"id":4,"text":"buy milk","completed":false}`,
			wantList: "[" + todo1 + "," + todo2 + "," + todo3 + `,{"id":4,"text":"buy milk","completed":false}]`},
		{name: "create trims", method: "POST", path: "/api/todos", body: `{"text":"  buy milk\n"}`,
			wantStatus: 201, wantBody: `{"id":4,"text":"buy milk","completed":false}`},
		{name: "create json suffix content type", method: "POST", path: "/api/todos",
			contentType: "application/merge-patch+json", body: `{"text":"x"}`,
			wantStatus: 201, wantBody: `{"id":4,"text":"x","completed":false}`},
		{name: "create longest text", method: "POST", path: "/api/todos", body: `{"text":"` + long + `"}`,
			wantStatus: 201, wantBody: `{"id":4,"text":"` + long + `","completed":false}`},
		{name: "create too long", method: "POST", path: "/api/todos", body: `{"text":"` + long + `e"}`,
			wantStatus: 400, wantError: "text is longer than 1000 characters",
			wantList: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "create empty text", method: "POST", path: "/api/todos", body: `{"text":""}`,
			wantStatus: 400, wantError: "text is empty",
			wantList: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "create blank text", method: "POST", path: "/api/todos", body: `{"text":" \t\n"}`,
			wantStatus: 400, wantError: "text is empty"},
		{name: "create null text", method: "POST", path: "/api/todos", body: `{"text":null}`,
			wantStatus: 400, wantError: "text is empty"},
		{name: "create missing text", method: "POST", path: "/api/todos", body: `{}`,
			wantStatus: 400, wantError: `missing JSON field "text"`},
		{name: "create unknown field", method: "POST", path: "/api/todos", body: `{"text":"x","completed":true}`,
			wantStatus: 400, wantError: `unknown JSON field "completed"`,
			wantList: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "create misspelt field", method: "POST", path: "/api/todos", body: `{"txt":"x"}`,
			wantStatus: 400, wantError: `unknown JSON field "txt"`},
		{name: "create text not a string", method: "POST", path: "/api/todos", body: `{"text":5}`,
			wantStatus: 400, wantError: `JSON field "text": want a string, got a number`},
		{name: "create body not an object", method: "POST", path: "/api/todos", body: `["x"]`,
			wantStatus: 400, wantError: "JSON body is not an object"},
		{name: "create null body", method: "POST", path: "/api/todos", body: `null`,
			wantStatus: 400, wantError: "JSON body is not an object"},
		{name: "create malformed JSON", method: "POST", path: "/api/todos", body: `{"text":`,
			wantStatus: 400, wantError: "malformed JSON"},
		{name: "create JSON syntax error", method: "POST", path: "/api/todos", body: `{"text" "x"}`,
			wantStatus: 400, wantError: "malformed JSON"},
		{name: "create trailing data", method: "POST", path: "/api/todos", body: `{"text":"x"} {"text":"y"}`,
			wantStatus: 400, wantError: "malformed JSON",
			wantList: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "create empty body", method: "POST", path: "/api/todos",
			wantStatus: 400, wantError: "empty request body"},
		{name: "create wrong content type", method: "POST", path: "/api/todos",
			contentType: "text/plain", body: `{"text":"x"}`,
			wantStatus: 415, wantError: `content type "text/plain" is not application/json`},
		{name: "create oversize body", method: "POST", path: "/api/todos",
			body:       `{"text":"` + strings.Repeat("a", web.DefaultBodyLimit) + `"}`,
			wantStatus: 413, wantError: "request body larger than",
			wantList: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},

		{name: "update", method: "PUT", path: "/api/todos/2", body: `{"text":"walk the cat"}`,
			wantStatus: 200, wantBody: `{"id":2,"text":"walk the cat","completed":true}`,
			wantList: "[" + todo1 + `,{"id":2,"text":"walk the cat","completed":true},` + todo3 + "]"},
		{name: "update missing", method: "PUT", path: "/api/todos/99", body: `{"text":"x"}`,
			wantStatus: 404, wantError: "todo 99: todo not found"},
		{name: "update empty text", method: "PUT", path: "/api/todos/1", body: `{"text":"  "}`,
			wantStatus: 400, wantError: "text is empty",
			wantList: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "update unknown field", method: "PUT", path: "/api/todos/1", body: `{"text":"x","completed":true}`,
			wantStatus: 400, wantError: `unknown JSON field "completed"`},
		{name: "update non-integer id", method: "PUT", path: "/api/todos/one", body: `{"text":"x"}`,
			wantStatus: 400, wantError: `path parameter "id": "one" is not an integer`},
		{name: "update malformed JSON", method: "PUT", path: "/api/todos/1", body: `{`,
			wantStatus: 400, wantError: "malformed JSON"},

		{name: "toggle active", method: "POST", path: "/api/todos/1/toggle",
			wantStatus: 200, wantBody: `{"id":1,"text":"write tests","completed":true}`,
			wantList: `[{"id":1,"text":"write tests","completed":true},` + todo2 + "," + todo3 + "]"},
		{name: "toggle completed", method: "POST", path: "/api/todos/2/toggle",
			wantStatus: 200, wantBody: `{"id":2,"text":"walk the dog","completed":false}`},
		{name: "toggle missing", method: "POST", path: "/api/todos/99/toggle",
			wantStatus: 404, wantError: "todo 99: todo not found"},
		{name: "toggle negative id", method: "POST", path: "/api/todos/-1/toggle",
			wantStatus: 404, wantError: "todo -1: todo not found"},
		{name: "toggle fractional id", method: "POST", path: "/api/todos/1.5/toggle",
			wantStatus: 400, wantError: `path parameter "id": "1.5" is not an integer`},
		{name: "toggle id out of range", method: "POST", path: "/api/todos/99999999999999999999/toggle",
			wantStatus: 400, wantError: `path parameter "id": "99999999999999999999" is not an integer`},

		{name: "delete", method: "DELETE", path: "/api/todos/3",
			wantStatus: 204, wantList: "[" + todo1 + "," + todo2 + "]"},
		{name: "delete missing", method: "DELETE", path: "/api/todos/99",
			wantStatus: 404, wantError: "todo 99: todo not found",
			wantList: "[" + todo1 + "," + todo2 + "," + todo3 + "]"},
		{name: "delete non-integer id", method: "DELETE", path: "/api/todos/x",
			wantStatus: 400, wantError: `path parameter "id": "x" is not an integer`},

		{name: "clear completed", method: "POST", path: "/api/todos/clear-completed",
			wantStatus: 200, wantBody: `{"removed":1}`, wantList: "[" + todo1 + "," + todo3 + "]"},

		{name: "wrong method", method: "PATCH", path: "/api/todos/1", wantStatus: 405},
		{name: "unknown route", method: "GET", path: "/api/nothing", wantStatus: 404},
	}

	forEachBackend(t, func(t *testing.T, open func(t testing.TB) *Store) {
		// One store and server per backend, emptied before each case:
		// opening a database per case costs far more under -race.
		store := open(t)
		base := serve(t, store)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				reset(t, store)
				seed(t, store)

				ct := tt.contentType
				if ct == "" && tt.body != "" {
					ct = "application/json"
				}
				resp, body := do(t, tt.method, base+tt.path, ct, tt.body)
				if resp.StatusCode != tt.wantStatus {
					t.Fatalf("%s %s: got status %d; want %d (body %.200q)",
						tt.method, tt.path, resp.StatusCode, tt.wantStatus, body)
				}
				switch {
				case tt.wantError != "":
					var e struct{ Error string }
					if err := json.Unmarshal([]byte(body), &e); err != nil {
						t.Fatalf("error body %.200q is not JSON: %v", body, err)
					}
					if !strings.Contains(e.Error, tt.wantError) {
						t.Errorf("got error %q; want it to contain %q", e.Error, tt.wantError)
					}
				case tt.wantStatus < 300:
					if got := strings.TrimSuffix(body, "\n"); got != tt.wantBody {
						t.Errorf("got body %.300s; want %.300s", got, tt.wantBody)
					}
					if tt.wantBody != "" {
						if got := resp.Header.Get("Content-Type"); got != "application/json" {
							t.Errorf("got Content-Type %q; want application/json", got)
						}
					}
					if got := resp.Header.Get("Link"); got != tt.wantLink {
						t.Errorf("got Link %q; want %q", got, tt.wantLink)
					}
				}
				if tt.wantList != "" {
					_, list := do(t, "GET", base+"/api/todos", "", "")
					if got := strings.TrimSuffix(list, "\n"); got != tt.wantList {
						t.Errorf("after the request, got todos %.300s; want %.300s", got, tt.wantList)
					}
				}
			})
		}
	})
}

// TestWrongMethodAllow checks that a 405 names the methods the path has.
func TestWrongMethodAllow(t *testing.T) {
	base := serve(t, openTestSQLite(t))
	resp, _ := do(t, "PATCH", base+"/api/todos/1", "", "")
	allow := strings.Split(resp.Header.Get("Allow"), ", ")
	for _, want := range []string{"GET", "PUT", "DELETE"} {
		if !slices.Contains(allow, want) {
			t.Errorf("got Allow %q; want it to contain %s", resp.Header.Get("Allow"), want)
		}
	}
}

func TestPage(t *testing.T) {
	base := serve(t, openTestSQLite(t))
	tests := []struct {
		path     string
		wantType string
		wantText string
	}{
		{"/", "text/html; charset=utf-8", "<title>loom todos</title>"},
		{"/static/app.js", "text/javascript; charset=utf-8", `const api = "/api/todos";`},
		{"/static/style.css", "text/css; charset=utf-8", ".todoapp"},
	}
	for _, tt := range tests {
		resp, body := do(t, "GET", base+tt.path, "", "")
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: got status %d; want 200", tt.path, resp.StatusCode)
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != tt.wantType {
			t.Errorf("GET %s: got Content-Type %q; want %q", tt.path, got, tt.wantType)
		}
		if !strings.Contains(body, tt.wantText) {
			t.Errorf("GET %s: body does not contain %q", tt.path, tt.wantText)
		}
		// The page must work offline: nothing may load from another host.
		for _, external := range []string{"http://", "https://", "//cdn"} {
			if strings.Contains(body, external) {
				t.Errorf("GET %s: body refers to an external URL (%q)", tt.path, external)
			}
		}
	}
}

// TestConcurrentWrites sends many creates, then many toggles of one todo,
// at once, over HTTP, and checks that no write was lost: every create got
// its own id and is listed, and an odd number of toggles left the todo
// completed.
func TestConcurrentWrites(t *testing.T) {
	const creates, toggles = 50, 51
	forEachBackend(t, func(t *testing.T, open func(t testing.TB) *Store) {
		base := serve(t, open(t))

		statuses := make(chan string, creates)
		ids := make(chan int64, creates)
		for i := range creates {
			go func() {
				status, todo, err := post(t.Context(), base+"/api/todos", fmt.Sprintf(`{"text":"todo %d"}`, i))
				if err != nil {
					statuses <- err.Error()
					return
				}
				ids <- todo.ID
				statuses <- status
			}()
		}
		for range creates {
			if s := <-statuses; s != "201 Created" {
				t.Errorf("create: got %s; want 201 Created", s)
			}
		}
		close(ids)
		seen := map[int64]bool{}
		for id := range ids {
			if seen[id] {
				t.Errorf("id %d given to two todos", id)
			}
			seen[id] = true
		}
		var list []Todo
		_, body := do(t, "GET", base+"/api/todos", "", "")
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list) != creates {
			t.Fatalf("got %d todos after %d concurrent creates; want %d", len(list), creates, creates)
		}

		target := list[0].ID
		for range toggles {
			go func() {
				status, _, err := post(t.Context(), fmt.Sprintf("%s/api/todos/%d/toggle", base, target), "")
				if err != nil {
					status = err.Error()
				}
				statuses <- status
			}()
		}
		for range toggles {
			if s := <-statuses; s != "200 OK" {
				t.Errorf("toggle: got %s; want 200 OK", s)
			}
		}
		var got Todo
		_, body = do(t, "GET", fmt.Sprintf("%s/api/todos/%d", base, target), "", "")
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("get: %v", err)
		}
		if !got.Completed {
			t.Errorf("after %d concurrent toggles got completed=false; want true", toggles)
		}
	})
}

// post is do for goroutines other than the test's: it returns errors
// instead of failing the test.
func post(ctx context.Context, url, body string) (string, Todo, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return "", Todo{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", Todo{}, err
	}
	defer resp.Body.Close()
	var todo Todo
	if err := json.NewDecoder(resp.Body).Decode(&todo); err != nil {
		return resp.Status, Todo{}, fmt.Errorf("%s: decode: %w", resp.Status, err)
	}
	return resp.Status, todo, nil
}

// TestExecutorFromEnv checks that LOOM_EXECUTOR moves the API onto the
// executor it names, and that a bad spec stops NewApp.
func TestExecutorFromEnv(t *testing.T) {
	store := openTestSQLite(t)

	t.Setenv("LOOM_EXECUTOR", "pool:2")
	app, err := NewApp(store)
	if err != nil {
		t.Fatalf("NewApp: %v", err)
	}
	srv := httptest.NewServer(app)
	status := "no response"
	resp, err := http.Post(srv.URL+"/api/todos", "application/json", strings.NewReader(`{"text":"on a pool"}`))
	if err == nil {
		status = resp.Status
		resp.Body.Close()
	}
	srv.Close()
	stats := app.Executors()[0].Stats()
	if err := app.Shutdown(t.Context()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if status != "201 Created" {
		t.Fatalf("POST on a pool: got %s (%v); want 201 Created", status, err)
	}
	if stats.Kind != "pool" || stats.Submitted == 0 {
		t.Errorf("got executor %q with %d tasks; want pool with the request", stats.Kind, stats.Submitted)
	}

	t.Setenv("LOOM_EXECUTOR", "pool:lots")
	if _, err := NewApp(store); err == nil || !strings.Contains(err.Error(), "LOOM_EXECUTOR") {
		t.Errorf("NewApp with a bad LOOM_EXECUTOR: got %v; want an error naming the variable", err)
	}
}

// TestOversizeChunkedBody sends a body over the limit without a
// Content-Length, so the limit is found while the JSON is read.
func TestOversizeChunkedBody(t *testing.T) {
	base := serve(t, openTestSQLite(t), web.WithBodyLimit(1024))
	body := io.MultiReader(strings.NewReader(`{"text":"`), strings.NewReader(strings.Repeat("a", 2048)), strings.NewReader(`"}`))
	req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/api/todos", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if req.ContentLength != 0 || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked oversize body: got status %d (%s), length %d; want 413 with no length", resp.StatusCode, msg, req.ContentLength)
	}
}
